"""Compares out/reference.json, out/reference_fine.json, out/ragtrail.json and the CLI runs (out/cli/,
logs/cli-*.jsonl) per question, and prints the tables of docs/benchmarks/compressor-differential.md (markdown)
with the differing spans; also writes out/comparison.json.

    python compare.py > out/comparison.md"""
import collections, difflib, glob, json, math, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import standin  # noqa: E402

R = json.load(open(os.path.join(HERE, "out", "reference.json")))
F = json.load(open(os.path.join(HERE, "out", "reference_fine.json")))
T = json.load(open(os.path.join(HERE, "out", "ragtrail.json")))
QIDS = [q["id"] for q in R["questions"]]
QUESTION = {q["id"]: q["question"] for q in R["questions"]}
SUMMARY = {}


def ws(s):
    return " ".join(s.split())


def jaccard(a, b):
    """Multiset Jaccard of the whitespace-separated words."""
    ca, cb = collections.Counter(a.split()), collections.Counter(b.split())
    inter, union = sum((ca & cb).values()), sum((ca | cb).values())
    return 1.0 if union == 0 else inter / union


def verdict(a, b):
    if a == b:
        return "exact"
    if ws(a) == ws(b):
        return "same but whitespace"
    if "".join(a.split()) == "".join(b.split()):
        return "same but spaces"
    return f"J={jaccard(a, b):.2f}"


def spans_verdict(a, b):
    """verdict(), and where the texts differ by more than spacing, how many spans differ once whitespace is removed."""
    v = verdict(a, b)
    if v.startswith("J="):
        n = sum(op != "equal" for op, *_ in difflib.SequenceMatcher(None, "".join(a.split()), "".join(b.split()), autojunk=False).get_opcodes())
        v += f" ({n} span(s) differ besides spacing)"
    return v


def diffs(a, b, limit=4, ctx=12):
    """The first differing spans of two texts (whitespace removed, so that spacing alone is not shown)."""
    a2, b2 = "".join(a.split()), "".join(b.split())
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a2, b2, autojunk=False).get_opcodes():
        if op != "equal":
            out.append(f"`{a2[max(0, i1 - ctx):i2 + ctx]}` / `{b2[max(0, j1 - ctx):j2 + ctx]}`")
        if len(out) >= limit:
            break
    return "; ".join(out)


def nonascii(sentence):
    return any(ord(c) > 127 for c in sentence)


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print()


# ================================================================================ Selective-Context
import numpy as np  # noqa: E402

print("## Selective-Context\n")
print("Reference: the authors' package on ragtrail's own document lines (out/doc_lines.json, what the tree under test builds); ragtrail with the `<|endoftext|>` prefix the reference sends (library call).\n")
rows, summ = [], collections.Counter()
for qid in QIDS:
    sc, t = R["selective_context"][qid], T[qid]
    ref_sents = [s["sentence"] for s in sc["authors/ragtrail-input/sent"]["sentences"]]
    row = [qid, "yes" if R["doc_lines"][qid] == t["docLines"] else "NO", "yes" if ref_sents == t["scSentences"] else "NO", len(ref_sents)]
    for lvl, tl in (("sent", "sentence"), ("token", "token"), ("phrase", "phrase")):
        a, b = sc[f"authors/ragtrail-input/{lvl}"]["kept"], t["selectiveContext"][f"{tl}/eot-prefix"]
        v = spans_verdict(a, b) if lvl == "token" else verdict(a, b)
        row.append(v)
        summ[(lvl, v.split("=")[0])] += 1
        SUMMARY.setdefault("sc_" + lvl, {})[qid] = v
    rows.append(row)
table(["q", "reference fed ragtrail's lines", "same sentences", "sentences", "sentence level", "token level", "phrase level (own units vs spaCy tokens)"], rows)
SUMMARY["selective_context_levels"] = {f"{k[0]}:{k[1]}": v for k, v in summ.items()}

