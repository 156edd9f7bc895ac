"""The OpenAI-compatible server with log-probabilities (serve_lm.py), against the tiny model's own
forward passes: greedy text and token log-probabilities equal what the model computes directly, the top
alternatives are the model's top-k, an echoed prompt is scored token by token, stop strings cut."""

from __future__ import annotations

import json
import math
import threading
import urllib.request

import pytest


@pytest.fixture(scope="module")
def served(tiny_dir):
    from ragtrail_trl.serve_lm import LanguageModel, serve

    lm = LanguageModel(tiny_dir)
    server = serve(lm, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield lm, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=60).read())


def direct_logprobs(lm, ids: list[int]):
    import torch

    with torch.no_grad():
        return torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)


def test_greedy_chat_reports_the_models_own_token_logprobs_and_top_alternatives(served):
    lm, url = served
    messages = [{"role": "user", "content": "Question: who directed the film?"}]
    reply = post(url + "/chat/completions", {"messages": messages, "max_tokens": 6, "temperature": 0, "logprobs": True, "top_logprobs": 3})
    content = reply["choices"][0]["logprobs"]["content"]
    assert 1 <= len(content) <= 6
    ids = lm.encode(lm.chat_prompt(messages))
    # Greedy, step by step on the model itself: each token is the argmax, reported with its
    # log-softmax value; the first alternative is that same token.
    for step in content:
        row = direct_logprobs(lm, ids)[-1]
        tok = int(row.argmax())
        assert step["token"] == lm.tokenizer.decode([tok])
        assert math.isclose(step["logprob"], float(row[tok]), abs_tol=1e-4)
        assert len(step["top_logprobs"]) == 3
        assert math.isclose(step["top_logprobs"][0]["logprob"], float(row.max()), abs_tol=1e-4)
        ids = ids + [tok]


def test_echo_scores_every_prompt_token(served):
    lm, url = served
    prompt = "The Silent Harbor is a film directed by Maren Tolvik."
    reply = post(url + "/completions", {"prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True})
    lp = reply["choices"][0]["logprobs"]
    ids = lm.encode(prompt)
    assert reply["choices"][0]["text"].startswith(prompt)
    assert lp["token_logprobs"][0] is None
    logp = direct_logprobs(lm, ids)
    for i in range(1, len(ids)):
        assert math.isclose(lp["token_logprobs"][i], float(logp[i - 1][ids[i]]), abs_tol=1e-4)
    # text_offset splits the prompt's tokens from the generated one.
    assert [o for o in lp["text_offset"] if o < len(prompt)] == lp["text_offset"][: len(ids)]
    assert len(lp["tokens"]) == len(ids) + 1


def test_stop_strings_cut_the_text_and_its_tokens(served):
    lm, url = served
    body = {"prompt": "Question: where?", "max_tokens": 12, "temperature": 0, "logprobs": 1}
    full = post(url + "/completions", body)["choices"][0]
    text = full["text"]
    assert text, "the tiny model generated nothing"
    stop = text[len(text) // 2 :][:2] if len(text) > 2 else text
    cut = post(url + "/completions", {**body, "stop": [stop]})["choices"][0]
    assert cut["finish_reason"] == "stop" and cut["text"] == text[: text.find(stop)]
    assert "".join(cut["logprobs"]["tokens"]).startswith(cut["text"])


def test_seeded_samples_repeat_and_differ_by_index(served):
    _, url = served
    body = {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 8, "temperature": 1.0, "seed": 7, "n": 2}
    a = [c["message"]["content"] for c in post(url + "/chat/completions", body)["choices"]]
    b = [c["message"]["content"] for c in post(url + "/chat/completions", body)["choices"]]
    assert a == b and len(a) == 2
