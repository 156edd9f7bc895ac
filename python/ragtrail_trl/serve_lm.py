"""Serve a causal LM over the OpenAI-compatible API with token log-probabilities.

    python -m ragtrail_trl.serve_lm --model DIR [--host 127.0.0.1] [--port 8000]

`transformers serve` ignores `logprobs`, `top_logprobs` and `echo` (it says so in its log), and the
baselines that read a model's token probabilities need them: FLARE (the probability of each look-ahead
token), Self-RAG (its reflection tokens among the top alternatives), Selective-Context and LongLLMLingua
(the log-probability of every prompt token, through `echo`). vLLM and SGLang serve all three on a GPU;
this server gives the same fields on a CPU for small checkpoints (ragtrail's tiny models, a test
model), one request at a time:

    POST /v1/chat/completions  messages, n, max_tokens, temperature, top_p, seed, stop,
                               logprobs: bool, top_logprobs: int
    POST /v1/completions       prompt, the same settings, logprobs: int (top alternatives), echo: bool
    GET  /v1/models, /health

Log-probabilities are those of the model's own distribution (log-softmax of the raw logits, before
temperature or top-p), as vLLM reports them by default. Chat prompts are rendered with the
checkpoint's chat template (`add_generation_prompt`) and tokenized without adding special tokens, as
`transformers serve` and ragtrail's `llama:` backend do. Greedy at temperature 0; otherwise sampled
with the request's seed (sample i uses seed + i). Generation ends at the end-of-sequence token, at a
stop string (left out of the text, as the OpenAI API does) or at `max_tokens`.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LanguageModel:
    def __init__(self, path: str):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self.name = path
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path)
        self.model.eval()
        self.lock = threading.Lock()

    # -------------------------------------------------------------------------------------- prompts

    def chat_prompt(self, messages: list[dict]) -> str:
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _piece(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id])

    # ----------------------------------------------------------------------------------- scoring

    def score_prompt(self, ids: list[int], top: int) -> dict:
        """Log p of every prompt token given the ones before it (the first has none), with the
        top alternatives at each position, and each token's character offset in the decoded prompt."""
        torch = self._torch
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        token_lp: list[float | None] = [None]
        tops: list[dict | None] = [None]
        for i in range(1, len(ids)):
            row = logp[i - 1]
            token_lp.append(float(row[ids[i]]))
            tops.append(self._top(row, top) if top > 0 else None)
        offsets = [len(self.tokenizer.decode(ids[:i])) for i in range(len(ids))]
        return {"tokens": [self._piece(t) for t in ids], "token_logprobs": token_lp, "top_logprobs": tops, "text_offset": offsets}

    def _top(self, row, k: int) -> dict:
        values, indices = row.topk(k)
        out: dict[str, float] = {}
        for v, i in zip(values.tolist(), indices.tolist()):
            out.setdefault(self._piece(int(i)), float(v))
        return out

    # -------------------------------------------------------------------------------- generation

    def generate(self, ids: list[int], max_tokens: int, temperature: float, top_p: float, seed: int | None, stop: list[str], top: int) -> dict:
        """One sample: its text, finish reason, and each generated token's log p with the top alternatives."""
        torch = self._torch
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        eos = self.tokenizer.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        out_ids: list[int] = []
        logprobs: list[float] = []
        tops: list[dict] = []
        past = None
        step_input = torch.tensor([ids])
        finish = "length"
        text = ""
        cut_by_stop = False
        with torch.no_grad():
            for _ in range(max_tokens):
                out = self.model(input_ids=step_input, past_key_values=past, use_cache=True)
                past = out.past_key_values
                logits = out.logits[0, -1].float()
                logp = torch.log_softmax(logits, dim=-1)
                if temperature <= 0:
                    token = int(torch.argmax(logits))
                else:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    if top_p < 1:
                        sorted_p, order = probs.sort(descending=True)
                        keep = sorted_p.cumsum(0) - sorted_p < top_p
                        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
                    token = int(torch.multinomial(probs, 1, generator=gen))
                if token in eos_ids:
                    finish = "stop"
                    break
                out_ids.append(token)
                logprobs.append(float(logp[token]))
                if top > 0:
                    tops.append(self._top(logp, top))
                text = self.tokenizer.decode(out_ids)
                cut = min((text.find(s) for s in stop if s and s in text), default=-1)
                if cut >= 0:
                    text = text[:cut]
                    finish = "stop"
                    cut_by_stop = True
                    break
                step_input = torch.tensor([[token]])
        # After a stop string, keep the tokens that start before the cut (as ragtrail's cutAtStop does).
        pieces = [self._piece(t) for t in out_ids]
        kept = len(pieces)
        if cut_by_stop:
            kept, start = 0, 0
            while kept < len(pieces) and start < len(text):
                start += len(pieces[kept])
                kept += 1
        return {"text": text, "finish_reason": finish, "tokens": pieces[:kept], "logprobs": logprobs[:kept], "top": tops[:kept], "completion_tokens": len(out_ids)}