print("Sentence means (the unit of the sentence level): the reference's `np.mean` over all of a sentence's tokens against ragtrail's sentence mean (over every token since B3's fix), and against the mean ragtrail took before the fix (whitespace-only tokens left out).\n")
rows = []
for qid in QIDS:
    ref = R["selective_context"][qid]["authors/ragtrail-input/sent"]["sentences"]
    per = T[qid]["scPerSentence"]
    n_ws = n_diff = n_diff_old = 0
    max_tok = 0.0
    for r_, p in zip(ref, per):
        rm = sum(r_["self_info"]) / len(r_["self_info"])
        has_ws = any(re.fullmatch(r"\s*", x) for x in r_["tokens"])
        n_ws += has_ws
        n_diff += abs(rm - p["meanInfo"]) > 1e-5
        n_diff_old += abs(rm - p["meanInfoNoWhitespace"]) > 1e-5
        for a, b in zip(r_["self_info"], p["tokens"]):
            if not math.isnan(b["info"]):
                max_tok = max(max_tok, abs(a - b["info"]))
    rows.append([qid, len(ref), n_ws, n_diff, n_diff_old, f"{max_tok:.1e}"])
table(["q", "sentences", "with a whitespace-only token", "ragtrail's mean differs", "pre-fix mean (no whitespace tokens) differs", "max token self-info difference"], rows)

print("Sentence level recomputed from ragtrail's own token scores: the mean over every token (ragtrail now, the reference's `np.mean`) and over the tokens that are not whitespace only (ragtrail before B3's fix).\n")
rows = []
for qid in QIDS:
    per = T[qid]["scPerSentence"]
    ref_kept = ws(R["selective_context"][qid]["authors/ragtrail-input/sent"]["kept"])
    out = []
    for mode in ("all", "no-whitespace"):
        means = [np.mean([x["info"] for x in p["tokens"] if mode == "all" or not re.fullmatch(r"\s*", x["token"])]) for p in per]
        th = np.nanpercentile(means, 50)
        out.append(" ".join(p["sentence"] for p, m in zip(per, means) if not m < th))
    rows.append([qid, "yes" if out[0] == T[qid]["selectiveContext"]["sentence/eot-prefix"] else "NO", "yes" if ws(out[0]) == ref_kept else "NO", "yes" if ws(out[1]) == ref_kept else "NO"])
table(["q", "every token: = ragtrail's output", "every token: = the reference's (up to whitespace)", "no whitespace tokens (pre-fix rule): = the reference's"], rows)


def sc_token_level(qid, pieces):
    """ragtrail's token level recomputed from its token scores (scPerSentence: the same prefix, the same
    tokens): units are the tokens that cover text (a later byte piece of a split character is zero-width
    and no unit, as ragtrail does); pieces=True: every token is a unit, the later pieces with no text (the
    proposed fix of B5). Returns the kept text and each token's decision."""
    units, infos, owner = [], [], []
    for i, p in enumerate(T[qid]["scPerSentence"]):
        s_, first = p["sentence"], True
        for k, x in enumerate(p["tokens"]):
            if x["end"] <= x["start"] and not pieces:
                continue
            u = s_[x["start"]:x["end"]]
            if i > 0 and first:
                u = " " + u.lstrip()
            first = False
            units.append(u)
            infos.append(x["info"])
            owner.append((i, k))
    th = np.nanpercentile(infos, 50)
    keep = [not v < th for v in infos]
    return "".join(u for u, k in zip(units, keep) if k).strip(), dict(zip(owner, keep)), th


