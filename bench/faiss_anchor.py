"""faiss-cpu anchors for `npm run bench:dense` (bench-only; faiss is never a runtime dependency).

Reads the same float32 vectors and queries the TypeScript bench wrote, builds each faiss index,
times batched (all queries in one call) and unbatched (one query per call) search, and writes the
top-k ids of the batched run so the bench computes recall@k against ragtrail's exact search.
Usage: python faiss_anchor.py VECTORS.f32 QUERIES.f32 DIM K THREADS OUTDIR [flat,hnsw,ivfpq,sq8,knn,hnsw-serve] [M [EFC [BUILD_THREADS]]]
Prints one JSON object per index on stdout (HNSW: M and efConstruction EFC, 16 and 40 by default).
THREADS bound faiss's OpenMP threads for search, BUILD_THREADS (default THREADS) for building the
HNSW graph, as ragtrail's bench builds its own graph on --build-threads and searches on --threads.
`hnsw-serve` builds the HNSW index, prints its object, then answers one line at a time on stdin:
`time EFS`, one timing (all queries batched, then each query alone) at that width, printed as one
object, its ids in faiss-hnsw-efEFS.ids; `build`, the graph built again from scratch (the old one
freed first), its build time printed as {"name": "hnsw", "build_s": …}, searched from then on. The
TypeScript bench times ragtrail's graph between two such lines, so that each pair of figures is taken
at the same moment (see bench/dense.ts, "paired timings" and "paired builds").
The vectors are memory-mapped and added in one call from the mapping, so the only large allocation
is the index itself (np.fromfile would double it). `knn` is faiss's exact inner-product search (faiss.knn, the kernel
IndexFlatIP.search runs) straight over the mapped file, for sizes where a float32 IndexFlatIP copy
would not fit beside everything else in RAM.
"""
import json
import os
import sys
import time

import faiss
import numpy as np


def timed(search, xq, single_n):
    """Queries/s with all queries in one call, then one query per call; the batched call's ids."""
    t0 = time.perf_counter()
    _, ids = search(xq)
    batched = len(xq) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(single_n):
        search(xq[i : i + 1])
    return batched, single_n / (time.perf_counter() - t0), ids


def serve(held, build, k, xq, outdir) -> None:
    """Answers `time EFS` and `build` lines until stdin closes (see the module's docstring); held[0] is the
    index, the only reference to it, so that `build` frees it before building the next."""
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words == ["build"]:
            held[0] = None  # freed before the next one is built: one graph in RAM at a time
            held[0], seconds = build()
            print(json.dumps({"name": "hnsw", "build_s": seconds}), flush=True)
            continue
        if words[0] != "time" or len(words) != 2:
            raise SystemExit(f"hnsw-serve: unknown command {line.strip()!r}")
        ef = int(words[1])
        held[0].hnsw.efSearch = ef
        search = lambda q: held[0].search(q, k)  # no local name for the index: `build` could not free it
        search(xq)  # warm-up at this width
        batched, unbatched, ids = timed(search, xq, len(xq))
        ids.astype(np.int64).tofile(os.path.join(outdir, f"faiss-hnsw-ef{ef}.ids"))
        print(json.dumps({"name": "hnsw", "efs": ef, "qps_batched": batched, "qps_unbatched": unbatched}), flush=True)


def main() -> None:
    vectors_path, queries_path, dim, k, threads, outdir = sys.argv[1:7]
    which = (sys.argv[7] if len(sys.argv) > 7 else "flat,hnsw,ivfpq").split(",")
    hnsw_m = int(sys.argv[8]) if len(sys.argv) > 8 else 16
    ef_construction = int(sys.argv[9]) if len(sys.argv) > 9 else 40
    dim, k, threads = int(dim), int(k), int(threads)
    build_threads = int(sys.argv[10]) if len(sys.argv) > 10 else threads
    faiss.omp_set_num_threads(threads)
    xb = np.memmap(vectors_path, dtype=np.float32, mode="r").reshape(-1, dim)
    xq = np.fromfile(queries_path, dtype=np.float32).reshape(-1, dim)
    n = xb.shape[0]
    for name in which:
        t0 = time.perf_counter()
        if name == "knn":
            index = None
        elif name == "flat":
            index = faiss.IndexFlatIP(dim)
        elif name in ("hnsw", "hnsw-serve"):
            # The same M and efConstruction as ragtrail's usearch graph (defaults 16 and 40, faiss's own efConstruction).
            index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = ef_construction
        elif name == "sq8":
            index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        elif name == "ivfpq":
            # 96 sub-quantizers of 8 bits (96 bytes per vector, as ragtrail's binary codes), √N·4 lists.
            nlist = max(16, int(4 * np.sqrt(n)))
            quantizer = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFPQ(quantizer, dim, nlist, 96, 8, faiss.METRIC_INNER_PRODUCT)
        else:
            raise SystemExit(f"unknown index {name}")
        if index is not None and not index.is_trained:
            sample = xb[np.sort(np.random.default_rng(0).choice(n, size=min(n, 100_000), replace=False))]
            index.train(sample)
        if index is not None:
            # One call straight from the mapping: flat codes are resized once (adding in slices grows
            # a std::vector by doubling, which needs twice the index in RAM), and IVF adds in blocks itself.
            faiss.omp_set_num_threads(build_threads)
            index.add(xb)
            faiss.omp_set_num_threads(threads)
        build = time.perf_counter() - t0
        search = (lambda q: faiss.knn(q, xb, k, metric=faiss.METRIC_INNER_PRODUCT)) if index is None else (lambda q: index.search(q, k))
        if name in ("hnsw", "hnsw-serve"):
            index.hnsw.efSearch = 64
        if name == "ivfpq":
            index.nprobe = 32
        single_n = min(len(xq), 100)
        batched, unbatched, ids = timed(search, xq, single_n)
        label = "hnsw" if name == "hnsw-serve" else name
        ids.astype(np.int64).tofile(os.path.join(outdir, f"faiss-{label}.ids"))
        code = {"flat": 4 * dim, "knn": 4 * dim, "hnsw": 4 * dim + 16 * 2 * 4, "sq8": dim, "ivfpq": 96 + 8}[label]
        print(json.dumps({"name": label, "build_s": build, "qps_batched": batched, "qps_unbatched": unbatched, "bytes_per_vector": code}), flush=True)
        if name == "hnsw-serve":

            def rebuild():
                t0 = time.perf_counter()
                fresh = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
                fresh.hnsw.efConstruction = ef_construction
                faiss.omp_set_num_threads(build_threads)
                fresh.add(xb)
                faiss.omp_set_num_threads(threads)
                return fresh, time.perf_counter() - t0

            held = [index]
            index = search = None
            serve(held, rebuild, k, xq, outdir)


if __name__ == "__main__":
    main()
