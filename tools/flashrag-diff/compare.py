"""Per-method comparison tables from the servers' logs and both sides' outputs (markdown)."""
import json, math, os, re, sys
from collections import Counter, defaultdict
QIDS = ["q1", "q2", "q3", "q4", "q5"]
DECISION = ("rt-route-adaptive", "rt-route-skr")  # ragtrail's routing calls (FlashRAG's judger is no LLM call)

def logs(tag, kind):
    out = defaultdict(list)
    if not os.path.exists(f"logs/{tag}.{kind}.jsonl"):  # a run that made no request of that kind
        return out
    for l in open(f"logs/{tag}.{kind}.jsonl"):
        r = json.loads(l); out[r["qid"]].append(r)
    return out

def fr_answers(tag):
    d = json.load(open(f"fr-out/{tag}.json"))
    return {it["id"]: (it["pred"], (it["metric_score"] or {}).get("em")) for it in d["items"]}

def rt_answers(tag):
    out = {}
    for l in open(f"rt-out/{tag}/trajectories.jsonl"):
        t = json.loads(l)
        out[t["id"]] = (t["prediction"], t["metrics"]["em"], [s["action"].get("query") for s in t["steps"] if s["action"]["type"] == "search"])
    return out

def norm_q(q):  # iter-retgen: ragtrail's generation carries "Answer: "
    return q.replace(" Answer: ", " ")

def short(s, n=60):
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[: n - 1] + "…"

def flare_norm(qs, qid, side):
    """FLARE: ragtrail's first search is the question (FlashRAG has none); a masked token is a space in
    ragtrail's query and nothing in FlashRAG's (tokenizer.decode of the kept ids): compared without both."""
    if side == "rt" and qs and qs[0] == QTEXT[qid]:
        qs = qs[1:]
    return [re.sub(r"\s+", "", x) for x in qs]

NORMS = {"FLARE": (flare_norm, "after RT's question search, spaces aside")}

def pair(fr, rt, method):
    fl, fr_ret, rl, rt_ret = logs(fr, "llm"), logs(fr, "ret"), logs(rt, "llm"), logs(rt, "ret")
    fa, ra = fr_answers(fr), rt_answers(rt)
    norm = next((f for k, (f, _) in NORMS.items() if method.startswith(k)), lambda qs, qid, side: [norm_q(x) for x in qs])
    rows, tot = [], defaultdict(int)
    for q in QIDS:
        fq = [r["query"] for r in fr_ret[q]]; rq = [r["query"] for r in rt_ret[q]]
        assert rq == ra[q][2], (q, rq, ra[q][2])  # trajectories agree with the server's log
        same_raw = fq == rq
        same_norm = norm(fq, q, "fr") == norm(rq, q, "rt")
        fdocs = [r["ids"] for r in fr_ret[q]]; rdocs = [r["ids"] for r in rt_ret[q]]
        fc = [r for r in fl[q] if r.get("kind") not in DECISION]; rc = [r for r in rl[q] if r.get("kind") not in DECISION]
        rows.append(dict(q=q, fq=fq, rq=rq, same_raw=same_raw, same_norm=same_norm, same_docs=fdocs == rdocs,
                         fc=len(fc), rc=len(rc), rdec=len(rl[q]) - len(rc), fev=any(r["evidence"][1] for r in fl[q]), rev=any(r["evidence"][1] for r in rl[q]), fa=fa[q][0], ra=ra[q][0], fem=fa[q][1], rem=ra[q][1]))
        for k, v in (("fq", len(fq)), ("rq", len(rq)), ("fc", len(fc)), ("rc", len(rc)), ("rdec", len(rl[q]) - len(rc)), ("fem", fa[q][1] or 0), ("rem", ra[q][1] or 0)):
            tot[k] += v
    return rows, tot