def _settings(body: dict) -> dict:
    stop = body.get("stop") or []
    return {
        "n": int(body.get("n") or 1),
        "max_tokens": int(body.get("max_tokens") or 256),
        "temperature": float(body["temperature"]) if body.get("temperature") is not None else 1.0,
        "top_p": float(body.get("top_p") if body.get("top_p") is not None else 1.0),
        "seed": body.get("seed"),
        "stop": [stop] if isinstance(stop, str) else list(stop),
    }


def chat_completion(lm: LanguageModel, body: dict) -> dict:
    s = _settings(body)
    ids = lm.encode(lm.chat_prompt(body["messages"]))
    top = int(body.get("top_logprobs") or 0)
    want = bool(body.get("logprobs")) or top > 0
    choices, completion_tokens = [], 0
    for i in range(s["n"]):
        seed = None if s["seed"] is None else int(s["seed"]) + i
        g = lm.generate(ids, s["max_tokens"], s["temperature"], s["top_p"], seed, s["stop"], top)
        completion_tokens += g["completion_tokens"]
        choice = {"index": i, "message": {"role": "assistant", "content": g["text"]}, "finish_reason": g["finish_reason"], "logprobs": None}
        if want:
            choice["logprobs"] = {
                "content": [
                    {"token": t, "logprob": lp, "top_logprobs": [{"token": k, "logprob": v} for k, v in (g["top"][j] if top > 0 else {}).items()]}
                    for j, (t, lp) in enumerate(zip(g["tokens"], g["logprobs"]))
                ]
            }
        choices.append(choice)
    return _reply("chat.completion", lm, choices, len(ids) * s["n"], completion_tokens)


def completion(lm: LanguageModel, body: dict) -> dict:
    s = _settings(body)
    prompt = body.get("prompt", "")
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    ids = lm.encode(prompt)
    lp_arg = body.get("logprobs")
    top = int(lp_arg) if lp_arg not in (None, False) else 0
    echo = bool(body.get("echo"))
    scored = lm.score_prompt(ids, top) if echo else None
    choices, completion_tokens = [], 0
    for i in range(s["n"]):
        seed = None if s["seed"] is None else int(s["seed"]) + i
        g = lm.generate(ids, s["max_tokens"], s["temperature"], s["top_p"], seed, s["stop"], top) if s["max_tokens"] > 0 else {"text": "", "finish_reason": "length", "tokens": [], "logprobs": [], "top": [], "completion_tokens": 0}
        completion_tokens += g["completion_tokens"]
        choice = {"index": i, "text": (prompt if echo else "") + g["text"], "finish_reason": g["finish_reason"], "logprobs": None}
        if lp_arg not in (None, False):
            tokens, token_lp, tops, offsets = [], [], [], []
            if scored:
                tokens, token_lp, tops, offsets = list(scored["tokens"]), list(scored["token_logprobs"]), list(scored["top_logprobs"]), list(scored["text_offset"])
            base = len(prompt) if echo else 0
            at = base
            for t, lp, tp in zip(g["tokens"], g["logprobs"], g["top"] or [None] * len(g["tokens"])):
                tokens.append(t)
                token_lp.append(lp)
                tops.append(tp)
                offsets.append(at)
                at += len(t)
            choice["logprobs"] = {"tokens": tokens, "token_logprobs": token_lp, "top_logprobs": tops, "text_offset": offsets}
        choices.append(choice)
    return _reply("text_completion", lm, choices, len(ids) * s["n"], completion_tokens)


def _reply(kind: str, lm: LanguageModel, choices: list, prompt_tokens: int, completion_tokens: int) -> dict:
    return {
        "id": f"cmpl-{uuid.uuid4().hex[:12]}",
        "object": kind,
        "created": int(time.time()),
        "model": lm.name,
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


def make_handler(lm: LanguageModel):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # quiet: one line per request is noise here
            pass

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                self._send(200, {"status": "healthy"})
            elif self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": lm.name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self):
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            except json.JSONDecodeError as e:
                self._send(400, {"error": {"message": f"the body is not JSON: {e}"}})
                return
            path = self.path.rstrip("/")
            try:
                with lm.lock:
                    if path == "/v1/chat/completions":
                        if not isinstance(body.get("messages"), list):
                            self._send(400, {"error": {"message": '"messages" must be a list'}})
                            return
                        self._send(200, chat_completion(lm, body))
                    elif path == "/v1/completions":
                        self._send(200, completion(lm, body))
                    else:
                        self._send(404, {"error": {"message": f"no route {self.path}"}})
            except Exception as e:  # a bad request must not take the server down
                self._send(500, {"error": {"message": f"{type(e).__name__}: {e}"}})

    return Handler


def serve(lm: LanguageModel, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    return ThreadingHTTPServer((host, port), make_handler(lm))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a checkpoint folder (save_pretrained)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    args = ap.parse_args(argv)
    server = serve(LanguageModel(args.model), args.host, args.port)
    print(f"serving {args.model} on http://{args.host}:{server.server_address[1]}/v1", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