print("Token level: each side's keep decision per token (its own scores, its own 50th percentile). ragtrail's are recomputed from its token scores (checked against its output); a character split over byte tokens is one unit in ragtrail (its first piece; the later pieces are zero-width and left out), one unit per piece in the reference.\n")
rows = []
for qid in QIDS:
    ref = R["selective_context"][qid]["authors/ragtrail-input/token"]
    per = T[qid]["scPerSentence"]
    rinfo = [x for s_ in ref["sentences"] for x in s_["self_info"]]
    rth = np.nanpercentile(rinfo, 50)
    same_tokens = sum(s_["tokens"] == [x["token"] for x in p["tokens"]] for s_, p in zip(ref["sentences"], per))
    kept, dec, tth = sc_token_level(qid, False)
    kept_p, dec_p, tth_p = sc_token_level(qid, True)
    agree = total = agree_p = total_p = split = 0
    for i, (s_, p) in enumerate(zip(ref["sentences"], per)):
        split += any("\ufffd" in x for x in s_["tokens"])
        for k, a in enumerate(s_["self_info"]):
            rk = not a < rth
            if (i, k) in dec:
                total += 1
                agree += rk == dec[(i, k)]
            total_p += 1
            agree_p += rk == dec_p[(i, k)]
    n_units = len(dec)
    rows.append([qid, f"{same_tokens}/{len(per)}", split, f"{len(rinfo)} / {n_units}", f"{rth:.6f} / {tth:.6f}", "yes" if kept == T[qid]["selectiveContext"]["token/eot-prefix"] else "NO",
                 f"{agree}/{total}", f"{tth_p:.6f}", f"{agree_p}/{total_p}", spans_verdict(ref["kept"], kept_p)])
    SUMMARY.setdefault("sc_token_decisions", {})[qid] = f"{agree}/{total}"
    SUMMARY.setdefault("sc_token_units", {})[qid] = f"{len(rinfo)} / {n_units}"
table(["q", "sentences with the same tokens", "sentences with a character split over byte tokens", "token units (ref / rt)", "threshold (ref / rt)", "recomputation = ragtrail's output", "same decision (ragtrail's units)",
       "threshold, every piece a unit (B5 fix)", "same decision, every piece a unit", "kept text, every piece a unit, vs the reference"], rows)

print("Sentence level, whitespace: how each joins the kept sentences.\n")
for qid in QIDS[:1]:
    a = R["selective_context"][qid]["authors/ragtrail-input/sent"]["kept"]
    b = T[qid]["selectiveContext"]["sentence/eot-prefix"]
    print(f"- {qid} reference starts `{a[:60]!r}`; ragtrail starts `{b[:60]!r}`; reference has {a.count('  ')} double spaces, ragtrail {b.count('  ')}.\n")

print("Token level, what differs besides spacing (reference / ragtrail, whitespace removed):\n")
for qid in QIDS:
    a = R["selective_context"][qid]["authors/ragtrail-input/token"]["kept"]
    b = T[qid]["selectiveContext"]["token/eot-prefix"]
    n = sum(nonascii(s) for s in T[qid]["scSentences"])
    d = diffs(a, b)
    print(f"- {qid}: {n} sentence(s) with non-ASCII characters; {'no other difference' if not d else d}")
print()

print("Phrase-unit probe: the reference's units (spaCy tokens) fed to ragtrail's `unitSelfInfo` and `keepInformative`.\n")
rows = []
for qid in QIDS:
    ref = R["selective_context"][qid]["authors/ragtrail-input/phrase"]
    per = T[qid]["scPerSentence"]
    usable = [p["refUnitsUsable"] for p in per]
    maxd = 0.0
    for r_, p in zip(ref["sentences"], per):
        if p["refUnitsUsable"]:
            for a, b in zip(r_["unit_info"], p["refUnitInfo"]):
                if not (a is None or b is None or (isinstance(a, float) and math.isnan(a))):
                    maxd = max(maxd, abs(a - b))
    # kept decisions of the usable sentences' units under the reference's own threshold
    th = ref["threshold"]
    agree = total = 0
    for r_, p in zip(ref["sentences"], per):
        if p["refUnitsUsable"]:
            for a, b in zip(r_["unit_info"], p["refUnitInfo"]):
                total += 1
                agree += (not (a < th)) == (not (b < th))
    whole = verdict(ref["kept"], T[qid]["scProbeRefUnits"]["kept"]) if all(usable) else f"n/a ({usable.count(False)} sentence(s) whose decoded tokens are not the text)"
    rows.append([qid, f"{sum(usable)}/{len(usable)}", f"{maxd:.1e}", f"{agree}/{total}", whole])
table(["q", "sentences whose units join to the text", "max unit self-info difference", "same keep decision (reference threshold)", "kept text, whole context"], rows)

