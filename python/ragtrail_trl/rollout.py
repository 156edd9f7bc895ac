"""Multi-turn rollouts in any of ragtrail's text protocols, for TRL's GRPOTrainer (`rollout_func`).

The tool-calling protocol ("tools") goes through TRL's own tool loop (env_client.RagtrailEnv). Every
other protocol (search-r1, prorag, arena, reasonrag, research, ...) is the environment server's:
the server renders the protocol's prompt for each state and parses the model's text with the
protocol's own parser, so the rewards see exactly what the model wrote. This module only generates:

    reset  -> the protocol's first prompt (chat messages), its stop strings and token budget
    loop   -> generate one turn from the token sequence so far (stopping at the protocol's stop
              strings or the end of the turn), send the text as {"raw": text}, and, unless the
              episode ended, append the protocol's next prompt as environment tokens (env_mask 0)

Per rollout the trainer sees one sequence: the first prompt, then model turns (trained) and
environment text (not trained, advantage 0), exactly as TRL's tool loop lays out tool results.

Two kinds of protocol exist. Most extend one conversation (search-r1, prorag: the next prompt is the
previous one plus the model's turn plus the protocol's reply); their sequence is token for token the
context the protocol shows at evaluation. Others rebuild their whole prompt each step from the state
(reasonrag, research, search-o1). One GRPO sequence cannot hold several separate contexts, so their
later prompts are appended as a user turn that carries the protocol's complete new prompt
("restated" turns, counted in the metric `protocol/restated_turns`): the model still reads the
protocol's text for the state, after the earlier turns. Generation and training use the same tokens,
so the policy ratio is exact either way; docs/guides/trl.md lists this difference.
"""

from __future__ import annotations

import json

import torch

from .env_client import _Episode


class ProtocolEpisode(_Episode):
    """An episode whose actions are the protocol's raw text. No public methods besides `reset`, so
    TRL offers the model no tools; `reset` is a no-op because the rollout starts episodes itself
    (TRL resets the environments it holds before each batch)."""

    def reset(self, **kwargs) -> None:
        return None

    def _start(self, question_id: str | None, seed: int | None = None) -> dict:
        kwargs = {"question_id": question_id} if question_id is not None else {}
        if seed is not None:
            kwargs["seed"] = seed
        _Episode.reset(self, **kwargs)
        return self.observation

    def _turn_text(self, text: str, turn: int, final: bool = False) -> dict:
        self._turn = turn
        self.transcript.append(text)
        # final: the rollout can generate no more, so the server ends the episode after this text
        # and scores it as it stands (no invented answer that `reward --texts` would not see).
        self._act({"raw": text, "final": True} if final else {"raw": text})
        return self.observation

    def _clear(self) -> None:
        super()._clear()
        # The episode as text: model turns, and for protocols that extend one conversation the
        # protocol's insertions between them (<information>, <retrieval>, ...). See `episode_text`.
        self.transcript: list[str] = []
        self.extends = True


def episode_text(episode: ProtocolEpisode) -> str:
    """The episode's text as `ragtrail reward --texts` reads a "response": the model turns with the
    protocol's insertions for a protocol that extends one conversation, else the last model turn
    (the same rule as ragtrail's trajectoryEpisode)."""
    if episode.extends:
        return "".join(episode.transcript)
    return episode.transcript[-1] if episode.transcript else ""


def prompt_key(messages) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def flatten(messages: list[dict]) -> str:
    """A rebuilt prompt as one user turn: its messages' texts in order, system text first."""
    return "\n\n".join(str(m.get("content", "")) for m in messages if m.get("content"))


