"""Client for ragtrail's environment server, shaped for TRL's GRPOTrainer `environment_factory`.

TRL creates one `RagtrailEnv` per rollout (pooled and reused across batches). Before each
generation it calls ``reset(**row)`` with every column of the dataset row; the text returned by
``reset`` is appended to the last user message. The public methods other than ``reset``
(`search`, `answer`) are offered to the model as tools: TRL turns their signatures and
Google-style docstrings into JSON schemas for the chat template, parses ``<tool_call>`` blocks
out of the generated text, calls the method, and feeds the returned string back as a tool
turn. Anything that should not become a tool is private (leading underscore).

Rewards are read afterwards by `episode_reward`, a TRL reward function that receives the
environment instances through its ``environments`` keyword.

Wire format (OpenEnv-style HTTP, JSON bodies):
    POST /reset  {"episode_id", "question_id", "seed"?}  -> {"observation": {"text", ...}, "reward", "done"}
    POST /step   {"action": {...}, "episode_id"}        -> {"observation": {"text", "metadata", ...}, "reward", "done"}
    GET  /health                                          -> {"status": "healthy"}
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
import uuid

EPISODE_OVER = "The episode has ended; no further actions are accepted."


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class EnvError(RuntimeError):
    """The environment server could not be reached or refused a request."""


def _http(url: str, method: str, path: str, body: dict | None, token: str | None, timeout: float) -> dict:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8") or "{}")
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read().decode("utf-8")).get("error") or err.reason
        except (ValueError, AttributeError):
            message = err.reason
        raise EnvError(f"{method} {path} -> HTTP {err.code}: {message}") from None
    except (urllib.error.URLError, OSError) as err:
        raise EnvError(f"cannot reach the environment server at {url} ({getattr(err, 'reason', err)})") from None


def check_server(url: str, token: str | None = None, timeout: float = 5.0) -> dict:
    """GET /health; raise EnvError when the server is down or unhealthy."""
    health = _http(url, "GET", "/health", None, token, timeout)
    if health.get("status") != "healthy":
        raise EnvError(f"environment server at {url} reports status {health.get('status')!r}")
    return health


class _Episode:
    """One retrieval episode on ragtrail's environment server; subclasses add the tools the model sees."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0):
        self._url, self._token, self._timeout = url, token, timeout
        self._clear()

    def _clear(self) -> None:
        self.episode_id: str | None = None
        self.question_id: str | None = None
        self.done = False
        self.step_rewards: list[float] = []
        self.outcome_reward: float | None = None
        self.metadata: dict = {}
        self.observation: dict = {}
        self.actions: list[dict] = []
        # One record per step the server executed: {"turn", "process", "valid"}. `turn` is the model
        # turn that issued the action (set by a trainer that counts turns, see prorag.py); -1 marks
        # the steps `_finish` sends for the rollout's last turn.
        self.steps: list[dict] = []
        self._turn = 0

    def _request(self, method: str, path: str, body: dict | None = None) -> dict:
        return _http(self._url, method, path, body, self._token, self._timeout)

    def reset(self, **kwargs) -> str | None:
        """Start a new episode for the dataset row's question; returns the observation to show the model."""
        self._clear()
        self.episode_id = uuid.uuid4().hex
        self.question_id = kwargs.get("question_id") or kwargs.get("id")
        body = {"episode_id": self.episode_id}
        if self.question_id is not None:
            body["question_id"] = str(self.question_id)
        if kwargs.get("seed") is not None:
            body["seed"] = int(kwargs["seed"])
        reply = self._request("POST", "/reset", body)
        self.episode_id = reply.get("episode_id") or self.episode_id
        self.done = bool(reply.get("done", False))
        self.observation = reply.get("observation") or {}
        text = self.observation.get("text") or ""
        return "\n\n" + text if text else None

    def _act(self, action: dict) -> str:
        if self.episode_id is None:
            return "No episode is running."
        if self.done:
            return EPISODE_OVER
        self.actions.append(action)
        try:
            reply = self._request("POST", "/step", {"action": action, "episode_id": self.episode_id})
        except EnvError as err:
            return f"Error: {err}"
        self.done = bool(reply.get("done", False))
        self.observation = reply.get("observation") or {}
        # OpenEnv's StepResponse has exactly observation/reward/done: details live in observation.metadata.
        self.metadata = self.observation.get("metadata") or reply.get("metadata") or {}
        # ragtrail puts the step's process reward in `reward`, except on the final step, whose `reward`
        # is the outcome; there the process reward travels as metadata.step_reward.
        step = self.metadata.get("step_reward") if self.done else reply.get("reward")
        if _finite(step):
            self.step_rewards.append(float(step))
        valid = self.observation.get("valid", True) is not False
        self.steps.append({"turn": self._turn, "process": float(step) if _finite(step) else 0.0, "valid": valid})
        outcome = self.metadata.get("outcome_reward", reply.get("reward")) if self.done else None
        if _finite(outcome):
            self.outcome_reward = float(outcome)
        return str((reply.get("observation") or {}).get("text", ""))

    def _finish(self, text: str) -> None:
        """Close an episode the model left open: its last reply goes to the server as raw text (the
        protocol may find an answer in it); if that does not end the episode, an empty answer does."""
        self._turn = -1  # these steps belong to the rollout's last turn
        if self.episode_id is not None and not self.done:
            self._act({"raw": text})
        if self.episode_id is not None and not self.done:
            self._act({"tool": "answer", "text": ""})

    @property
    def total_reward(self) -> float:
        """Episode return: the sum of the step (process) rewards plus the outcome reward."""
        return sum(self.step_rewards) + (self.outcome_reward or 0.0)