print("Phrase level as run (ragtrail's own units), and the default without the prefix, against the reference:\n")
rows = []
for qid in QIDS:
    sc, t = R["selective_context"][qid], T[qid]
    rows.append([qid, f"{jaccard(sc['authors/ragtrail-input/phrase']['kept'], t['selectiveContext']['phrase/eot-prefix']):.2f}",
                 f"{jaccard(sc['authors/ragtrail-input/phrase']['kept'], t['selectiveContext']['phrase/no-prefix']):.2f}",
                 f"{len(sc['authors/ragtrail-input/phrase']['sentences'][0]['units'])} / {len(t['scPerSentence'][0]['phraseUnits'])}",
                 verdict(sc['authors/ragtrail-input/sent']['kept'], t['selectiveContext']['sentence/no-prefix']),
                 verdict(sc['authors/ragtrail-input/token']['kept'], t['selectiveContext']['token/no-prefix'])])
table(["q", "phrase J (prefix)", "phrase J (no prefix, the default)", "units in sentence 1 (reference / ragtrail)", "sentence level, no prefix", "token level, no prefix"], rows)
for qid, r_ in zip(QIDS, rows):
    SUMMARY.setdefault("sc_phrase_J", {})[qid] = r_[1]
    SUMMARY.setdefault("sc_phrase_J_no_prefix", {})[qid] = r_[2]


def unit_self_info(units, tokens, pieces):
    """ragtrail's unitSelfInfo (src/agents/selective-context.ts) in Python: a token's -log p shared by the
    k units it overlaps, whitespace-only tokens skipped, the mean per unit (NaN for none). Zero-width tokens
    (the later byte pieces of a split character) give nothing, as in ragtrail; pieces=True: they count for
    the unit of the character before them (the proposed fix of B5; the reference counts every piece)."""
    spans, at = [], 0
    for u in units:
        spans.append((at, at + len(u)))
        at += len(u)
    got = [[] for _ in units]
    for t in tokens:
        a, b = t["start"], t["end"]
        if b <= a:
            if not pieces or a == 0:
                continue
            a = a - 1
        if re.fullmatch(r"\s*", t["token"]):
            continue
        hit = [k for k, (x, y) in enumerate(spans) if x < b and a < y]
        for k in hit:
            got[k].append(t["info"] / len(hit))
    return [float(np.nanmean(g)) if any(not math.isnan(x) for x in g) else math.nan for g in got]


def sc_phrase_level(qid, pieces):
    units, infos = [], []
    for i, p in enumerate(T[qid]["scPerSentence"]):
        own = list(p["phraseUnits"])
        info = unit_self_info(own, p["tokens"], pieces)
        if i > 0 and own:
            own[0] = " " + own[0].lstrip()
        units += own
        infos += info
    th = np.nanpercentile(infos, 50)
    keep = [not v < th for v in infos]
    return "".join(u for u, k in zip(units, keep) if k).strip(), keep


print("Phrase level recomputed from ragtrail's token scores and units (checked against its output), and with the later byte pieces of a split character counted for its unit (B5's fix):\n")
rows = []
for qid in QIDS:
    kept, keep = sc_phrase_level(qid, False)
    kept_p, keep_p = sc_phrase_level(qid, True)
    n_pieces = sum(x["end"] <= x["start"] for p in T[qid]["scPerSentence"] for x in p["tokens"])
    rows.append([qid, "yes" if kept == T[qid]["selectiveContext"]["phrase/eot-prefix"] else "NO", n_pieces, sum(a != b for a, b in zip(keep, keep_p)),
                 f"{jaccard(R['selective_context'][qid]['authors/ragtrail-input/phrase']['kept'], kept_p):.2f}"])
table(["q", "recomputation = ragtrail's output", "zero-width byte pieces", "units whose decision changes with them counted", "phrase J against the reference, with them counted"], rows)

