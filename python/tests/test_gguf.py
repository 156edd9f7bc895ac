"""GGUF export (ragtrail_trl.gguf_export) and ragtrail's `llama:` backend against transformers.

The export is read back with the `gguf` package; then the file is loaded by ragtrail's own llama
backend (node-llama-cpp's prebuilt CPU binary, through python/tests/llama_generate.ts) and must give
the token ids transformers' apply_chat_template gives and the greedy text transformers' generate gives.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import torch

from conftest import REPO

from ragtrail_trl.gguf_export import export_gguf, portable_chat_template
from ragtrail_trl.tiny import build_tiny


def _field(reader, key):
    field = reader.fields[key]
    return field.contents()


def test_export_writes_llama_metadata_tokenizer_and_template(tiny_dir, tmp_path):
    import gguf
    from transformers import AutoConfig, AutoTokenizer

    out = tmp_path / "tiny.gguf"
    summary = export_gguf(tiny_dir, str(out))
    config = AutoConfig.from_pretrained(tiny_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    reader = gguf.GGUFReader(str(out))
    assert _field(reader, "general.architecture") == "llama"
    assert _field(reader, "llama.block_count") == config.num_hidden_layers
    assert _field(reader, "llama.embedding_length") == config.hidden_size
    assert _field(reader, "llama.attention.head_count") == config.num_attention_heads
    assert _field(reader, "llama.attention.head_count_kv") == config.num_key_value_heads
    assert _field(reader, "llama.context_length") == config.max_position_embeddings
    assert _field(reader, "tokenizer.ggml.model") == "gpt2"
    tokens = _field(reader, "tokenizer.ggml.tokens")
    assert len(tokens) == config.vocab_size == len(tokenizer)
    assert tokens[tokenizer.eos_token_id] == "<|end|>"
    assert _field(reader, "tokenizer.ggml.eos_token_id") == tokenizer.eos_token_id
    types = _field(reader, "tokenizer.ggml.token_type")
    assert types[tokenizer.convert_tokens_to_ids("<|turn|>")] == gguf.TokenType.CONTROL
    assert types[tokenizer.convert_tokens_to_ids("<tool_call>")] == gguf.TokenType.USER_DEFINED
    assert _field(reader, "tokenizer.ggml.add_bos_token") is False
    template = _field(reader, "tokenizer.chat_template")
    assert "{%- generation" in tokenizer.chat_template and "generation -%}" not in template.replace("add_generation_prompt", "")
    assert template == portable_chat_template(tokenizer.chat_template)
    # 2 layers x 9 tensors + embeddings, final norm, output head
    assert summary["tensors"] == len(reader.tensors) == 2 * 9 + 3


def test_portable_template_renders_what_the_original_renders(tiny_dir):
    """jinja2 (transformers' engine) gives the same text for both templates: only the markers differ."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Who wrote it?"},
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"query": "author"}}}]},
        {"role": "tool", "name": "search", "content": "Doc 1 (Title: X) text"},
    ]
    original = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    portable = tokenizer.apply_chat_template(messages, chat_template=portable_chat_template(tokenizer.chat_template), add_generation_prompt=True, tokenize=False)
    assert portable == original and original.endswith("<|turn|>assistant\n")


def _node_generate(gguf_path: str, requests: list[dict]) -> list[dict]:
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH")
    result = subprocess.run(
        ["node", "--import", "tsx", "python/tests/llama_generate.ts", gguf_path],
        cwd=REPO, input=json.dumps(requests), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if result.returncode == 3:
        pytest.skip(f"node-llama-cpp is not installed (bash scripts/install-node-llama-cpp.sh installs its CPU build): {result.stderr.strip()[:300]}")
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _hf_greedy(checkpoint: str, messages_list: list[list[dict]], max_new_tokens: int):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
    out = []
    for messages in messages_list:
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
        with torch.no_grad():
            gen = model.generate(torch.tensor([ids]), max_new_tokens=max_new_tokens, do_sample=False, output_scores=True, return_dict_in_generate=True)
        new = gen.sequences[0][len(ids):].tolist()
        gaps = [float(torch.topk(s[0], 2).values.diff().abs()) for s in gen.scores]
        out.append({"ids": ids, "text": tokenizer.decode(new, skip_special_tokens=True), "gaps": gaps})
    return out


def test_llama_backend_gives_transformers_prompt_ids_and_greedy_text(world, tool_model, tmp_path):
    """The SFT-warmed tiny model (tools template): same prompt ids and same greedy continuation."""
    questions = [json.loads(line) for line in open(world["questions"])][:8]
    messages_list = [
        [{"role": "system", "content": "Answer with the tools."}, {"role": "user", "content": f"Question: {q['question']}"}]
        for q in questions
    ]
    # A later turn too: an assistant tool call and a tool result rendered by the template.
    messages_list.append(
        messages_list[0]
        + [
            {"role": "assistant", "content": "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"nationality\"}}</tool_call>"},
            {"role": "user", "content": "Doc 1 (Title: A) one\nDoc 2 (Title: B) two"},
        ]
    )
    gguf_path = str(tmp_path / "tool.gguf")
    export_gguf(tool_model, gguf_path)
    llama = _node_generate(gguf_path, [{"messages": m, "maxTokens": 40} for m in messages_list])
    hf = _hf_greedy(tool_model, messages_list, 40)
    for h, l in zip(hf, llama):
        assert l["ids"] == h["ids"]
    same = [h["text"] == l["text"] for h, l in zip(hf, llama)]
    # A float32 model in two engines sums in different orders: only a near-tie (HF's top two logits
    # within 1e-3) may turn a greedy step the other way.
    for h, l, ok in zip(hf, llama, same):
        if not ok:
            k = next(i for i in range(min(len(h["text"]), len(l["text"])) + 1) if h["text"][:i + 1] != l["text"][:i + 1])
            assert min(h["gaps"]) < 1e-3, f"greedy texts differ at character {k} without a near-tie:\n{h['text']!r}\n{l['text']!r}"
    assert sum(same) >= len(same) - 1, f"{sum(same)}/{len(same)} greedy continuations agree"
    assert any(len(h["text"]) > 10 for h in hf)


def test_search_r1_template_prompt_ids(world, tmp_path):
    """The LLM loop's template (search-r1): multi-turn prompts tokenize the same on both sides."""
    from transformers import AutoTokenizer

    model_dir = build_tiny(tmp_path / "sr1", corpus=world["corpus"], questions=world["questions"], template="search-r1")
    gguf_path = str(tmp_path / "sr1.gguf")
    export_gguf(model_dir, gguf_path)
    messages = [
        {"role": "user", "content": "Answer the question below.\nQuestion: Who wrote The Last Carnival?\n"},
        {"role": "assistant", "content": "<think> I need the author. </think>\n<search> The Last Carnival author </search>"},
        {"role": "user", "content": "\n\n<information>Doc 1 (Title: The Last Carnival) a novel</information>\n\n"},
    ]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
    llama = _node_generate(gguf_path, [{"messages": messages, "maxTokens": 4}])
    assert llama[0]["ids"] == ids
