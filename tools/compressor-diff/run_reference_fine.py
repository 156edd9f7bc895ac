"""LongLLMLingua's fine step, isolated: after run_reference.py and ragtrail_side.ts, for each question
  - the authors' `PromptCompressor.iterative_compress_prompt` (unmodified) on ragtrail's coarse result:
    the question, then the documents ragtrail kept, in ragtrail's order, with ragtrail's target and
    per-document ratio offsets (the arguments compress_prompt passes it after its own coarse step);
  - which context tokens each side keeps, on the same token sequence: the reference's kept ids are a
    subsequence of the context's ids (aligned back with difflib); ragtrail's rule (fineCompress in
    src/agents/longllmlingua.ts) is recomputed here from the model's log-probabilities, its tokens placed as
    serve_lm's text offsets place them, checked against the text ragtrail returned; once more with every
    byte piece's score among the n (as the reference counts them); and once more with the reference's
    shift (a token decided by the score of the token after it);
  - the reference's coarse ranking recomputed with ragtrail's separator (a space between the document and
    the question) and with none, to show which one reproduces which ranking.
Writes out/reference_fine.json.

    python run_reference_fine.py"""
import difflib, json, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refenv import HERE, MODEL, QUESTIONS  # noqa: E402  (installs the stubs)

import llmlingua  # noqa: E402
import torch  # noqa: E402

RESTRICTION = " We can get the answer to this question in the given documents."
R = json.load(open(os.path.join(HERE, "out", "reference.json")))
T = json.load(open(os.path.join(HERE, "out", "ragtrail.json")))
pc = llmlingua.PromptCompressor(model_name=MODEL, device_map="cpu")
tok, model = pc.tokenizer, pc.model


def logprobs(ids):
    """log p of each token given those before it (None for the first)."""
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
    return [None] + [float(lp[i - 1, ids[i]]) for i in range(1, len(ids))]


def rank(question, lines, sep):
    """Mean -log p of the question and the restrictive statement after each document (joined by `sep`)."""
    out = []
    for i, d in enumerate(lines):
        n_doc = len(tok(d, add_special_tokens=False).input_ids)
        ids = tok(d + sep + question + RESTRICTION, add_special_tokens=False).input_ids
        lp = logprobs(ids)[n_doc:]
        out.append((i, -sum(lp) / len(lp)))
    return sorted(out, key=lambda x: x[1])


def server_spans(ids, text):
    """Each token's characters as ragtrail places them since B1's fix: from serve_lm's text_offset (the
    length of the decoded prefix), so the first byte token of a character split over several covers the
    character and the later ones are zero-width."""
    offs = [len(tok.decode(ids[:i])) for i in range(len(ids))] + [len(text)]
    return [(min(offs[i], len(text)), max(min(offs[i], len(text)), min(offs[i + 1], len(text)))) for i in range(len(ids))]


def ragtrail_rule(question, texts, ratios, shift=False, pieces="ragtrail"):
    """ragtrail's fine step (fineCompress in src/agents/longllmlingua.ts) recomputed from the model: per
    token, contrast = -log p alone - (-log p after the question); a document at ratio r keeps its tokens
    above the floor(n*r)-th highest contrast of the n document tokens. Tokens are placed as ragtrail places
    them (server_spans). pieces="ragtrail": as ragtrail does, a zero-width token (a later byte piece of a
    split character) is no token at all: its score is not among the n; pieces="all": every token's score
    is among the n, as in the reference (the proposed fix of B5); in both a character is kept with its
    first piece. With shift, token i is decided by token i+1's contrast (the last one kept)."""
    context = "\n\n".join(texts)
    enc = tok(context, add_special_tokens=False, return_offsets_mapping=True)
    ids, offs = enc.input_ids, enc.offset_mapping
    lead = tok(question + "\n\n", add_special_tokens=False).input_ids
    full = tok(question + "\n\n" + context, add_special_tokens=False).input_ids
    assert full == lead + ids, "the context does not tokenize the same after the question"
    alone = logprobs(ids)
    after = logprobs(full)[len(lead):]
    contrast = [math.nan if a is None else (-a) - (-c) for a, c in zip(alone, after)]
    if shift:
        contrast = contrast[1:] + [math.inf]
    spans, at = [], 0
    for t in texts:
        spans.append((at, at + len(t)))
        at += len(t) + 2
    # a token's document by its characters (HF's offsets give every byte piece its character's span)
    doc = [next((k for k, (s, e) in enumerate(spans) if s < oe and os_ < e), -1) for os_, oe in offs]
    placed = server_spans(ids, context)
    width = [e > s for s, e in placed]
    counted = [d >= 0 and (w or pieces == "all") for d, w in zip(doc, width)]
    scores = sorted([c for c, n in zip(contrast, counted) if n and not math.isnan(c)], reverse=True)

    def threshold(r):
        if r >= 1 or not scores:
            return -math.inf
        return scores[max(0, min(len(scores) - 1, math.floor(len(scores) * r) - 1))]

    th = [threshold(r) for r in ratios]
    own = [d >= 0 and (math.isnan(c) or c > th[d]) for c, d in zip(contrast, doc)]
    # a later piece goes with its character's first piece (its text is there)
    keep, first = [], None
    for i, (k, w) in enumerate(zip(own, width)):
        if w or first is None:
            first = i
        keep.append(own[first])
    out = []
    for k in range(len(texts)):
        out.append("".join(context[max(s, spans[k][0]):min(e, spans[k][1])] for (s, e), kp, d, w in zip(placed, keep, doc, width) if kp and w and d == k).strip())
    return {"ids": ids, "keep": keep, "doc": doc, "texts": out, "contrast": contrast if not shift else None, "zero_width": width.count(False), "counted": sum(counted)}