def cut_reply(ids: list[int], tokenizer, stop: list[str], eos: set[int], pad: int | None) -> list[int]:
    """A generated turn up to and including its first end-of-turn token, or up to the end of its first
    stop string (the protocol's, e.g. </search>), whichever comes first; padding dropped."""
    out: list[int] = []
    for token in ids:
        if pad is not None and token == pad and token not in eos:
            break
        out.append(token)
        if token in eos:
            break
    if stop:
        # The shortest prefix whose text holds a stop string (HF's stop_strings stops there too, but a
        # batched generate keeps other rows going, so each row is cut here).
        text = tokenizer.decode(out, skip_special_tokens=False)
        if any(s in text for s in stop):
            for end in range(1, len(out) + 1):
                if any(s in tokenizer.decode(out[:end], skip_special_tokens=False) for s in stop):
                    return out[:end]
    return out


class ProtocolRollout:
    """`rollout_func` for GRPOTrainer: one episode per prompt on ragtrail's environment server.

    `rows` are the training rows ({"prompt", "question_id"}): a prompt identifies its question, since
    TRL hands the rollout the prompts alone. After each call `trainer.environments` holds the
    episodes, in the prompts' order, so the reward functions of env_client (and ProRAG's per-turn
    step scores) read them as they read TRL's own environments."""

    def __init__(self, env: dict, rows: list[dict], max_turns: int = 16, log_path: str | None = None):
        self.url, self.token, self.timeout = env["url"], env.get("token"), float(env.get("timeout", 60))
        # rollouts.jsonl: one {episode_id, question_id, response, turns, extends} per episode, the
        # response in the form `ragtrail reward --texts` reads (episode_text).
        self.log_path = log_path
        if log_path:
            open(log_path, "w").close()
        self.question_of = {prompt_key(r["prompt"]): str(r["question_id"]) for r in rows}
        self.max_turns = max_turns
        self.restated_turns = 0
        self.drift_chars = 0

    def served_protocol(self) -> str | None:
        """The protocol the server renders and parses (its GET /metadata names it)."""
        from .env_client import _http

        return _http(self.url, "GET", "/metadata", None, self.token, self.timeout).get("protocol")

    def __call__(self, prompts: list, trainer) -> dict:
        from trl.models import unwrap_model_for_generation

        self.restated_turns = self.drift_chars = 0  # this call's, logged per batch
        tokenizer = trainer._tokenizer
        budget = trainer.max_completion_length
        eos = {trainer._tokenizer.eos_token_id}
        pad = tokenizer.pad_token_id
        episodes = [ProtocolEpisode(self.url, token=self.token, timeout=self.timeout) for _ in prompts]
        rollouts = []
        for prompt, episode in zip(prompts, episodes, strict=True):
            question = self.question_of.get(prompt_key(prompt))
            if question is None:
                raise ValueError("a GRPO prompt matches no training row: the protocol rollout looks questions up by their rendered prompt")
            observation = episode._start(question)
            conversation = list(observation.get("prompt") or prompt)
            text = tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
            generation = observation.get("generation") or {}
            rollouts.append({
                "conversation": conversation, "text": text,
                "prompt_ids": tokenizer(text, add_special_tokens=False)["input_ids"],
                "completion": [], "mask": [], "turns": 0,
                "stop": list(generation.get("stop") or []), "turn_tokens": int(generation.get("max_tokens") or budget),
            })  # fmt: skip
        device = trainer.accelerator.device
        for turn in range(self.max_turns):
            active = [i for i, (r, e) in enumerate(zip(rollouts, episodes)) if not e.done and len(r["completion"]) < budget]
            if not active:
                break
            inputs = [torch.tensor(rollouts[i]["prompt_ids"] + rollouts[i]["completion"]) for i in active]
            width = max(len(x) for x in inputs)
            ids = torch.full((len(inputs), width), pad, dtype=torch.long)
            attention = torch.zeros((len(inputs), width), dtype=torch.long)
            for row, x in enumerate(inputs):
                ids[row, width - len(x) :] = x
                attention[row, width - len(x) :] = 1
            limit = max(min(rollouts[i]["turn_tokens"], budget - len(rollouts[i]["completion"])) for i in active)
            stops = sorted({s for i in active for s in rollouts[i]["stop"]})
            settings = {**trainer.generation_config.to_dict(), "max_new_tokens": limit, **({"stop_strings": stops} if stops else {})}
            config = trainer.generation_config.__class__.from_dict(settings)
            with (
                unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator, gather_deepspeed3_params=trainer.args.ds3_gather_for_generation) as model,
                torch.no_grad(),
            ):  # fmt: skip
                extra = {"tokenizer": tokenizer} if stops else {}  # the stop strings are matched on text
                out = model.generate(input_ids=ids.to(device), attention_mask=attention.to(device), generation_config=config, **extra)
            for row, i in enumerate(active):
                r, episode = rollouts[i], episodes[i]
                room = min(r["turn_tokens"], budget - len(r["completion"]))
                reply = cut_reply(out[row, width:].tolist(), tokenizer, r["stop"], eos, pad)[:room]
                r["completion"] += reply
                r["mask"] += [1] * len(reply)
                reply_text = tokenizer.decode(reply, skip_special_tokens=True)
                final = len(r["completion"]) >= budget or turn == self.max_turns - 1
                observation = episode._turn_text(reply_text, r["turns"], final)
                r["turns"] += 1
                sequence = r["text"] + tokenizer.decode(reply, skip_special_tokens=False)
                if episode.done or len(r["completion"]) >= budget:
                    r["text"] = sequence
                    continue
                following = list(observation.get("prompt") or [])
                known = len(r["conversation"])
                # The protocol extends the conversation: the old prompt, the model's turn, then its reply.
                extends = len(following) > known and following[:known] == r["conversation"] and following[known].get("role") == "assistant"
                if extends:
                    new_text = tokenizer.apply_chat_template(following, add_generation_prompt=True, tokenize=False)
                    # The protocol's insertions: the messages after the model's turn.
                    episode.transcript += [str(m.get("content", "")) for m in following[len(r["conversation"]) + 1 :]]
                    r["conversation"] = following
                else:
                    episode.extends = False
                    # A protocol that rebuilds its prompt: the whole new prompt as the next user turn.
                    self.restated_turns += 1
                    r["conversation"] = r["conversation"] + [{"role": "assistant", "content": reply_text}, {"role": "user", "content": flatten(following)}]
                    new_text = tokenizer.apply_chat_template(r["conversation"], add_generation_prompt=True, tokenize=False)
                shared = common_prefix(new_text, sequence)
                # Characters of the model's turn the protocol does not show again (e.g. trimmed space).
                self.drift_chars += len(sequence) - shared
                added = new_text[shared:]
                added_ids = tokenizer(added, add_special_tokens=False)["input_ids"]
                r["completion"] += added_ids
                r["mask"] += [0] * len(added_ids)
                r["text"] = sequence + added
        for r, episode in zip(rollouts, episodes):
            if r["completion"] and r["completion"][-1] not in eos and len(r["completion"]) < budget and episode.done:
                # The protocol ended the episode (e.g. at </answer>): not a truncated completion.
                r["completion"].append(trainer._tokenizer.eos_token_id)
                r["mask"].append(0)
        trainer.environments = episodes
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as handle:
                for r, episode in zip(rollouts, episodes):
                    record = {"episode_id": episode.episode_id, "question_id": episode.question_id, "response": episode_text(episode), "turns": r["turns"], "extends": episode.extends}
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        metrics = trainer._metrics["train" if trainer.model.training else "eval"]
        metrics["protocol/restated_turns"].append(float(self.restated_turns))
        metrics["protocol/drift_chars"].append(float(self.drift_chars))
        return {
            "prompt_ids": [r["prompt_ids"] for r in rollouts],
            "completion_ids": [r["completion"] for r in rollouts],
            "logprobs": None,
            "env_mask": [r["mask"] for r in rollouts],
        }