print("Sentence-split probe (fixtures.SPLIT_PROBES): ragtrail's `scSentences` against the authors' split (their pattern, whitespace collapsed):\n")
rows = []
for text, a, b in zip(__import__("fixtures").SPLIT_PROBES, R["split_probe"], T["splitProbe"]):
    rows.append([f"`{text}`", len(a), len(b), "yes" if a == b else "NO: " + " | ".join(b)])
table(["text", "reference sentences", "ragtrail sentences", "same"], rows)
SUMMARY["split_probe_same"] = sum(a == b for a, b in zip(R["split_probe"], T["splitProbe"]))

print("Token-placement probe (fixtures.ALIGN_PROBES): each text scored through serve_lm as the compressors score it (`scoreText`).\n")
rows = []
for p in T["alignProbe"]:
    rows.append([f"`{p['text']}`", f"{p['tokens']['scored']} / {p['tokens']['exact']}", f"{p['cleanOnOwnText']}/{p['clean']}", "yes" if p["tiles"] else "NO",
                 "; ".join(f"`{a!r}` on `{b!r}`" for a, b in p["misplaced"][:3]) or "—"])
table(["text", "tokens (scored / the tokenizer's)", "clean tokens on their own text", "spans tile the text", "first misplaced (token on text)"], rows)
SUMMARY["align_probe"] = [f"{p['cleanOnOwnText']}/{p['clean']}, tokens {p['tokens']['scored']}/{p['tokens']['exact']}" for p in T["alignProbe"]]
print("`alignTokens` alone on the same tokens (decoded one by one), given the offsets each server sends: clean tokens placed on their own text (a run of \"�\" pieces and a special token are not counted).\n")
modes = list(T["alignProbe"][0].get("alignTokens", {}))
table(["text"] + modes, [[f"`{p['text'][:40]}…`"] + [p.get("alignTokens", {}).get(m, "—") for m in modes] for p in T["alignProbe"]])
SUMMARY["align_tokens_probe"] = [p.get("alignTokens") for p in T["alignProbe"]]

print("The references against each other, and FlashRAG's input format (FlashRAG's `format_reference` against ragtrail's lines joined by line breaks, as ragtrail joins them):\n")
rows = []
for qid in QIDS:
    sc = R["selective_context"][qid]
    same = all(sc[f"authors/ragtrail-input/{lvl}"]["kept"] == sc[f"flashrag/ragtrail-input/{lvl}"].get("kept") for lvl in ("phrase", "token"))
    batch = sc["flashrag/batch_run/phrase"] == sc["flashrag/flashrag-input/phrase"]["kept"]
    same_input = sc["input_flashrag"].rstrip("\n") == sc["input_ragtrail"]
    outs = [verdict(sc[f"authors/flashrag-input/{lvl}"]["kept"], sc[f"authors/ragtrail-input/{lvl}"]["kept"]) for lvl in ("sent", "phrase", "token")]
    rows.append([qid, "yes" if same else "NO", sc["flashrag/ragtrail-input/sent"].get("error", "ran")[:60], "yes" if batch else "NO",
                 f"`{sc['input_flashrag'][:28]}…` / `{sc['input_ragtrail'][:28]}…`", "yes (but FlashRAG's final line break)" if same_input else "NO", " / ".join(outs)])
    SUMMARY.setdefault("sc_flashrag_input_vs_ragtrail_input_phrase", {})[qid] = f"{jaccard(sc['authors/flashrag-input/phrase']['kept'], sc['authors/ragtrail-input/phrase']['kept']):.2f}"
table(["q", "FlashRAG's copy = authors' (phrase, token)", "FlashRAG's copy, sentence level", "batch_run = direct call", "input: FlashRAG's / ragtrail's", "the same text", "authors' output, FlashRAG input vs ragtrail input (sentence / phrase / token)"], rows)

