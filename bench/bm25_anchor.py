"""BM25 anchors for `npm run bench:retrieval` (bench-only: neither library is a ragtrail dependency).

Indexes the first N passages of the synthetic corpus the TypeScript bench wrote, with one engine per
process (so the peak RSS is that engine's), and runs the bench's queries on one thread:
  bm25s   (.venv-bench: pip install bm25s numba PyStemmer) — method "lucene", k1 0.9, b 0.4, numba
          backend; queries one at a time and as one batch.
  bm25s-chunked  the same retrieval over the same index, its arrays built a chunk of documents at a
          time (build_bm25s_chunked) where bm25s.index would need more RAM than the machine has (~52 GiB
          at 21M); saved and loaded by bm25s itself. Its build time and peak RSS are this script's, not
          bm25s's. With RAGTRAIL_BENCH_KEEP=1 the saved index is kept and reused by the next run.
  bm25s-chunked-check  builds both ways on the first N passages and prints whether every array is equal.
  xapian  (Debian python3-xapian, so run it with /usr/bin/python3) — BM25Weight(k1 0.9, k2 0, k3 1,
          b 0.4), an on-disk database without positions; queries one at a time (no batch API).
Both get ragtrail's analysis: lowercase ASCII letter/digit runs (the synthetic text has no other
characters), Lucene's 33 stop words dropped, the original Porter stemmer; title and text as one field.
Usage: python bm25_anchor.py ENGINE CORPUS.jsonl QUERIES.json|- RAGTRAIL_HITS.json|- N WORKDIR [PASSES [serve]]
Each speed is the median of PASSES (default 3) timed passes over all the queries; every pass is
printed to stderr.
Prints one JSON object: build_s (analysis + indexing), peak_rss_bytes, disk_bytes, qps_single,
qps_batched, recall10 (the query's source passage in the top 10), overlap10 (top-10 ids shared with
ragtrail's, averaged over queries; null without ragtrail's hits).
With `serve`, the process then stays up and answers each line `time` on stdin with one more timed
pass (one by one, then batched where the engine has a batch call) as one object {qps_single,
qps_batched}: the TypeScript bench times ragtrail between two such lines, so that each pair of
figures is taken at the same moment (bench/retrieval.ts, "paired rounds").
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
K1, B = 0.9, 0.4  # ragtrail's BM25 defaults, for every anchor


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


def rate(count, timed):
    """Queries/s of one call of timed(), which runs `count` queries, and its result."""
    t0 = time.perf_counter()
    out = timed()
    return count / (time.perf_counter() - t0), out


def median_rate(count, timed):
    """Median queries/s over PASSES calls of timed(), every pass's rate, and the last call's result."""
    runs = [rate(count, timed) for _ in range(PASSES)]
    rates = [r for r, _ in runs]
    return statistics.median(rates), rates, runs[-1][1]


def time_single(search, queries):
    for q in queries[:20]:  # warm-up (numba compiles on first call)
        search(q)
    qps, rates, hits = median_rate(len(queries), lambda: [search(q) for q in queries])
    print(f"one by one, {len(rates)} passes: " + ", ".join(f"{r:.0f}" for r in rates) + " q/s", file=sys.stderr)
    return qps, hits


def bm25s_model():
    """An empty bm25s model with the anchors' settings: method lucene, K1, B, the numba backend."""
    import bm25s

    return bm25s.BM25(method="lucene", k1=K1, b=B, backend="numba")


def bm25s_analyzer():
    import Stemmer

    return analyzer(Stemmer.Stemmer("porter").stemWord)


def index_bm25s(corpus, n, analyze):
    """bm25s.index over the first n passages, as bm25s builds it; returns the model and the build time."""
    from bm25s.tokenization import Tokenized

    t0 = time.perf_counter()
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in analyze(text)] for text in passages(corpus, n)]
    retriever = bm25s_model()
    retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    return retriever, time.perf_counter() - t0


def run_bm25s(corpus, n, queries, workdir):
    analyze = bm25s_analyzer()
    retriever, build = index_bm25s(corpus, n, analyze)
    out, hits, one_round = query_bm25s(retriever, analyze, queries)
    save = os.path.join(workdir, "bm25s-index")
    shutil.rmtree(save, ignore_errors=True)
    retriever.save(save)
    disk = folder_bytes(save)
    shutil.rmtree(save, ignore_errors=True)
    return {"build_s": build, "disk_bytes": disk, **out}, hits, one_round, lambda: None