class RagtrailEnv(_Episode):
    """An episode driven by tool calls: the model sees `search` and `answer`."""

    def search(self, query: str) -> str:
        """Search the knowledge base and read the top passages.

        Args:
            query: A short search query, e.g. the name of the entity whose fact you need.

        Returns:
            The retrieved passages, one per line, each with its title.
        """
        return self._act({"tool": "search", "query": query})

    def answer(self, text: str) -> str:
        """Give the final answer and end the episode.

        Args:
            text: The short final answer, a few words at most.

        Returns:
            Feedback on the answer.
        """
        return self._act({"tool": "answer", "text": text})




def _last_assistant_text(completion) -> str:
    if isinstance(completion, str):
        return completion
    for message in reversed(completion or []):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def _finish_episodes(completions, environments, log_metric) -> None:
    """Close every episode still open (see `_Episode._finish`) and log the episodes' mean rewards."""
    if environments is None:
        raise ValueError("the ragtrail reward functions need GRPOTrainer's `environments` (use environment_factory)")
    for completion, env in zip(completions, environments, strict=True):
        env._finish(_last_assistant_text(completion))
    if log_metric is not None and environments:
        count = len(environments)
        log_metric("env/process_reward", sum(sum(e.step_rewards) for e in environments) / count)
        log_metric("env/outcome_reward", sum(e.outcome_reward or 0.0 for e in environments) / count)
        log_metric("env/tool_actions", sum(sum("tool" in a for a in e.actions) for e in environments) / count)


def episode_reward(completions, environments=None, log_metric=None, **kwargs) -> list[float]:
    """TRL reward function: each rollout's episode return (step rewards + outcome reward).

    Episodes still open when generation stops are closed first by sending the model's last
    reply as a raw action, so that the server applies its own parsing and scoring.
    """
    _finish_episodes(completions, environments, log_metric)
    return [env.total_reward for env in environments]


def outcome_reward(completions, environments=None, log_metric=None, **kwargs) -> list[float]:
    """TRL reward function for ProRAG: the outcome reward alone (the server's reward on the final step).

    The step rewards are not summed in: ProRAG's trainer (prorag.py) reads them from the episodes
    and adds them per token. Open episodes are closed first, as in `episode_reward`.
    """
    _finish_episodes(completions, environments, log_metric)
    return [env.outcome_reward or 0.0 for env in environments]