# ==================================================================================== LongLLMLingua
print("## LongLLMLingua\n")
rows = []
for qid in QIDS:
    ref = R["longllmlingua"][qid]["authors/ragtrail-input"]
    log = ref["log"]
    rank = [i for i, _ in next(x for x in log if "rank" in x)["rank"]]
    used = next(x for x in log if "used" in x)["used"]
    win = next(x for x in log if "windows" in x)
    t = T[qid]["longllmlingua"]
    f = F[qid]
    fr = R["longllmlingua"][qid]["flashrag/batch_run"]
    rows.append([qid, rank, [d["index"] for d in t["ranked"]], [i for i, _ in f["rank_nospace"]], [i for i, _ in f["rank_space"]], used, t["kept"],
                 f"{win['target_token']:.2f} / {t['target']:.2f}", "yes" if R["longllmlingua"][qid]["flashrag-copy/ragtrail-input"]["compressed_prompt"] == ref["compressed_prompt"] else "NO",
                 "yes" if fr["context"] == T[qid]["docLines"] and fr["compressed_prompt"] == ref["compressed_prompt"] else "NO"])
    SUMMARY.setdefault("ll_ranking", {})[qid] = "same" if rank == [d["index"] for d in t["ranked"]] else f"{rank} / {[d['index'] for d in t['ranked']]}"
    SUMMARY.setdefault("ll_kept", {})[qid] = "same" if used == t["kept"] else f"{used} / {t['kept']}"
    SUMMARY.setdefault("ll_target", {})[qid] = f"{win['target_token']:.2f} / {t['target']:.2f}"
    SUMMARY.setdefault("ll_separator_explains", {})[qid] = "yes" if [i for i, _ in f["rank_nospace"]] == rank and [i for i, _ in f["rank_space"]] == [d["index"] for d in t["ranked"]] else "NO"
table(["q", "reference ranking", "ragtrail ranking", "recomputed, no separator", "recomputed, a space", "reference kept", "ragtrail kept", "target (ref / rt)", "FlashRAG's copy = authors'", "FlashRAG's batch_run: ragtrail's lines, the authors' output"], rows)

print("Coarse-step inputs: each document's length as ragtrail counts it (tokens before the question in its ranking request) against its exact token count, and the question's length.\n")
rows = []
for qid in QIDS:
    f, t = F[qid], T[qid]["longllmlingua"]
    rt_len = {d["index"]: d["tokens"] for d in t["ranked"]}
    off = [f"doc {i + 1}: {rt_len[i]} vs {n} ({f['doc_zero_width_pieces'][i]} later byte piece(s))" for i, n in enumerate(f["doc_tokens_exact"]) if rt_len[i] != n]
    SUMMARY.setdefault("ll_lengths_differ", {})[qid] = len(off)
    SUMMARY.setdefault("ll_lengths_explained_by_pieces", {})[qid] = all(n - rt_len[i] == f["doc_zero_width_pieces"][i] for i, n in enumerate(f["doc_tokens_exact"]))
    na = [i + 1 for i, line in enumerate(T[qid]["docLines"]) if nonascii(line)]
    sp = {i: p for i, p in f["rank_space"]}
    pp = [f"doc {d['index'] + 1}" for d in t["ranked"] if abs(d["perplexity"] - sp[d["index"]]) > 1e-4]
    rows.append([qid, ", ".join(off) or "all equal", ", ".join(pp) or "none", na or "none", f"{t['questionTokens']} / {f['question_tokens_alone']} / {f['question_tokens_after_space']}"])
table(["q", "document lengths that differ (ragtrail vs exact; the later pieces of its split characters)", "perplexities that differ from the recomputation with a space", "documents with non-ASCII characters", "question tokens: ragtrail / alone (reference) / after a space"], rows)