def query_bm25s(retriever, analyze, queries):
    """bm25s's numba retrieval, k 10, one thread: one query at a time, then all as one batch."""
    vocab = retriever.vocab_dict
    # Query terms the corpus lacks are dropped; an empty query falls back to bm25s's empty token.
    q_ids = [[vocab[t] for t in analyze(q) if t in vocab] or [vocab[""]] for q in queries]

    def search(qi):
        docs, _ = retriever.retrieve([qi], k=10, n_threads=1, show_progress=False)
        return [int(d) for d in docs[0]]

    def batched():
        retriever.retrieve(q_ids, k=10, n_threads=1, show_progress=False)

    qps_single, hits = time_single(search, q_ids)
    retriever.retrieve(q_ids[:20], k=10, n_threads=1, show_progress=False)
    qps_batched, rates, _ = median_rate(len(q_ids), batched)
    print(f"batched, {len(rates)} passes: " + ", ".join(f"{r:.0f}" for r in rates) + " q/s", file=sys.stderr)

    def one_round():
        return {"qps_single": rate(len(q_ids), lambda: [search(q) for q in q_ids])[0], "qps_batched": rate(len(q_ids), batched)[0]}

    return {"qps_single": qps_single, "qps_batched": qps_batched}, hits, one_round


def build_bm25s_chunked(corpus, n, analyze, chunk=100_000):
    """bm25s's index arrays for the first n passages, built a chunk of documents at a time.

    bm25s.index keeps every document's token ids as Python lists and its (score, doc, term) triples
    three times over: ~52 GiB at 21M passages, past this machine. The index itself (float32 scores,
    int32 doc ids, int64 column pointers: 8.3 GiB at 21M) fits, and its retrieval reads only that.
    This builds the same arrays with the token ids held as int32 chunks: each chunk's (doc, term) pairs
    and term frequencies by np.unique, document frequencies summed over chunks, idf by bm25s's own
    _build_idf_array, and each score in bm25s's own float64 arithmetic (NumPy 2 promotes its float32
    term frequency against the float64 length norm) rounded to float32, scattered in place into CSC
    order. Equal, array for array, to bm25s.index's (engine bm25s-chunked-check).
    Returns (scores dict as bm25s.BM25.scores holds it, vocab with bm25s's "" token, build_s).
    """
    import numpy as np
    from bm25s.scoring import _build_idf_array, _select_idf_scorer

    k1, b = K1, B
    t0 = time.perf_counter()
    vocab, chunks, lengths = {}, [], []
    buf, lens = [], []

    def flush():
        chunks.append(np.array(buf, dtype=np.int32))
        lengths.append(np.array(lens, dtype=np.int64))
        buf.clear()
        lens.clear()

    for text in passages(corpus, n):
        ids = [vocab.setdefault(t, len(vocab)) for t in analyze(text)]
        buf.extend(ids)
        lens.append(len(ids))
        if len(lens) == chunk:
            flush()
    if lens:
        flush()
    v = len(vocab)
    doc_len = np.concatenate(lengths)  # int64, as bm25s's np.array([len(doc) ...])
    n_docs = len(doc_len)
    avg_doc_len = doc_len.mean()

    def pairs(ci):
        """Chunk ci's distinct (local doc, term) pairs, sorted by doc then term, with their counts."""
        local = np.repeat(np.arange(len(lengths[ci]), dtype=np.int64), lengths[ci])
        keys, tf = np.unique(local * v + chunks[ci], return_counts=True)
        return keys // v, keys % v, tf

    df = np.zeros(v, dtype=np.int64)
    for ci in range(len(chunks)):
        df += np.bincount(pairs(ci)[1], minlength=v)
    idf = _build_idf_array(dict(enumerate(df.tolist())), n_docs=n_docs, compute_idf_fn=_select_idf_scorer("lucene"), dtype="float32")
    indptr = np.zeros(v + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    nnz = int(indptr[-1])
    data = np.empty(nnz, dtype=np.float32)
    indices = np.empty(nnz, dtype=np.int32)
    heads = indptr[:-1].copy()
    base = 0
    for ci in range(len(chunks)):
        doc, term, tf = pairs(ci)
        norm = k1 * ((1 - b) + b * lengths[ci].astype(np.float64) / avg_doc_len)  # bm25s: per document, in float64
        tf32 = tf.astype(np.float32)
        score = (idf[term] * (tf32 / (norm[doc] + tf32))).astype(np.float32)
        order = np.argsort(term * len(lengths[ci]) + doc, kind="stable")  # term-major, docs ascending
        t = term[order]
        starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
        group = np.cumsum(np.r_[True, t[1:] != t[:-1]]) - 1
        pos = heads[t] + (np.arange(len(t)) - starts[group])
        data[pos] = score[order]
        indices[pos] = (doc[order] + base).astype(np.int32)
        heads[t[starts]] += np.diff(np.r_[starts, len(t)])
        base += len(lengths[ci])
        chunks[ci] = None  # this chunk's tokens are no longer needed
    vocab[""] = v  # bm25s.index appends its empty token after building (no column of its own)
    return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}, vocab, time.perf_counter() - t0


