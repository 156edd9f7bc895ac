"""The tiny model and its tokenizer: reloadable, deterministic, and fit for TRL's tool calling."""

import json

import pytest
import torch
from transformers import AutoModelForCausalLM
from trl.chat_template_utils import (
    is_chat_template_prefix_preserving,
    is_chat_template_stop_token_trained,
    parse_response,
    supports_tool_calling,
)

from ragtrail_trl.env_client import RagtrailEnv
from ragtrail_trl.tiny import build_tiny, load_classifier, load_tokenizer, tiny_classifier


@pytest.fixture(scope="module")
def tokenizer(tiny_dir):
    return load_tokenizer(tiny_dir)


def test_reload_by_path(tiny_dir, tokenizer):
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    assert model.config.hidden_size == 64 and model.config.num_hidden_layers == 2
    assert model.config.vocab_size == len(tokenizer)
    assert tokenizer.eos_token == "<|end|>" and tokenizer.pad_token == "<|pad|>"
    assert tokenizer.response_template is not None  # saved in tokenizer_config.json and restored
    classifier = load_classifier(tiny_dir)
    assert classifier.config.num_labels == 1
    ids = tokenizer("Which country is it?", return_tensors="pt")
    assert classifier(**ids).logits.shape == (1, 1)
    fresh = tiny_classifier(tokenizer, seed=1)
    assert fresh.config.num_labels == 1 and fresh(**ids).logits.shape == (1, 1)


def test_same_seed_same_model(world, tmp_path):
    first = build_tiny(tmp_path / "a", corpus=world["corpus"], seed=3, vocab_size=500)
    second = build_tiny(tmp_path / "b", corpus=world["corpus"], seed=3, vocab_size=500)
    assert json.load(open(f"{first}/tokenizer.json"))["model"] == json.load(open(f"{second}/tokenizer.json"))["model"]
    a = AutoModelForCausalLM.from_pretrained(first).state_dict()
    b = AutoModelForCausalLM.from_pretrained(second).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    other = AutoModelForCausalLM.from_pretrained(build_tiny(tmp_path / "c", corpus=world["corpus"], seed=4, vocab_size=500))
    assert not torch.equal(a["lm_head.weight"], other.state_dict()["lm_head.weight"])


def test_chat_template_roles_and_tools(tokenizer):
    env = RagtrailEnv("http://127.0.0.1:9")
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Who founded Nekastead?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"query": "Nekastead"}}}],
        },
        {"role": "tool", "name": "search", "content": "Doc 1 (Title: Nekastead) ..."},
        {"role": "assistant", "content": "Nobody knows."},
    ]
    text = tokenizer.apply_chat_template(messages, tools=[env.search, env.answer], tokenize=False)
    assert text.startswith("<|turn|>system\nBe brief.\n\n")
    assert '"name": "search"' in text and '"name": "answer"' in text  # both tool schemas listed
    assert '<tool_call>{"name": "search", "arguments": {"query": "Nekastead"}}</tool_call><|end|>' in text
    assert "<|turn|>tool\nDoc 1 (Title: Nekastead) ...<|end|>" in text
    assert text.endswith("<|turn|>assistant\nNobody knows.<|end|>\n")
    # What TRL checks before it accepts the template for tool calling and assistant-only loss.
    assert supports_tool_calling(tokenizer)
    assert is_chat_template_prefix_preserving(tokenizer)
    assert is_chat_template_stop_token_trained(tokenizer)


def test_response_parsing(tokenizer):
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Q?"}], add_generation_prompt=True, tokenize=True, return_dict=False
    )

    def parse(text):
        return parse_response(tokenizer, tokenizer(text, add_special_tokens=False)["input_ids"], prefix=prompt)

    call = parse('Let me look.<tool_call>{"name": "search", "arguments": {"query": "Rael Heandford"}}</tool_call><|end|>')
    assert call["content"] == "Let me look."
    assert call["tool_calls"] == [
        {"type": "function", "function": {"name": "search", "arguments": {"query": "Rael Heandford"}}}
    ]
    assert parse("Styprosian<|end|>") == {"role": "assistant", "content": "Styprosian"}
    broken = parse("<tool_call>{not json</tool_call><|end|>")  # TRL falls back to plain text
    assert "tool_calls" not in broken and "not json" in broken["content"]
