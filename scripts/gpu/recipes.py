"""GPU smoke check: every TRL stage of every paper recipe at the paper's settings, a few steps each.

    python scripts/gpu/recipes.py --plan gpu-plan.json --data DIR --out OUT [--steps 3]

The plan (scripts/gpu/plan.ts) holds each stage's TRL config as `pipeline --llm` writes it: the
recipe's `trl` block (bf16, LoRA, trainer fields) over the stage's settings. Here the model is a small
random Llama (python/ragtrail_trl/tiny.py) instead of the paper's 7-8B checkpoint, and the number of
steps is capped; everything else — the trainer class, LoRA, bf16, the loss, the KL estimator, DAPO's
dynamic sampling, ProRAG's dual advantage, LWS's stage switch — is the run the recipe describes.

The online stages need an environment server. ragtrail's own (`serve-env`, Node) does not run on the
GPU machine, so this script starts a STAND-IN that speaks the same wire format (GET /metadata,
POST /reset, POST /step with {"raw", "final"}): each question's prompt is "Question: ...", a turn
ending in </answer> or the third turn ends the episode, and the reward is a deterministic hash of the
episode's text in [0, 1). It exists to time the trainers; its rewards mean nothing.

Writes OUT/gpu-recipes.jsonl (or --report): one line per stage with steps, seconds, steps/s, peak GPU memory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

STOPS = {"search-r1": ["</search>", "</answer>"], "prorag": ["</subquery>", "</subanswer>", "</answer>"], "reasonrag": ["</query>", "</evidence>", "</answer>"]}


def stand_in_env(questions: list[dict], protocol: str):
    """A thread-served HTTP environment with ragtrail's wire format (see the module docstring)."""
    by_id = {q["id"]: q for q in questions}
    episodes: dict[str, dict] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._send({"status": "healthy"} if self.path == "/health" else {"name": "stand-in", "protocol": protocol})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path == "/reset":
                q = by_id.get(str(body.get("question_id"))) or questions[0]
                eid = body.get("episode_id") or uuid.uuid4().hex
                prompt = [{"role": "user", "content": f"Question: {q['question']}"}]
                episodes[eid] = {"prompt": prompt, "texts": [], "steps": 0}
                observation = {"text": prompt[0]["content"], "prompt": prompt, "protocol": protocol, "generation": {"stop": STOPS.get(protocol, []), "max_tokens": 256}}
                return self._send({"episode_id": eid, "observation": observation, "reward": None, "done": False})
            episode = episodes[body["episode_id"]]
            action = body.get("action") or {}
            text = str(action.get("raw", action.get("text", action.get("query", ""))))
            episode["texts"].append(text)
            episode["steps"] += 1
            done = "</answer>" in text or episode["steps"] >= 3 or action.get("final") is True or action.get("tool") == "answer"
            if done:
                reward = int(hashlib.sha256("".join(episode["texts"]).encode()).hexdigest()[:8], 16) / 2**32
                observation = {"text": "done", "prompt": [], "metadata": {"outcome_reward": reward, "step_reward": 0.5}}
                return self._send({"observation": observation, "reward": reward, "done": True})
            episode["prompt"] = episode["prompt"] + [{"role": "assistant", "content": text}, {"role": "user", "content": "<information>Doc 1 (Title: Stand-in) A passage.</information>"}]
            return self._send({"observation": {"text": "ok", "prompt": episode["prompt"]}, "reward": 0.5, "done": False})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", required=True)
    parser.add_argument("--data", required=True, help="folder with corpus.jsonl, questions.jsonl, trl_sft.jsonl, trl_preference.jsonl")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated recipe/stage names to run")
    parser.add_argument("--cpu", action="store_true", help="a dry run on a CPU: bf16 off")
    parser.add_argument("--report", default="", help="where the jsonl report goes (default OUT/gpu-recipes.jsonl)")
    args = parser.parse_args()

    import torch

    from ragtrail_trl import train
    from ragtrail_trl.tiny import build_tiny

    os.makedirs(args.out, exist_ok=True)
    data = lambda name: os.path.abspath(os.path.join(args.data, name))  # noqa: E731
    model_dir = build_tiny(os.path.join(args.out, "tiny"), corpus=data("corpus.jsonl"), questions=data("questions.jsonl"), hidden_size=512, layers=8, heads=8, vocab_size=4000)
    params = sum(p.numel() for p in __import__("transformers").AutoModelForCausalLM.from_pretrained(model_dir).parameters())
    questions = [json.loads(line) for line in open(data("questions.jsonl"))]
    plan = json.load(open(args.plan))
    seen, results = set(), []
    report = open(args.report or os.path.join(args.out, "gpu-recipes.jsonl"), "w")
    for entry in plan:
        name = f"{entry['recipe']}/{entry['stage']}"
        if args.only and name not in args.only.split(","):
            continue
        key = json.dumps([entry["algo"], entry["trainer"], entry["top"], entry["lora"], entry["protocol"]], sort_keys=True)
        if key in seen:
            continue  # the same TRL run as a stage already timed (e.g. two arms with one config)
        seen.add(key)
        algo = entry["algo"]
        trainer = {k: v for k, v in entry["trainer"].items() if k not in ("num_train_epochs",)}
        trainer.update(max_steps=args.steps, logging_steps=1, report_to="none")
        if args.cpu:
            trainer["bf16"] = False
        online = algo in ("grpo", "prorag", "dapo", "lws")
        config = {"algo": algo, "model": model_dir, "output_dir": os.path.join(args.out, name.replace("/", "-")), "lora": entry["lora"], "trainer": trainer, **entry["top"]}
        servers = []
        if online:
            # One prompt per step: the batch is one group of the paper's num_generations completions.
            trainer.setdefault("num_generations", 8)
            trainer["per_device_train_batch_size"] = trainer["num_generations"]
            trainer.setdefault("max_completion_length", 256)
            server, url = stand_in_env(questions, entry["protocol"])
            servers.append(server)
            config.update(data=data("questions.jsonl"), env={"url": url, "token": None, "protocol": entry["protocol"]}, split="")
            if algo == "lws":
                server2, url2 = stand_in_env(questions, entry["protocol"])
                servers.append(server2)
                config["env_stage2"] = {"url": url2, "token": None}
        else:
            trainer.setdefault("per_device_train_batch_size", 8)
            config["data"] = data("trl_sft.jsonl" if algo == "sft" else "trl_preference.jsonl")
        path = config["output_dir"] + ".json"
        with open(path, "w") as handle:
            json.dump(config, handle)
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        started = time.time()
        code = train.main(["--config", path])
        seconds = time.time() - started
        for server in servers:
            server.shutdown()
        row = {"recipe": entry["recipe"], "stage": entry["stage"], "algo": algo, "exit": code, "seconds": round(seconds, 2),
               "lora_r": (entry["lora"] or {}).get("r"), "bf16": trainer.get("bf16", False), "params": params,
               "peak_gpu_gib": round(torch.cuda.max_memory_allocated() / 2**30, 3) if torch.cuda.is_available() else None}  # fmt: skip
        summary_path = os.path.join(config["output_dir"], "summary.json")
        if code == 0 and os.path.exists(summary_path):
            summary = json.load(open(summary_path))
            logged = [json.loads(line) for line in open(os.path.join(config["output_dir"], "log_history.jsonl"))]
            runtime = next((r["train_runtime"] for r in reversed(logged) if "train_runtime" in r), None)
            row.update(steps=summary.get("steps"), train_seconds=runtime, steps_per_s=round(summary["steps"] / runtime, 3) if runtime else None,
                       batch=trainer.get("per_device_train_batch_size"), completion_tokens=trainer.get("max_completion_length"))  # fmt: skip
        print(json.dumps(row), flush=True)
        report.write(json.dumps(row) + "\n")
        report.flush()
        results.append(row)
    return 0 if all(r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