def summary(method, fr, rt):
    rows, tot = pair(fr, rt, method)
    label = next((l for k, (_, l) in NORMS.items() if method.startswith(k)), "'Answer: '")
    print(f"\n#### {method}: `{fr}` vs `{rt}`\n")
    if tot["rdec"]:
        print(f"(model calls exclude ragtrail's routing decision, one per question: {tot['rdec']} in all; FlashRAG's judger is a stubbed classifier)\n")
    print("| q | retrieval queries FR/RT | same queries | LLM calls FR/RT | answer FR | answer RT | EM FR/RT | hop-2 doc seen FR/RT |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        same = "yes" if r["same_raw"] else (f"yes {label}" if label.startswith("after") and r["same_norm"] else f"yes mod {label}" if r["same_norm"] else "no")
        print(f"| {r['q']} | {len(r['fq'])}/{len(r['rq'])} | {same} | {r['fc']}/{r['rc']} | `{short(r['fa'], 40)}` | `{short(r['ra'], 40)}` | {r['fem']:g}/{r['rem']:g} | {'yn'[not r['fev']]}/{'yn'[not r['rev']]} |")
    print(f"| all | {tot['fq']}/{tot['rq']} | {sum(r['same_raw'] for r in rows)}/5 ({sum(r['same_norm'] for r in rows)}/5 normalised) | {tot['fc']}/{tot['rc']} ({sum(r['fc'] == r['rc'] for r in rows)}/5 same) | | | {tot['fem']:g}/{tot['rem']:g} ({sum(r['fa'] == r['ra'] for r in rows)}/5 same) | |")
    return rows

QTEXT = {json.loads(l)["id"]: json.loads(l)["question"] for l in open("fixtures/data.jsonl")}

def qshort(q, qid):
    t = QTEXT[qid]
    return "Q" + short(q[len(t):], 46) if q.startswith(t) else short(q, 46)

def routes(fr, rt):
    """Per question, the decision each side took: FlashRAG's (stubbed) judge_result, ragtrail's router reply."""
    fj = {it["id"]: it.get("judge_result") for it in json.load(open(f"fr-out/{fr}.json"))["items"]}
    rl = logs(rt, "llm")
    rj = {q: next((r["text"] for r in rl[q] if r.get("kind") in DECISION), None) for q in QIDS}
    return {q: f"{fj[q]} / {rj[q]}" for q in QIDS if rj[q] is not None}

def appendix(method, fr, rt):
    rows, _ = pair(fr, rt, method)
    rts = routes(fr, rt)
    print(f"\n**{method}** (`{fr}` / `{rt}`{'; decision FlashRAG / ragtrail after the question' if rts else ''})\n")
    print("| q | side | queries (in order) | calls | answer |")
    print("|---|---|---|---|---|")
    for r in rows:
        for side, qs, c, a in (("FR", r["fq"], r["fc"], r["fa"]), ("RT", r["rq"], r["rc"], r["ra"])):
            if side == "RT" and r["rdec"]:
                c = f"{c} + {r['rdec']} decision"
            q = f"{r['q']} ({rts[r['q']]})" if r["q"] in rts else r["q"]
            print(f"| {q} | {side} | {' ⟶ '.join(qshort(x, r['q']) for x in qs) or '(none)'} | {c} | `{short(a, 50)}` |")

def sure_detail(fr, rt):
    """SuRe's candidates and scores on both sides (FlashRAG's output fields; ragtrail's search-step summary)."""
    d = {it["id"]: it for it in json.load(open(f"fr-out/{fr}.json"))["items"]}
    rts = {}
    for l in open(f"rt-out/{rt}/trajectories.jsonl"):
        t = json.loads(l)
        rts[t["id"]] = next((s["summary"] for s in t["steps"] if s.get("summary")), "")
    order = ["cand", "sum", "val", "rank", "rag"]

    def kinds(tag, q):  # e.g. "cand×1 sum×2 val×2 rank×2"
        n = Counter(str(r["kind"]).split("-")[-1] for r in logs(tag, "llm")[q])
        return " ".join(f"{k}×{n[k]}" for k in sorted(n, key=lambda k: order.index(k) if k in order else 9))
    print(f"\nSuRe per question (`{fr}` / `{rt}`): FlashRAG's candidates · validity · ranking scores, ragtrail's record, the calls by kind\n")
    print("| q | FlashRAG | FR calls | ragtrail | RT calls |")
    print("|---|---|---|---|---|")
    for q in QIDS:
        it = d[q]
        fr_s = f"{it.get('candidates')} · {it.get('val_scores')} · {it.get('ranking_scores')} → `{it['pred']}`"
        print(f"| {q} | {fr_s} | {kinds(fr, q)} | {short(rts[q], 200)} | {kinds(rt, q)} |")

def flare_detail(fr, rts):
    """FLARE per question: each side's queries, calls and answer; FlashRAG's per-iteration judgement."""
    d = {it["id"]: it for it in json.load(open(f"fr-out/{fr}.json"))["items"]}
    fret, fl = logs(fr, "ret"), logs(fr, "llm")
    print(f"\nFLARE per question (`{fr}` / " + " / ".join(f"`{t}`" for t in rts) + "): queries in order · calls · answer; "
          "FlashRAG's iterations (✓ sentence kept as generated, ✗ searched and regenerated)\n")
    print("| q | FlashRAG | " + " | ".join(f"ragtrail `{t}`" for t in rts) + " |")
    print("|---|---|" + "---|" * len(rts))
    for q in QIDS:
        it = d[q]["intermediate"]
        marks = "".join("✓" if it[f"judge_result_iter{i}"] else "✗" for i in range(10) if f"judge_result_iter{i}" in it)
        cells = [f"{' ⟶ '.join(qshort(r['query'], q) for r in fret[q]) or '(none)'} · {len(fl[q])} ({marks}) · `{short(d[q]['pred'], 60)}`"]
        for t in rts:
            ra = rt_answers(t)[q]
            cells.append(f"{' ⟶ '.join(qshort(x, q) for x in ra[2]) or '(none)'} · {len(logs(t, 'llm')[q])} · `{ra[0]}`")
        print(f"| {q} | " + " | ".join(cells) + " |")

def selfrag_detail(fr, au, rt, scores_tag):
    """Self-RAG per question: the retrieval decision, each passage's score on every side, the answers.
    ragtrail's scores: its scorePassage on the replies of the driver's run (identical to the CLI run)."""
    fd = {it["id"]: it for it in json.load(open(f"fr-out/{fr}.json"))["items"]}
    ad = {it["id"]: it for it in json.load(open(f"fr-out/{au}.json"))["items"]}
    rs = json.load(open(f"rt-out/{scores_tag}/selfrag_scores.json"))
    ra = rt_answers(rt)
    fpid = {q: [r.get("passage") for r in logs(fr, "llm")[q] if r.get("kind") == "fr-selfrag-passage"] for q in QIDS}
    print(f"\nSelf-RAG per question (FlashRAG `{fr}`, the authors' `{au}`, ragtrail `{rt}`): decision; per passage the score "
          "FR / RT / AU (= where equal to 1e-6); answer\n")
    print("| q | decision FR / RT / AU | passage scores FR / RT / AU | answer FR / RT / AU |")
    print("|---|---|---|---|")
    for q in QIDS:
        dec = rs[q]["decision"]
        lr = math.log(dec["pRetrieve"]) / (math.log(dec["pRetrieve"]) + math.log(dec["pNoRetrieve"]))
        dcell = (f"{'yes' if fd[q]['retrieval_flag'] else 'no'} / {'yes' if dec['retrieve'] else 'no'} (P ratio {dec['ratio']:.3f}) / "
                 f"{'yes' if ad[q]['retrieval_flag'] else 'no'} (log-prob ratio {lr:.3f})")
        fs = {fpid[q][int(i)]: v["score"] for i, v in ((k.split("_")[1], v) for k, v in (fd[q].get("critic_result") or {}).items())}
        rsc = {p["passage"]: p["score"] for p in rs[q]["passages"]}
        asc = {p["passage"]: p["score"] for p in ad[q]["passage_scores"]}
        cells = []
        for pid in dict.fromkeys([*fs, *rsc, *asc]):
            vals = [fs.get(pid), rsc.get(pid), asc.get(pid)]
            first = next(v for v in vals if v is not None)
            shown = [("–" if v is None else f"{v:.4f}" if v is first or abs(v - first) > 1e-6 else "=") for v in vals]
            cells.append(f"{pid} {' / '.join(shown)}")
        print(f"| {q} | {dcell} | {'; '.join(cells) or '(none)'} | `{fd[q]['pred']}` / `{ra[q][0]}` / `{ad[q]['pred']}` |")

def selfrag_scores(tag):
    """Per question, passage id -> final score: FlashRAG's critic_result, the authors' results, ragtrail's driver file."""
    if tag.startswith("rt-"):
        return {q: {p["passage"]: p["score"] for p in v["passages"]} for q, v in json.load(open(f"rt-out/{tag}/selfrag_scores.json")).items()}
    items = json.load(open(f"fr-out/{tag}.json"))["items"]
    if tag.startswith("au-"):
        return {it["id"]: {p["passage"]: p["score"] for p in it["passage_scores"]} for it in items}
    L = logs(tag, "llm")
    out = {}
    for it in items:
        pids = [r["passage"] for r in L[it["id"]] if str(r.get("kind")).endswith("passage")]
        out[it["id"]] = {pids[int(k.split("_")[1])]: v["score"] for k, v in (it.get("critic_result") or {}).items()}
    return out

def selfrag_equal(pairs):
    """How many passages scored on both sides agree to 1e-6, and which do not."""
    print("\nSelf-RAG passage scores, pairwise (scored on both sides; equal to 1e-6):\n")
    for a, b in pairs:
        A, B = selfrag_scores(a), selfrag_scores(b)
        both = [(q, p) for q in QIDS for p in A.get(q, {}) if p in B.get(q, {})]
        diff = [f"{q} {p} {A[q][p]:.6f} vs {B[q][p]:.6f}" for q, p in both if abs(A[q][p] - B[q][p]) > 1e-6]
        exact = sum(A[q][p] == B[q][p] for q, p in both)
        print(f"- `{a}` / `{b}`: {len(both) - len(diff)} of {len(both)} equal ({exact} bit-identical)" + (f"; differ: {'; '.join(diff)}" if diff else ""))

def fr_probe(tag):
    """A FlashRAG-only probe: its answers, whether the second-hop passage reached the model, its error."""
    d = json.load(open(f"fr-out/{tag}.json"))
    L, R = logs(tag, "llm"), logs(tag, "ret")
    ans = {it["id"]: it["pred"] for it in d["items"]}
    print(f"\n`{tag}`: " + "; ".join(f"{q} `{short(str(ans.get(q)), 30)}` retrievals {len(R[q])}, calls {' '.join(r['kind'] for r in L[q]) or 0}, hop-2 doc seen {'yn'[not any(r['evidence'][1] for r in L[q])]}" for q in QIDS)
          + (f"; error: `{d['error'].strip().splitlines()[-1]}`" if d.get("error") else ""))

def ircot_order(fr, rt, q="q1"):
    fl, rl = logs(fr, "llm"), logs(rt, "llm")
    print(f"\nIRCoT paragraph order shown to the model, {q}, per call:\n")
    for side, L, pat in (("FR", fl, r"Wikipedia Title: (.*)"), ("RT", rl, r"^Title: (.*)")):
        for r in L[q]:
            user = [m["content"] for m in r["prompt"] if m["role"] == "user"][-1]
            print(f"- {side} call {r['call']}: " + ", ".join(t.strip('"') for t in re.findall(pat, user, re.M)))

if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "summary"
    pairs = [("IRCoT", "fr-ircot", "rt-ircot"), ("Iter-RetGen", "fr-iter-retgen", "rt-iter-retgen"), ("Self-Ask", "fr-self-ask", "rt-self-ask"),
             ("IRCoT verbose-model probe", "fr-ircot-verbose", "rt-ircot-verbose"), ("Self-Ask EOS probe", "fr-self-ask-eos", "rt-self-ask-eos"),
             ("Self-Ask vLLM-stop probe", "fr-self-ask-vllm", "rt-self-ask-vllm"),
             ("SuRe", "fr-sure", "rt-sure"), ("Adaptive-RAG", "fr-adaptive-rag", "rt-adaptive-rag"), ("SKR", "fr-skr", "rt-skr"),
             ("SuRe inline-candidates probe", "fr-sure-inline", "rt-sure-inline"), ("SuRe bare-answer probe", "fr-sure-bare", "rt-sure-bare"),
             ("FLARE, ragtrail's defaults", "fr-flare", "rt-flare"), ("FLARE, ragtrail with FlashRAG's settings", "fr-flare", "rt-flare-fr"),
             ("Self-RAG", "fr-self-rag", "rt-self-rag"), ("Self-RAG, the authors' scoring vs ragtrail", "au-self-rag", "rt-self-rag"),
             ("Self-RAG probe: ragtrail with the log-prob-ratio decision vs the authors", "au-self-rag", "rt-self-rag-logratio"),
             ("Self-RAG probe: ragtrail with top-5 log-probs vs FlashRAG", "fr-self-rag", "rt-self-rag-top5")]
    for m, f, r in pairs:
        if what == "summary":
            summary(m, f, r)
        elif m in ("IRCoT", "Iter-RetGen", "Self-Ask", "Self-Ask vLLM-stop probe", "Adaptive-RAG", "SKR", "Self-RAG",
                   "Self-RAG, the authors' scoring vs ragtrail"):
            appendix(m, f, r)
    if what == "summary":
        ircot_order("fr-ircot", "rt-ircot")
        for f, r in (("fr-sure", "rt-sure"), ("fr-sure-inline", "rt-sure-inline"), ("fr-sure-bare", "rt-sure-bare")):
            sure_detail(f, r)
        print("\nFlashRAG-only SKR probes:")
        for tag in ("fr-skr-per-item", "fr-skr-rerun"):
            fr_probe(tag)
        flare_detail("fr-flare", ["rt-flare", "rt-flare-fr"])
        selfrag_detail("fr-self-rag", "au-self-rag", "rt-self-rag", "rt-self-rag-scores")
        selfrag_equal([("fr-self-rag", "rt-self-rag-scores"), ("au-self-rag", "rt-self-rag-scores"), ("fr-self-rag", "au-self-rag"),
                       ("fr-self-rag", "rt-self-rag-top5"), ("au-self-rag", "rt-self-rag-logratio")])
    elif what == "appendix":
        flare_detail("fr-flare", ["rt-flare", "rt-flare-fr"])
