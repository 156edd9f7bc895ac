"""One HTTP server for ragtrail's side of the compressor differential (the scoring model is serve_lm):
  POST /retrieve                  Search-R1-style retriever: a question gets its fixed five documents
                                  (fixtures.RETRIEVED), best first, as {"document": {id, contents, title, text}, "score"};
  POST /v1/chat/completions       the answering model: logs the prompt (it shows the compressed context)
                                  and replies "Answer: <gold>";
  POST /v1/completions            RECOMP's summariser (--aux-llm "... (completion)"): logs the exact prompt
                                  and replies with a fixed summary;
  POST /v1/embeddings             the stand-in sentence encoder (standin.py; model "standin" gives unit
                                  vectors, "standin-raw" raw counts);
  POST /reset {"tag"}             starts logs/TAG.jsonl.
    python servers/server.py PORT"""
import json, os, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from fixtures import docs_for, find_question  # noqa: E402
import standin  # noqa: E402

LOGDIR = os.path.join(os.path.dirname(HERE), "logs")
LOCK = threading.Lock()
STATE = {"tag": "default"}
SUMMARY = "A fixed summary."


def log(rec):
    with LOCK, open(os.path.join(LOGDIR, f'{STATE["tag"]}.jsonl'), "a") as f:
        f.write(json.dumps(rec) + "\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply({"status": "ok"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        p = self.path.split("?")[0].rstrip("/")
        if p == "/reset":
            STATE["tag"] = body.get("tag", "default")
            fn = os.path.join(LOGDIR, f'{STATE["tag"]}.jsonl')
            if os.path.exists(fn):
                os.remove(fn)
            return self.reply({"ok": True})
        if p == "/retrieve":
            res = []
            for q in body.get("queries", []):
                item = find_question(q)
                docs = docs_for(item["id"]) if item else []
                log({"kind": "retrieve", "query": q, "ids": [d["id"] for d in docs]})
                res.append([{"document": {k: d[k] for k in ("id", "contents", "title", "text")}, "score": d["score"]} for d in docs])
            return self.reply({"result": res})
        if p.endswith("/chat/completions"):
            msgs = body.get("messages", [])
            text = "\n".join(m.get("content") or "" for m in msgs)
            item = find_question(text.split("Question: ")[-1].split("\n")[0]) if "Question: " in text else None
            log({"kind": "chat", "messages": msgs})
            out = f'Answer: {item["golden_answers"][0] if item else "unknown"}'
            return self.reply({"id": "x", "object": "chat.completion", "model": body.get("model"), "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": out}, "finish_reason": "stop", "logprobs": None}]})
        if p.endswith("/completions"):
            log({"kind": "completion", "prompt": body.get("prompt"), "max_tokens": body.get("max_tokens"), "temperature": body.get("temperature")})
            return self.reply({"id": "x", "object": "text_completion", "model": body.get("model"), "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                               "choices": [{"index": 0, "text": SUMMARY, "finish_reason": "stop", "logprobs": None}]})
        if p.endswith("/embeddings"):
            inp = body.get("input", [])
            inp = [inp] if isinstance(inp, str) else inp
            vecs = standin.encode(inp, unit=body.get("model") != "standin-raw")
            log({"kind": "embeddings", "model": body.get("model"), "input": inp})
            return self.reply({"object": "list", "model": body.get("model"), "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]} for i, v in enumerate(vecs)]})
        self.reply({"error": f"no route {p}"}, 404)


if __name__ == "__main__":
    os.makedirs(LOGDIR, exist_ok=True)
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18101
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
