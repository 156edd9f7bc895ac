"""GRPO in each agent protocol's own text (rollout.py) against ragtrail's real serve-env.

For every built-in protocol a short TRL run with the tiny model: the server parses each turn of the model's
text with the protocol's parser, and the reward components it gives each episode equal those that
`ragtrail reward --texts` computes from the same text (rollouts.jsonl, written by the run)."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import REPO
from env_server import EnvServer

# protocol -> the reward scheme the server scores it with (a scheme that reads that protocol's text)
PROTOCOLS = {
    "search-r1": "lws-stage1",
    "prorag": "f1",
    "arena": "arena",
    "reasonrag": "f1",
    "research": "em",
    "direct": "f1",
    "cot": "f1",
    "rag": "f1",
    "react": "f1",
    "search-o1": "f1",
}
GRPO = {"num_generations": 2, "per_device_train_batch_size": 2, "learning_rate": 1e-3, "seed": 0, "max_steps": 1,
        "max_completion_length": 160, "max_tool_calling_iterations": 3, "temperature": 1.0}  # fmt: skip


def _reward_texts(texts, scheme: str, agent: str, tmp_path) -> dict[str, dict]:
    source, out = tmp_path / "texts.jsonl", tmp_path / "scored.jsonl"
    source.write_text("".join(json.dumps(t) + "\n" for t in texts))
    args = ["node", "--import", "tsx", "src/cli/main.ts", "reward", "--texts", str(source), "--scheme", scheme, "--agent", agent, "--out", str(out)]
    result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_protocol_rollout_rewards_match_reward_texts(protocol, run_training, world, tmp_path):
    scheme = PROTOCOLS[protocol]
    with EnvServer(world, tmp_path, agent=protocol, reward=scheme) as server:
        summary = run_training(
            {"algo": "grpo", "data": world["questions"], "env": {"url": server.url, "token": "tok", "protocol": protocol}, "trainer": GRPO},
            name=f"grpo-{protocol}",
        )
        episodes = {e["meta"]["episodeId"]: e for e in server.episodes()}
    assert summary["steps"] == 1
    rollouts = [json.loads(line) for line in open(f"{summary['output_dir']}/rollouts.jsonl")]
    assert len(rollouts) == 2 and all(r["episode_id"] in episodes for r in rollouts)
    for r in rollouts:
        # Every model turn reached the server as the protocol's text (a raw action per turn).
        assert len(episodes[r["episode_id"]]["steps"]) >= r["turns"] >= 1
    texts = [
        {"id": r["episode_id"], "question": episodes[r["episode_id"]]["question"], "golden_answers": episodes[r["episode_id"]]["answers"], "response": r["response"]}
        for r in rollouts
    ]  # fmt: skip
    scored = _reward_texts(texts, scheme, protocol, tmp_path)
    for r in rollouts:
        served = episodes[r["episode_id"]]["meta"]["components"]
        assert scored[r["episode_id"]]["components"] == pytest.approx(served), (protocol, r["response"][:300])


def test_protocol_must_match_the_server(run_training, world, tmp_path):
    from ragtrail_trl import train

    with EnvServer(world, tmp_path, agent="prorag") as server:
        config = {"algo": "grpo", "model": "tiny", "tiny": {"corpus": world["corpus"], "questions": world["questions"]},
                  "data": world["questions"], "output_dir": str(tmp_path / "x"),
                  "env": {"url": server.url, "token": "tok", "protocol": "search-r1"}, "trainer": GRPO}  # fmt: skip
        path = tmp_path / "c.json"
        path.write_text(json.dumps(config))
        assert train.main(["--config", str(path)]) == 2


@pytest.fixture(scope="module")
def search_r1_model(world, tiny_dir, tmp_path_factory) -> str:
    """The tiny model after a short SFT on one search-r1 episode shape per question: a <search>, the
    server's <information>, then an <answer> (texts taken from the server, as GRPO will see them)."""
    from conftest import train_config
    from ragtrail_trl.rollout import ProtocolEpisode

    root = tmp_path_factory.mktemp("sr1-model")
    with open(world["questions"]) as handle:
        ids = [row["id"] for row in map(json.loads, handle) if row["metadata"].get("split") == "train"]
    conversations = []
    with EnvServer(world, root, agent="search-r1") as server:
        for qid in ids:
            episode = ProtocolEpisode(server.url, token=server.token)
            episode._start(qid)
            observation = episode._turn_text("<search> nationality </search>", 0)
            conversations.append({"messages": observation["prompt"] + [{"role": "assistant", "content": "<answer> yes </answer>"}]})
            episode._turn_text("<answer> yes </answer>", 1)
    data = root / "sr1_sft.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in conversations))
    warm = train_config(
        {"algo": "sft", "data": str(data),
         "trainer": {"max_steps": 100, "learning_rate": 5e-3, "lr_scheduler_type": "constant", "per_device_train_batch_size": 2, "logging_steps": 10}},
        str(root / "warmup"), world, tiny_dir,
    )  # fmt: skip
    assert warm["last_loss"] < 0.05
    return warm["output_dir"]


@pytest.mark.parametrize("algo", ["grpo", "prorag"])
def test_multi_turn_protocol_rollout(algo, search_r1_model, run_training, world, tmp_path):
    """After the warm-up the model searches, reads the server's <information> (environment tokens)
    and answers: two turns per episode, each parsed by the server, rewards equal to `reward --texts`.
    ProRAG's trainer scores each turn with the PRM's step reward through the same rollouts."""
    extra = {"dual_weight": 0.3} if algo == "prorag" else {}
    with EnvServer(world, tmp_path, agent="search-r1", reward="lws-stage1", prm=world["prm"] if algo == "prorag" else None) as server:
        summary = run_training(
            {"algo": algo, "model": search_r1_model, "data": world["questions"], "env": {"url": server.url, "token": "tok", "protocol": "search-r1"},
             "trainer": {**GRPO, "max_completion_length": 400, "temperature": 0.1}, **extra},
            name=f"multi-{algo}",
        )  # fmt: skip
        episodes = {e["meta"]["episodeId"]: e for e in server.episodes()}
    rollouts = [json.loads(line) for line in open(f"{summary['output_dir']}/rollouts.jsonl")]
    assert [r["turns"] for r in rollouts] == [2, 2]
    for r in rollouts:
        steps = episodes[r["episode_id"]]["steps"]
        assert [s["action"]["type"] for s in steps] == ["search", "answer"]
        assert steps[0]["action"]["query"] == "nationality" and "<information>" in r["response"]
    texts = [
        {"id": r["episode_id"], "question": episodes[r["episode_id"]]["question"], "golden_answers": episodes[r["episode_id"]]["answers"], "response": r["response"]}
        for r in rollouts
    ]  # fmt: skip
    scored = _reward_texts(texts, "lws-stage1", "search-r1", tmp_path)
    for r in rollouts:
        assert scored[r["episode_id"]]["components"] == pytest.approx(episodes[r["episode_id"]]["meta"]["components"])
    if algo == "prorag":
        # both turns carry a step score (the PRM's, through the search-r1 protocol's steps)
        logged = [json.loads(line) for line in open(f"{summary['output_dir']}/log_history.jsonl")]
        assert logged[0]["prorag/scored_token_fraction"] == pytest.approx(1.0)
