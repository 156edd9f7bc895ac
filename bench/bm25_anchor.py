"""BM25 anchors for `npm run bench:retrieval` (bench-only: neither library is a ragtrail dependency).

Indexes the first N passages of the synthetic corpus the TypeScript bench wrote, with one engine per
process (so the peak RSS is that engine's), and runs the bench's queries on one thread:
  bm25s   (.venv-bench: pip install bm25s numba PyStemmer) — method "lucene", k1 0.9, b 0.4, numba
          backend; queries one at a time and as one batch.
  xapian  (Debian python3-xapian, so run it with /usr/bin/python3) — BM25Weight(k1 0.9, k2 0, k3 1,
          b 0.4), an on-disk database without positions; queries one at a time (no batch API).
Both get ragtrail's analysis: lowercase ASCII letter/digit runs (the synthetic text has no other
characters), Lucene's 33 stop words dropped, the original Porter stemmer; title and text as one field.
Usage: python bm25_anchor.py ENGINE CORPUS.jsonl QUERIES.json RAGTRAIL_HITS.json|- N WORKDIR [PASSES]
Each speed is the median of PASSES (default 3) timed passes over all the queries; every pass is
printed to stderr.
Prints one JSON object: build_s (analysis + indexing), peak_rss_bytes, disk_bytes, qps_single,
qps_batched, recall10 (the query's source passage in the top 10), overlap10 (top-10 ids shared with
ragtrail's, averaged over queries; null without ragtrail's hits).
"""
import json
import os
import re
import resource
import shutil
import statistics
import sys
import time

STOP = set(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    " these they this to was will with".split()
)
WORD = re.compile(r"[a-z0-9]+")


def analyzer(stem_one):
    memo = {}

    def analyze(text):
        out = []
        for w in WORD.findall(text.lower()):
            t = memo.get(w)
            if t is None:
                t = "" if w in STOP else stem_one(w)
                memo[w] = t
            if t:
                out.append(t)
        return out

    return analyze


def passages(path, n):
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            p = json.loads(line)
            yield f"{p['title']}\n{p['text']}" if p.get("title") else p["text"]


def folder_bytes(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


PASSES = 3  # timed passes over the queries; the median is reported (argv[7], as the bench's --passes)


def median_rate(count, timed):
    """Median queries/s over PASSES calls of timed(), which runs `count` queries and returns its result."""
    rates, out = [], None
    for _ in range(PASSES):
        t0 = time.perf_counter()
        out = timed()
        rates.append(count / (time.perf_counter() - t0))
    return statistics.median(rates), rates, out


def time_single(search, queries):
    for q in queries[:20]:  # warm-up (numba compiles on first call)
        search(q)
    qps, rates, hits = median_rate(len(queries), lambda: [search(q) for q in queries])
    print(f"one by one, {len(rates)} passes: " + ", ".join(f"{r:.0f}" for r in rates) + " q/s", file=sys.stderr)
    return qps, hits


def run_bm25s(corpus, n, queries, workdir):
    import bm25s
    import Stemmer
    from bm25s.tokenization import Tokenized

    porter = Stemmer.Stemmer("porter")
    analyze = analyzer(porter.stemWord)
    t0 = time.perf_counter()
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in analyze(text)] for text in passages(corpus, n)]
    retriever = bm25s.BM25(method="lucene", k1=0.9, b=0.4, backend="numba")
    retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    build = time.perf_counter() - t0
    del ids
    # Query terms the corpus lacks are dropped; an empty query falls back to bm25s's empty token.
    q_ids = [[vocab[t] for t in analyze(q) if t in vocab] or [retriever.vocab_dict[""]] for q in queries]

    def search(qi):
        docs, _ = retriever.retrieve([qi], k=10, n_threads=1, show_progress=False)
        return [int(d) for d in docs[0]]

    qps_single, hits = time_single(search, q_ids)
    retriever.retrieve(q_ids[:20], k=10, n_threads=1, show_progress=False)
    qps_batched, rates, _ = median_rate(len(q_ids), lambda: retriever.retrieve(q_ids, k=10, n_threads=1, show_progress=False))
    print(f"batched, {len(rates)} passes: " + ", ".join(f"{r:.0f}" for r in rates) + " q/s", file=sys.stderr)
    save = os.path.join(workdir, "bm25s-index")
    shutil.rmtree(save, ignore_errors=True)
    retriever.save(save)
    disk = folder_bytes(save)
    shutil.rmtree(save, ignore_errors=True)
    return {"build_s": build, "disk_bytes": disk, "qps_single": qps_single, "qps_batched": qps_batched}, hits


