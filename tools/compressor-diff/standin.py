"""The deterministic stand-in sentence encoder both sides of the RECOMP-extractive check use (FlashRAG's
Encoder is replaced by it; ragtrail reaches it as `openai:<url>#standin` through /v1/embeddings): a bag of
lower-cased words hashed (md5) into 256 dimensions. `unit=True` scales each vector to length 1 (then
FlashRAG's inner product and ragtrail's cosine are the same number); `unit=False` keeps the raw counts."""
import hashlib
import re

import numpy as np

DIM = 256


def encode(texts, unit=True):
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in re.findall(r"\w+", t.lower()):
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
        if unit:
            n = float(np.linalg.norm(out[i]))
            if n > 0:
                out[i] /= n
    return out