def run_bm25s_chunked(corpus, n, queries, workdir):
    """bm25s's own save, load and numba retrieval over the index build_bm25s_chunked wrote."""
    import bm25s

    analyze = bm25s_analyzer()
    save = os.path.join(workdir, f"bm25s-chunked-{n}")
    keep = os.environ.get("RAGTRAIL_BENCH_KEEP") == "1"
    build = None
    if not (keep and os.path.exists(os.path.join(save, "params.index.json"))):
        scores, vocab, build = build_bm25s_chunked(corpus, n, analyze)
        writer = bm25s_model()
        writer.scores, writer.vocab_dict, writer.nonoccurrence_array = scores, vocab, None
        shutil.rmtree(save, ignore_errors=True)
        writer.save(save, show_progress=False)
        del writer, scores
    else:
        print(f"bm25s-chunked: reusing {save} (kept by an earlier --keep run)", file=sys.stderr)
    disk = folder_bytes(save)
    retriever = bm25s.BM25.load(save, mmap=False, show_progress=False)
    out, hits, one_round = query_bm25s(retriever, analyze, queries)
    if not keep:
        shutil.rmtree(save, ignore_errors=True)
    return {"build_s": build, "disk_bytes": disk, **out}, hits, one_round, lambda: None


def check_bm25s_chunked(corpus, n):
    """bm25s.index against build_bm25s_chunked on the first n passages (chunks of 1,000 and 100,000)."""
    import numpy as np

    analyze = bm25s_analyzer()
    own, _ = index_bm25s(corpus, n, analyze)  # exactly as the bm25s anchor builds it
    result = {"n": n, "nnz": int(len(own.scores["data"]))}
    for chunk in (1_000, 100_000):
        scores, vocab2, _ = build_bm25s_chunked(corpus, n, analyze, chunk)
        same = vocab2 == own.vocab_dict and scores["num_docs"] == own.scores["num_docs"]
        for key in ("data", "indices", "indptr"):
            a, c = own.scores[key], scores[key]
            same = same and a.dtype == c.dtype and np.array_equal(a, c)
        result[f"equal_chunk_{chunk}"] = bool(same)
    return result


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
    enquire.set_weighting_scheme(xapian.BM25Weight(K1, 0, 1, B, 0.5))
    enquire.set_docid_order(xapian.Enquire.ASCENDING)
    q_terms = [analyze(q) for q in queries]

    def search(terms):
        enquire.set_query(xapian.Query(xapian.Query.OP_OR, terms))
        return [m.docid - 1 for m in enquire.get_mset(0, 10)]

    qps_single, hits = time_single(search, q_terms)

    def one_round():
        return {"qps_single": rate(len(q_terms), lambda: [search(t) for t in q_terms])[0], "qps_batched": None}

    def cleanup():
        rdb.close()
        if os.environ.get("RAGTRAIL_BENCH_KEEP") != "1":
            shutil.rmtree(path, ignore_errors=True)

    return {"build_s": build, "disk_bytes": disk, "qps_single": qps_single, "qps_batched": None}, hits, one_round, cleanup


def main():
    global PASSES
    engine, corpus, queries_path, hits_path, n, workdir = sys.argv[1:7]
    n = int(n)
    if len(sys.argv) > 7:
        PASSES = int(sys.argv[7])
    serving = len(sys.argv) > 8 and sys.argv[8] == "serve"
    if engine == "bm25s-chunked-check":
        print(json.dumps(check_bm25s_chunked(corpus, n)), flush=True)
        return
    with open(queries_path, encoding="utf-8") as f:
        qs = json.load(f)
    queries = [q["query"] for q in qs]
    run = {"bm25s": run_bm25s, "bm25s-chunked": run_bm25s_chunked, "xapian": run_xapian}.get(engine)
    if run is None:
        raise SystemExit(f"unknown engine {engine}: use bm25s, bm25s-chunked, bm25s-chunked-check or xapian")
    out, hits, one_round, cleanup = run(corpus, n, queries, workdir)
    out["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["recall10"] = sum(q["relevant"] in h for q, h in zip(qs, hits)) / len(qs)
    out["overlap10"] = None
    if hits_path != "-" and os.path.exists(hits_path):
        with open(hits_path, encoding="utf-8") as f:
            ours = [{int(s[4:]) for s in h} for h in json.load(f)]
        out["overlap10"] = sum(len(o & set(h)) / 10 for o, h in zip(ours, hits)) / len(qs)
    print(json.dumps({"engine": engine, "n": n, **out}), flush=True)
    if serving:
        for line in sys.stdin:
            if line.strip() != "time":
                raise SystemExit(f"serve: unknown command {line.strip()!r} (the only one is `time`)")
            print(json.dumps(one_round()), flush=True)
    cleanup()


if __name__ == "__main__":
    main()