def kept_mask(ids, kept_ids):
    """Positions of `ids` that the subsequence `kept_ids` keeps (difflib's matching blocks)."""
    mask = [False] * len(ids)
    for a, b, n in difflib.SequenceMatcher(None, ids, kept_ids, autojunk=False).get_matching_blocks():
        for i in range(n):
            mask[a + i] = True
    return mask


out = {}
for q in QUESTIONS:
    qid, question = q["id"], q["question"]
    t = T[qid]["longllmlingua"]
    lines = T[qid]["docLines"]
    texts = [lines[i] for i in t["kept"]]
    tau = t["target"] / (sum(d["tokens"] + 2 for d in t["ranked"] if d["index"] in t["kept"]) + 1)
    deltas = [r - tau for r in t["ratios"]]
    start = pc.get_prefix_length(question + "\n\n", texts[0])
    ids, _ = pc.iterative_compress_prompt([question] + texts, t["target"], iterative_size=200, keep_split=False, start=start,
                                          dynamic_ratio=deltas, condition_compare=True, segments_info=[])
    ref_text = tok.batch_decode(ids)[0]
    rt = ragtrail_rule(question, texts, t["ratios"])
    rt_all = ragtrail_rule(question, texts, t["ratios"], pieces="all")
    sh = ragtrail_rule(question, texts, t["ratios"], shift=True)
    ref_keep = kept_mask(rt["ids"], ids[0].tolist())
    # The reference's first chunk, recomputed: context tokens [c_end - size, c_end), each decided by the
    # contrast of the token after it, against the chunk ratio's threshold over the contrasts of all context
    # tokens but the first (separators included), as get_compressed_input does in the first window.
    windows = pc.get_dynamic_compression_ratio([question] + texts, t["target"], 200, deltas, start)
    size, ratio = windows[0][0]
    n_full = start + len(rt["ids"])
    c_end = min(200 + start, n_full) - 200 + size - start
    lo, hi = max(0, c_end - size), c_end
    contrast = rt["contrast"]
    vals = sorted(contrast[1:], reverse=True)
    th = -math.inf if ratio >= 1 else vals[max(0, min(len(vals) - 1, int(len(vals) * ratio) - 1))]
    first_chunk = {"lo": lo, "hi": hi, "ratio": ratio, "keep": [contrast[j + 1] > th if j + 1 < len(contrast) else True for j in range(lo, hi)]}
    # The whole first window, recomputed the same way: its chunks follow one another on the uncompressed
    # positions; each chunk's threshold is taken over the decision values still in the reference's loss
    # vector (those of the tokens dropped by earlier chunks are gone).
    decide = {j: contrast[j + 1] for j in range(len(contrast) - 1)}
    pool = dict(decide)
    w_keep, at = {}, c_end - size
    for size_m, ratio_m in windows[0]:
        vals = sorted(pool.values(), reverse=True)
        th_m = -math.inf if ratio_m >= 1 else vals[max(0, min(len(vals) - 1, int(len(vals) * ratio_m) - 1))]
        for j in range(max(0, at), at + size_m):
            if j in decide:
                w_keep[j] = decide[j] > th_m
                if not w_keep[j]:
                    pool.pop(j)
        at += size_m
    window1 = {"lo": max(0, c_end - size), "hi": at, "keep": [w_keep.get(j, True) for j in range(max(0, c_end - size), at)]}
    out[qid] = {
        "reference_fine_text": ref_text, "start": start, "deltas": deltas,
        "n_context_tokens": len(rt["ids"]), "n_window_limit": 200 + start,
        "emulated_ragtrail_texts": rt["texts"], "emulated_equals_ragtrail": rt["texts"] == t["texts"],
        "zero_width_tokens": rt["zero_width"], "scores_counted": {"ragtrail": rt["counted"], "all": rt_all["counted"]},
        "all_pieces_texts": rt_all["texts"], "all_pieces_equals_ragtrail": rt_all["texts"] == t["texts"],
        "all_pieces_token_flips": sum(a != b for a, b, d in zip(rt["keep"], rt_all["keep"], rt["doc"]) if d >= 0),
        "keep": {"reference": ref_keep, "ragtrail": rt["keep"], "ragtrail_shifted": sh["keep"]}, "doc": rt["doc"],
        "tokens": [tok.decode([i]) for i in rt["ids"]], "windows": windows, "first_chunk": first_chunk, "window1": window1,
        "ids": rt["ids"], "reference_kept_ids": ids[0].tolist(),
        "doc_tokens_exact": [len(tok(d, add_special_tokens=False).input_ids) for d in lines],
        # the later byte pieces of split characters in each line (zero-width where ragtrail places them)
        "doc_zero_width_pieces": [sum(e <= s_ for s_, e in server_spans(tok(d, add_special_tokens=False).input_ids, d)) for d in lines],
        "question_tokens_alone": len(tok(question, add_special_tokens=False).input_ids),
        "question_tokens_after_space": len(tok(" " + question, add_special_tokens=False).input_ids),
        "rank_space": rank(question, lines, " "), "rank_nospace": rank(question, lines, ""),
    }
json.dump(out, open(os.path.join(HERE, "out", "reference_fine.json"), "w"), indent=1, ensure_ascii=False)
print("wrote out/reference_fine.json", file=sys.stderr)