print("Fine step on the same kept documents, order and ratios (the authors' iterative_compress_prompt on ragtrail's coarse result); token decisions on the same token sequence:\n")
rows = []
for qid in QIDS:
    f = F[qid]
    k = f["keep"]
    doc = f["doc"]
    idx = [i for i, d in enumerate(doc) if d >= 0]
    agree = sum(k["reference"][i] == k["ragtrail"][i] for i in idx)
    agree_sh = sum(k["reference"][i] == k["ragtrail_shifted"][i] for i in idx)
    # tokens after the last window the reference processed: n_context - ... (kept whole by the reference)
    kept_r = sum(k["reference"][i] for i in idx)
    kept_t = sum(k["ragtrail"][i] for i in idx)
    # the trailing run the reference keeps whole
    tail = 0
    for i in reversed(idx):
        if not k["reference"][i]:
            break
        tail += 1
    fc = f["first_chunk"]
    fc_agree = sum(k["reference"][j] == kp for j, kp in zip(range(fc["lo"], fc["hi"]), fc["keep"]))
    w1 = f["window1"]
    w1_agree = sum(k["reference"][j] == kp for j, kp in zip(range(w1["lo"], w1["hi"]), w1["keep"]))
    w1_seq = [f["ids"][j] for j, kp in zip(range(w1["lo"], w1["hi"]), w1["keep"]) if kp and j < len(f["ids"])]
    w1_exact = f["reference_kept_ids"][:len(w1_seq)] == w1_seq
    rest = [i for i in idx if i >= w1["hi"]]
    rest_agree = sum(k["reference"][i] == k["ragtrail_shifted"][i] for i in rest)
    rows.append([qid, len(idx), f"{f['n_context_tokens'] + f['start']} / {f['n_window_limit']}", f"[{fc['lo']}, {fc['hi']}): {fc_agree}/{fc['hi'] - fc['lo']}",
                 f"[{w1['lo']}, {w1['hi']}): {w1_agree}/{w1['hi'] - w1['lo']}; kept ids {'identical' if w1_exact else 'DIFFER'}", f"{rest_agree}/{len(rest)}", "yes" if f["emulated_equals_ragtrail"] else "NO",
                 f"{f['zero_width_tokens']}: " + ("same text" if f["all_pieces_equals_ragtrail"] else f"{f['all_pieces_token_flips']} token(s) flip"),
                 f"{kept_r} / {kept_t}", f"{agree / len(idx):.2f}", f"{agree_sh / len(idx):.2f}", tail,
                 f"{jaccard(f['reference_fine_text'], chr(10).join(T[qid]['longllmlingua']['texts'])):.2f}"])
    SUMMARY.setdefault("ll_fine_same_decision", {})[qid] = f"{agree / len(idx):.2f}"
    SUMMARY.setdefault("ll_fine_rule_reproduced", {})[qid] = bool(f["emulated_equals_ragtrail"])
table(["q", "document tokens", "tokens with the question / 200 + start", "first chunk recomputed (shift, reference threshold): same decisions", "first window recomputed (thresholds over the shrinking loss vector)", "after the first window: shifted ragtrail rule = reference", "rule recomputed = ragtrail's output", "zero-width byte pieces: with their scores among the n (B5's fix)", "kept (ref / rt)", "same decision", "same decision, ragtrail rule shifted by one",
       "trailing tokens the reference keeps whole", "J of the texts"], rows)

print("Whole compressor (authors' compress_prompt on ragtrail's lines vs ragtrail's longllmlingua), and FlashRAG's batch_run:\n")
rows = []
for qid in QIDS:
    ref = R["longllmlingua"][qid]["authors/ragtrail-input"]["compressed_prompt"]
    ctx = ref.rsplit("\n\n" + QUESTION[qid], 1)[0]
    fr = R["longllmlingua"][qid]["flashrag/batch_run"]
    SUMMARY.setdefault("ll_whole_J", {})[qid] = verdict(ctx, T[qid]["longllmlingua"]["compressed"])
    rows.append([qid, verdict(ctx, T[qid]["longllmlingua"]["compressed"]), [i for i, _ in next(x for x in fr["log"] if "rank" in x)["rank"]], next(x for x in fr["log"] if "used" in x)["used"],
                 "yes" if ref.endswith("\n\n" + QUESTION[qid]) else "no"])
table(["q", "compressed context", "FlashRAG batch_run ranking (its own format)", "FlashRAG kept", "reference appends the question"], rows)

# ========================================================================================== RECOMP
print("## RECOMP\n")
cli_prompts = {}
logf = os.path.join(HERE, "logs", "cli-recomp.jsonl")
if os.path.exists(logf):
    for line in open(logf):
        rec = json.loads(line)
        if rec["kind"] == "completion":
            for qid in QIDS:
                if rec["prompt"].startswith(f"Question: {QUESTION[qid]}\n"):
                    cli_prompts[qid] = rec
