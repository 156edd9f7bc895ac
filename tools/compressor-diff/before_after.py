"""The before → after table of docs/benchmarks/compressor-differential.md: the metrics compare.py records
in out/comparison.json, from a run on the tree before ragtrail's fixes of B1–B4 and one after.

    RAGTRAIL=<checkout of 3f6d587> ./run_all.sh && cp -r out out-before   # before (the parent of 4789430)
    ./run_all.sh                                                           # after (this tree)
    python before_after.py out-before/comparison.json out/comparison.json"""
import json, sys

before, after = (json.load(open(p))["summary"] for p in sys.argv[1:3])
QIDS = ["q1", "q2", "q3", "q4", "q5"]
PER_Q = [
    ("sc_sent", "Selective-Context, sentence level: kept text"),
    ("sc_token", "Selective-Context, token level: kept text"),
    ("sc_token_units", "token level: units (reference / ragtrail)"),
    ("sc_token_decisions", "token level: same keep decision (ragtrail's units)"),
    ("sc_phrase_J", "phrase level, J (prefix)"),
    ("sc_phrase_J_no_prefix", "phrase level, J (no prefix, the default)"),
    ("sc_flashrag_input_vs_ragtrail_input_phrase", "the authors' phrase output, FlashRAG's lines vs ragtrail's lines (J)"),
    ("ll_ranking", "LongLLMLingua ranking (reference / ragtrail)"),
    ("ll_separator_explains", "ranking: the separator alone accounts for it"),
    ("ll_kept", "documents kept (reference / ragtrail)"),
    ("ll_target", "target tokens (reference / ragtrail)"),
    ("ll_lengths_differ", "document lengths that differ from the exact count"),
    ("ll_fine_rule_reproduced", "fine step: ragtrail's rule recomputed = its output"),
    ("ll_fine_same_decision", "fine step: same token decision (same kept documents)"),
    ("ll_whole_J", "LongLLMLingua, whole compressor"),
    ("recomp_prompt_same", "RECOMP abstractive: the T5 input = recompTrainedPrompt"),
    ("recomp_rule_on_flashrag_sentences", "RECOMP extractive: ragtrail's rule on FlashRAG's sentences (of 4 settings)"),
]


def show(x):
    return {True: "yes", False: "NO"}.get(x, str(x)) if not isinstance(x, int) or isinstance(x, bool) else str(x)


print("| metric | " + " | ".join(QIDS) + " |")
print("|---|" + "---|" * len(QIDS))
for key, label in PER_Q:
    b, a = before.get(key, {}), after.get(key, {})
    cells = []
    for q in QIDS:
        x, y = show(b.get(q, "—")), show(a.get(q, "—"))
        cells.append(y if x == y else f"{x} → {y}")
    print(f"| {label} | " + " | ".join(cells) + " |")
print()
print(f"- sentence-split probe, same sentences as the reference: {before.get('split_probe_same')} → {after.get('split_probe_same')} of 4")
for i, (x, y) in enumerate(zip(before.get("align_probe", []), after.get("align_probe", []))):
    print(f"- token-placement probe {i + 1} (clean tokens on their own text, tokens scored / the tokenizer's): {x} → {y}")
for i, (x, y) in enumerate(zip(before.get("align_tokens_probe", []), after.get("align_tokens_probe", []))):
    print(f"- alignTokens probe {i + 1}: " + "; ".join(f"{m} {x.get(m)} → {y[m]}" if x.get(m) != y[m] else f"{m} {y[m]}" for m in y))
for agent in after.get("cli", {}):
    print(f"- CLI {agent} (summary = library call, shown in the answer prompt): {before.get('cli', {}).get(agent)} → {after['cli'][agent]}")
print(f"\n(before: {before.get('ragtrail')}; after: {after.get('ragtrail')})")
