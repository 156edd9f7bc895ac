"""Per-method comparison tables from the servers' logs and both sides' outputs (markdown)."""
import json, re, sys
from collections import defaultdict
QIDS = ["q1", "q2", "q3", "q4", "q5"]

def logs(tag, kind):
    out = defaultdict(list)
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

def pair(fr, rt, method):
    fl, fr_ret, rl, rt_ret = logs(fr, "llm"), logs(fr, "ret"), logs(rt, "llm"), logs(rt, "ret")
    fa, ra = fr_answers(fr), rt_answers(rt)
    rows, tot = [], defaultdict(int)
    for q in QIDS:
        fq = [r["query"] for r in fr_ret[q]]; rq = [r["query"] for r in rt_ret[q]]
        assert rq == ra[q][2], (q, rq, ra[q][2])  # trajectories agree with the server's log
        same_raw = fq == rq
        same_norm = [norm_q(x) for x in fq] == [norm_q(x) for x in rq]
        fdocs = [r["ids"] for r in fr_ret[q]]; rdocs = [r["ids"] for r in rt_ret[q]]
        rows.append(dict(q=q, fq=fq, rq=rq, same_raw=same_raw, same_norm=same_norm, same_docs=fdocs == rdocs,
                         fc=len(fl[q]), rc=len(rl[q]), fev=any(r["evidence"][1] for r in fl[q]), rev=any(r["evidence"][1] for r in rl[q]), fa=fa[q][0], ra=ra[q][0], fem=fa[q][1], rem=ra[q][1]))
        for k, v in (("fq", len(fq)), ("rq", len(rq)), ("fc", len(fl[q])), ("rc", len(rl[q])), ("fem", fa[q][1] or 0), ("rem", ra[q][1] or 0)):
            tot[k] += v
    return rows, tot

def summary(method, fr, rt):
    rows, tot = pair(fr, rt, method)
    print(f"\n#### {method}: `{fr}` vs `{rt}`\n")
    print("| q | retrieval queries FR/RT | same queries | LLM calls FR/RT | answer FR | answer RT | EM FR/RT | hop-2 doc seen FR/RT |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        same = "yes" if r["same_raw"] else ("yes mod 'Answer: '" if r["same_norm"] else "no")
        print(f"| {r['q']} | {len(r['fq'])}/{len(r['rq'])} | {same} | {r['fc']}/{r['rc']} | `{short(r['fa'], 40)}` | `{short(r['ra'], 40)}` | {r['fem']:g}/{r['rem']:g} | {'yn'[not r['fev']]}/{'yn'[not r['rev']]} |")
    print(f"| all | {tot['fq']}/{tot['rq']} | {sum(r['same_raw'] for r in rows)}/5 ({sum(r['same_norm'] for r in rows)}/5 normalised) | {tot['fc']}/{tot['rc']} | | | {tot['fem']:g}/{tot['rem']:g} | |")
    return rows

QTEXT = {json.loads(l)["id"]: json.loads(l)["question"] for l in open("fixtures/data.jsonl")}

def qshort(q, qid):
    t = QTEXT[qid]
    return "Q" + short(q[len(t):], 46) if q.startswith(t) else short(q, 46)

def appendix(method, fr, rt):
    rows, _ = pair(fr, rt, method)
    print(f"\n**{method}** (`{fr}` / `{rt}`)\n")
    print("| q | side | queries (in order) | calls | answer |")
    print("|---|---|---|---|---|")
    for r in rows:
        for side, qs, c, a in (("FR", r["fq"], r["fc"], r["fa"]), ("RT", r["rq"], r["rc"], r["ra"])):
            print(f"| {r['q']} | {side} | {' ⟶ '.join(qshort(x, r['q']) for x in qs)} | {c} | `{short(a, 50)}` |")

def ircot_order(fr, rt, q="q1"):
    fl, rl = logs(fr, "llm"), logs(rt, "llm")
    print(f"\nIRCoT paragraph order shown to the model, {q}, per call:\n")
    for side, L, pat in (("FR", fl, r"Wikipedia Title: (.*)"), ("RT", rl, r"^Title: (.*)")):
        for r in L[q]:
            user = [m["content"] for m in r["prompt"] if m["role"] == "user"][-1]
            print(f"- {side} call {r['call']}: " + ", ".join(t.strip('"') for t in re.findall(pat, user, re.M)))

if __name__ == "__main__":
    what = sys.argv[1]
    pairs = [("IRCoT", "fr-ircot", "rt-ircot"), ("Iter-RetGen", "fr-iter-retgen", "rt-iter-retgen"), ("Self-Ask", "fr-self-ask", "rt-self-ask"),
             ("IRCoT verbose-model probe", "fr-ircot-verbose", "rt-ircot-verbose"), ("Self-Ask EOS probe", "fr-self-ask-eos", "rt-self-ask-eos"),
             ("Self-Ask vLLM-stop probe", "fr-self-ask-vllm", "rt-self-ask-vllm")]
    for m, f, r in pairs:
        if what == "summary":
            summary(m, f, r)
        elif m in ("IRCoT", "Iter-RetGen", "Self-Ask", "Self-Ask vLLM-stop probe"):
            appendix(m, f, r)
    if what == "summary":
        ircot_order("fr-ircot", "rt-ircot")