rows = []
for qid in QIDS:
    fr = R["recomp_abstractive"][qid]
    SUMMARY.setdefault("recomp_prompt_same", {})[qid] = fr == T[qid]["recompTrainedPrompt"]
    rows.append([qid, "yes" if fr == T[qid]["recompTrainedPrompt"] else "NO", "yes" if cli_prompts.get(qid, {}).get("prompt") == fr else "NO (not captured)" if qid not in cli_prompts else "NO",
                 cli_prompts.get(qid, {}).get("max_tokens"), cli_prompts.get(qid, {}).get("temperature")])
table(["q", "FlashRAG's T5 input = recompTrainedPrompt", "= the prompt the CLI run sent (--aux-llm, completion mode)", "max_tokens sent", "temperature sent"], rows)

rows = []
for qid in QIDS:
    frs = R["recomp_extractive"]["sentences"][qid]
    rts = T[qid]["recompSentences"]
    row = [qid, f"{len(frs)} / {len(rts)}"]
    for cfg in ("unit/top2", "unit/top5", "raw/top2", "raw/top5"):
        row.append(verdict(R["recomp_extractive"][cfg]["kept"][qid], T[qid]["recompExtract"][cfg]))
    for cfg in ("unit/top2", "unit/top5", "raw/top2", "raw/top5"):
        row.append(verdict(R["recomp_extractive"][cfg]["kept"][qid], T[qid]["recompRuleOnFlashragSentences"][cfg]))
    rows.append(row)
    SUMMARY.setdefault("recomp_rule_on_flashrag_sentences", {})[qid] = row[6:10].count("exact")
table(["q", "sentences (FlashRAG / ragtrail)", "kept, unit top2", "unit top5", "raw top2", "raw top5", "ragtrail's rule on FlashRAG's sentences: unit top2", "unit top5", "raw top2", "raw top5"], rows)
print("FlashRAG's sentences of q1:\n")
for s in R["recomp_extractive"]["sentences"]["q1"]:
    print(f"- {s[:100]}{'…' if len(s) > 100 else ''} ({len(s)} chars)")
print()

# ======================================================================================= CLI runs
print("## The agents through the CLI (defaults)\n")
rows = []
for agent, key in (("selective-context", lambda q: T[q]["selectiveContext"]["phrase/no-prefix"]), ("longllmlingua", lambda q: T[q]["longllmlingua"]["compressed"]),
                   ("recomp", lambda q: "A fixed summary."), ("recomp-extractive", lambda q: T[q]["recompExtract"]["hash512/top2"])):
    path = glob.glob(os.path.join(HERE, "out", "cli", agent, "**", "trajectories.jsonl"), recursive=True)
    if not path:
        rows.append([agent, "no run"] + [""] * 2)
        continue
    summaries = {}
    for line in open(path[0]):
        tr = json.loads(line)
        qid = tr["id"]
        step = next((s for s in tr.get("steps", []) if s.get("action", {}).get("type") == "search"), {})
        summaries[qid] = step.get("summary")
    prompts = []
    logf = os.path.join(HERE, "logs", f"cli-{agent}.jsonl")
    if os.path.exists(logf):
        prompts = [json.loads(x) for x in open(logf)]
    chats = [p for p in prompts if p["kind"] == "chat"]
    same = sum(summaries.get(q) == key(q) for q in QIDS)
    shown = sum(any((summaries.get(q) or "\0") in m["content"] for c in chats for m in c["messages"]) for q in QIDS)
    rows.append([agent, f"{len(summaries)}", f"{same}/5", f"{shown}/5"])
    SUMMARY.setdefault("cli", {})[agent] = f"{same}/5, {shown}/5"
table(["agent", "trajectories", "summary = the library call", "answer prompt shows it"], rows)

SUMMARY["ragtrail"] = T.get("ragtrail")
json.dump({"summary": SUMMARY}, open(os.path.join(HERE, "out", "comparison.json"), "w"), indent=1, ensure_ascii=False)