def run_xapian(corpus, n, queries, workdir):
    import xapian

    porter = xapian.Stem("porter")
    analyze = analyzer(lambda w: porter(w).decode())
    path = os.path.join(workdir, f"xapian-{n}")
    shutil.rmtree(path, ignore_errors=True)
    t0 = time.perf_counter()
    db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
    # Xapian's own C++ term generator, set up as ragtrail's analyzer: Porter stems without the "Z"
    # prefix, stop words not indexed (so document lengths count the same terms), no positions.
    # On this ASCII text its word splitting equals the regex above (checked: same terms, same index size).
    stopper = xapian.SimpleStopper()
    for w in STOP:
        stopper.add(w)
    tg = xapian.TermGenerator()
    tg.set_stemmer(porter)
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
    tg.set_stopper(stopper)
    tg.set_stopper_strategy(xapian.TermGenerator.STOP_ALL)
    for text in passages(corpus, n):
        doc = xapian.Document()
        tg.set_document(doc)
        tg.index_text_without_positions(text)
        db.add_document(doc)
    db.commit()
    db.close()
    build = time.perf_counter() - t0
    disk = folder_bytes(path)
    rdb = xapian.Database(path)
    enquire = xapian.Enquire(rdb)
    enquire.set_weighting_scheme(xapian.BM25Weight(0.9, 0, 1, 0.4, 0.5))
    enquire.set_docid_order(xapian.Enquire.ASCENDING)
    q_terms = [analyze(q) for q in queries]

    def search(terms):
        enquire.set_query(xapian.Query(xapian.Query.OP_OR, terms))
        return [m.docid - 1 for m in enquire.get_mset(0, 10)]

    qps_single, hits = time_single(search, q_terms)
    if os.environ.get("RAGTRAIL_BENCH_KEEP") != "1":
        shutil.rmtree(path, ignore_errors=True)
    return {"build_s": build, "disk_bytes": disk, "qps_single": qps_single, "qps_batched": None}, hits


def main():
    global PASSES
    engine, corpus, queries_path, hits_path, n, workdir = sys.argv[1:7]
    n = int(n)
    if len(sys.argv) > 7:
        PASSES = int(sys.argv[7])
    with open(queries_path, encoding="utf-8") as f:
        qs = json.load(f)
    queries = [q["query"] for q in qs]
    run = {"bm25s": run_bm25s, "xapian": run_xapian}.get(engine)
    if run is None:
        raise SystemExit(f"unknown engine {engine}: use bm25s or xapian")
    out, hits = run(corpus, n, queries, workdir)
    out["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["recall10"] = sum(q["relevant"] in h for q, h in zip(qs, hits)) / len(qs)
    out["overlap10"] = None
    if hits_path != "-" and os.path.exists(hits_path):
        with open(hits_path, encoding="utf-8") as f:
            ours = [{int(s[4:]) for s in h} for h in json.load(f)]
        out["overlap10"] = sum(len(o & set(h)) / 10 for o, h in zip(ours, hits)) / len(qs)
    print(json.dumps({"engine": engine, "n": n, **out}), flush=True)


if __name__ == "__main__":
    main()
