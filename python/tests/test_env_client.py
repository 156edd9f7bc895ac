"""RagtrailEnv (the environment_factory class) against ragtrail's real serve-env."""

import json
import urllib.request

import pytest
from transformers.utils import get_json_schema

from ragtrail_trl.env_client import EPISODE_OVER, EnvError, RagtrailEnv, check_server, episode_reward


def question_of(world, kind="single-hop"):
    with open(world["questions"]) as handle:
        return next(q for q in map(json.loads, handle) if q["metadata"]["type"] == kind)


def test_episode(env_server, world):
    question = question_of(world)
    env = RagtrailEnv(env_server.url, token="tok")
    observation = env.reset(prompt=[], question_id=question["id"])
    assert observation == "\n\nQuestion: " + question["question"]
    sub = question["metadata"]["decomposition"][0]["question"]
    docs = env.search(sub)
    assert docs.startswith("Doc 1 (Title: ")
    assert env.answer(question["golden_answers"][0]) == "Final answer recorded."
    assert env.done and env.outcome_reward == pytest.approx(1.0)
    # Two step rewards from the PRM (the search, and the answer step's own score), then the outcome.
    assert len(env.step_rewards) == 2 and all(isinstance(r, float) for r in env.step_rewards)
    assert env.total_reward == pytest.approx(sum(env.step_rewards) + 1.0)
    assert env.search("more") == EPISODE_OVER  # nothing is sent once the episode is over
    state = json.load(urllib.request.urlopen(
        urllib.request.Request(f"{env_server.url}/state?episode_id={env.episode_id}", headers={"Authorization": "Bearer tok"})
    ))  # fmt: skip
    assert state["step_count"] == 2 and state["done"] is True
    [episode] = env_server.episodes()
    assert episode["id"] == question["id"] and episode["meta"]["stepRewards"] == pytest.approx(env.step_rewards)


def test_reward_function_closes_open_episodes(env_server, world):
    question = question_of(world)
    answered, silent, mute = (RagtrailEnv(env_server.url, token="tok") for _ in range(3))
    for env in (answered, silent, mute):
        env.reset(question_id=question["id"])
    answered.answer("certainly not this")
    completions = [
        [{"role": "assistant", "content": ""}],
        [{"role": "assistant", "content": f"It is <answer>{question['golden_answers'][0]}</answer>"}],
        [{"role": "assistant", "content": "no idea"}],
    ]
    metrics = {}
    rewards = episode_reward(completions, environments=[answered, silent, mute], log_metric=metrics.__setitem__)
    # The silent episode's raw text carried Search-R1's <answer> tag: scored F1 = 1. The mute one
    # held no answer, so it was closed with an empty one: F1 = 0.
    assert rewards == [pytest.approx(answered.total_reward), pytest.approx(1.0 + sum(silent.step_rewards)), pytest.approx(sum(mute.step_rewards))]
    assert silent.outcome_reward == 1.0 and mute.outcome_reward == 0.0
    assert [e["prediction"] for e in env_server.episodes()] == ["certainly not this", question["golden_answers"][0], ""]
    assert set(metrics) == {"env/process_reward", "env/outcome_reward", "env/tool_actions"}


def test_errors(env_server):
    assert check_server(env_server.url)["status"] == "healthy"
    with pytest.raises(EnvError, match="401"):
        RagtrailEnv(env_server.url, token="wrong").reset(question_id="q000000")
    with pytest.raises(EnvError, match="unknown question_id"):
        RagtrailEnv(env_server.url, token="tok").reset(question_id="nope")
    with pytest.raises(EnvError, match="cannot reach"):
        check_server("http://127.0.0.1:9", timeout=1)


def test_tools_are_what_trl_exposes():
    """TRL offers every public method except reset/get_reward as a tool, described by its JSON schema."""
    import inspect

    env = RagtrailEnv("http://127.0.0.1:9")
    public = [name for name, _ in inspect.getmembers(env, inspect.ismethod) if not name.startswith("_")]
    assert sorted(public) == ["answer", "reset", "search"]
    schema = get_json_schema(env.search)["function"]
    assert schema["name"] == "search" and schema["parameters"]["required"] == ["query"]
    assert get_json_schema(env.answer)["function"]["parameters"]["properties"]["text"]["type"] == "string"
