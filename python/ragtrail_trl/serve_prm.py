"""Serve a trained process reward model (a one-output sequence classifier) over HTTP.

    python -m ragtrail_trl.serve_prm --model DIR [--host 127.0.0.1] [--port 8090]

It answers the request shape of vLLM's pooling endpoint, which ragtrail's remote PRM speaks
(`--prm remote:vllm-pooling:http://HOST:PORT/pooling`):

    POST /pooling  {"model"?: str, "input": [text, ...]}  ->  {"data": [{"index": i, "data": [score]}, ...]}
    GET  /health                                          ->  {"status": "healthy"}

Each text is a state and a candidate step joined the way the remote PRM joins them, the same
text the PRM was trained on (see `ragtrail llm-loop`). Scores are the classifier's raw output.
The standard library's threaded server is enough: requests are scored one batch at a time
under a lock, and this is a loopback service for one evaluation run.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Scorer:
    def __init__(self, path: str, max_length: int = 2048, batch_size: int = 16):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
        self.model.config.pad_token_id = self.tokenizer.pad_token_id
        self.model.eval()
        self.max_length, self.batch_size = max_length, batch_size
        self.lock = threading.Lock()

    def score(self, texts: list[str]) -> list[float]:
        out: list[float] = []
        with self.lock, self._torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(
                    texts[start : start + self.batch_size],
                    return_tensors="pt",
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                )
                logits = self.model(**batch).logits
                out.extend(float(x) for x in logits[:, 0].tolist())
        return out


def make_handler(scorer: Scorer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # quiet: one line per request is noise here
            pass

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") == "/health":
                self._send(200, {"status": "healthy"})
            else:
                self._send(404, {"error": f"no route GET {self.path}; use POST /pooling or GET /health"})

        def do_POST(self):
            if self.path.rstrip("/") not in ("/pooling", "/v1/pooling"):
                self._send(404, {"error": f"no route POST {self.path}; use POST /pooling"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length).decode("utf-8") or "{}")
            except (ValueError, UnicodeDecodeError):
                self._send(400, {"error": "the body is not valid JSON"})
                return
            texts = body.get("input") if isinstance(body, dict) else None
            if isinstance(texts, str):
                texts = [texts]
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                self._send(422, {"error": "\"input\" must be a string or a list of strings"})
                return
            scores = scorer.score(texts)
            self._send(200, {"object": "list", "data": [{"index": i, "object": "pooling", "data": [s]} for i, s in enumerate(scores)]})

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragtrail_trl.serve_prm", description="Serve a trained PRM (vLLM pooling request shape).")
    parser.add_argument("--model", required=True, help="checkpoint directory of the sequence classifier")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090, help="0 picks a free port (printed)")
    options = parser.parse_args(argv)
    try:
        scorer = Scorer(options.model)
    except OSError as err:
        print(f"ragtrail_trl: cannot load the PRM from {options.model} ({err}). Fix: pass the output folder of a prm training run", file=sys.stderr)
        return 2
    server = ThreadingHTTPServer((options.host, options.port), make_handler(scorer))
    print(f"PRM server listening on http://{options.host}:{server.server_address[1]}/pooling", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
