"""Export a Llama checkpoint (e.g. the LLM loop's tiny model) to one GGUF file for llama.cpp.

    python -m ragtrail_trl.gguf_export CHECKPOINT OUT.gguf [--dtype f32|f16]

The file carries what llama.cpp needs to run the model with no other file beside it:

* the weights under llama.cpp's tensor names, with the query and key projections permuted from
  Hugging Face's rotary layout (rotate-half) to llama.cpp's (adjacent pairs), as llama.cpp's own
  converter does for the llama architecture;
* the hyperparameters (context, width, layers, heads, RMS-norm epsilon, rope base);
* the tokenizer: a byte-level BPE ("gpt2" in GGUF terms) with its tokens, token types, merges,
  special ids, and the chat template.

The chat template of ragtrail's tiny models marks assistant text with ``{% generation %}`` /
``{% endgeneration %}`` (a transformers extension for assistant-token masks, unknown to other
Jinja engines). The exported template has them replaced by an always-true ``if``, so it renders the
same text everywhere.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# llama.cpp runs the GPT-2 split regex on text before BPE for this value of tokenizer.ggml.pre;
# it is the regex of the `tokenizers` ByteLevel pre-tokenizer (use_regex=True) that tiny.py trains with.
PRE_TOKENIZER = "gpt-2"

_GENERATION_TAG = re.compile(r"\{%(-?)\s*(end)?generation\s*(-?)%\}")


def portable_chat_template(template: str) -> str:
    """`template` with transformers' {% generation %} markers turned into plain Jinja (same output)."""

    def swap(m: re.Match) -> str:
        left, end, right = m.group(1), m.group(2), m.group(3)
        return "{%" + left + (" endif " if end else " if true ") + right + "%}"

    return _GENERATION_TAG.sub(swap, template)


def _permute(weights, heads: int):
    """Rows of a q/k projection from rotate-half order to interleaved pairs, per head."""
    rows = weights.shape[0]
    return weights.reshape(heads, 2, rows // heads // 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def _rope_theta(config) -> float:
    params = getattr(config, "rope_parameters", None) or {}
    if isinstance(params, dict):
        kind = params.get("rope_type", "default")
        if kind not in ("default", None):
            raise ValueError(f"rope scaling {kind!r} is not exported; only plain rotary embeddings are")
        if "rope_theta" in params:
            return float(params["rope_theta"])
    return float(getattr(config, "rope_theta", 10000.0))


def _tokenizer_fields(tokenizer) -> dict:
    """Tokens (by id), their GGUF types and the BPE merges of a byte-level BPE fast tokenizer."""
    import gguf

    state = json.loads(tokenizer.backend_tokenizer.to_str())
    model = state.get("model", {})
    if model.get("type") != "BPE":
        raise ValueError(f"the tokenizer is {model.get('type')!r}; only byte-level BPE tokenizers are exported")
    pre = json.dumps(state.get("pre_tokenizer"))
    if "ByteLevel" not in pre:
        raise ValueError("the tokenizer has no ByteLevel pre-tokenizer; only byte-level BPE tokenizers are exported")
    vocab = tokenizer.get_vocab()
    size = max(vocab.values()) + 1
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [gguf.TokenType.UNUSED] * size
    for text, i in vocab.items():
        tokens[i] = text
        types[i] = gguf.TokenType.NORMAL
    for i, added in tokenizer.added_tokens_decoder.items():
        # Special tokens are control tokens (matched in a prompt only when special tokens are
        # parsed, never printed); other added tokens, like <tool_call>, are matched in any text.
        types[i] = gguf.TokenType.CONTROL if added.special else gguf.TokenType.USER_DEFINED
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    return {"tokens": tokens, "types": types, "merges": merges}


def export_gguf(checkpoint: str, out: str, dtype: str = "f32") -> dict:
    """Write `checkpoint` (a transformers Llama causal LM directory) to `out` as GGUF; return a summary."""
    import gguf
    import numpy as np
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    if dtype not in ("f32", "f16"):
        raise ValueError(f"dtype {dtype!r}: use f32 or f16")
    config = AutoConfig.from_pretrained(checkpoint)
    if config.model_type != "llama":
        raise ValueError(f"{checkpoint} is a {config.model_type!r} model; this exporter writes llama models only")
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32)
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads

    writer = gguf.GGUFWriter(out, arch="llama")
    writer.add_name(Path(checkpoint).resolve().name)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if dtype == "f32" else gguf.LlamaFileType.MOSTLY_F16)
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(head_dim)
    if head_dim * heads != config.hidden_size:
        writer.add_key_length(head_dim)
        writer.add_value_length(head_dim)
    writer.add_rope_freq_base(_rope_theta(config))
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.vocab_size)

    fields = _tokenizer_fields(tokenizer)
    if len(fields["tokens"]) > config.vocab_size:
        raise ValueError(f"the tokenizer has {len(fields['tokens'])} tokens but the model only {config.vocab_size} embeddings")
    while len(fields["tokens"]) < config.vocab_size:  # embeddings past the tokenizer (padding rows)
        fields["tokens"].append(f"[PAD{len(fields['tokens'])}]")
        fields["types"].append(gguf.TokenType.UNUSED)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(PRE_TOKENIZER)
    writer.add_token_list(fields["tokens"])
    writer.add_token_types(fields["types"])
    writer.add_token_merges(fields["merges"])
    eos = tokenizer.eos_token_id
    bos = getattr(config, "bos_token_id", None)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else (bos if bos is not None else eos)
    writer.add_bos_token_id(bos)
    writer.add_eos_token_id(eos)
    if tokenizer.pad_token_id is not None:
        writer.add_pad_token_id(tokenizer.pad_token_id)
    # transformers' chat templates hold any BOS themselves and apply_chat_template adds none: the same here.
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    if tokenizer.chat_template:
        writer.add_chat_template(portable_chat_template(tokenizer.chat_template))

    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    per_layer = {
        "input_layernorm.weight": "attn_norm.weight",
        "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.o_proj.weight": "attn_output.weight",
        "post_attention_layernorm.weight": "ffn_norm.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight",
        "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight",
    }
    state = model.state_dict()
    if getattr(config, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)  # llama.cpp reuses token_embd when output.weight is absent
    written = 0
    for name, tensor in state.items():
        target = names.get(name)
        if target is None:
            m = re.fullmatch(r"model\.layers\.(\d+)\.(.+)", name)
            if not m or m.group(2) not in per_layer:
                raise ValueError(f"unexpected tensor {name}: not a plain Llama checkpoint")
            target = f"blk.{m.group(1)}.{per_layer[m.group(2)]}"
        data = tensor.detach().to(torch.float32).numpy()
        if target.endswith("attn_q.weight"):
            data = _permute(data, heads)
        elif target.endswith("attn_k.weight"):
            data = _permute(data, kv_heads)
        # Norm weights (1-D) stay f32, as llama.cpp expects; matrices follow --dtype.
        data = np.ascontiguousarray(data.astype(np.float16 if dtype == "f16" and data.ndim > 1 else np.float32))
        writer.add_tensor(target, data)
        written += 1
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return {"gguf": str(out), "checkpoint": str(checkpoint), "dtype": dtype, "tensors": written, "vocab": config.vocab_size,
            "bytes": Path(out).stat().st_size}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragtrail_trl.gguf_export", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="a transformers Llama checkpoint directory (config.json, weights, tokenizer)")
    parser.add_argument("out", help="the .gguf file to write")
    parser.add_argument("--dtype", choices=["f32", "f16"], default="f32", help="weight type of the matrices (default f32: the same numbers as the checkpoint)")
    args = parser.parse_args(argv)
    if not Path(args.checkpoint, "config.json").exists():
        print(f"error: {args.checkpoint} has no config.json; pass a transformers checkpoint directory", file=sys.stderr)
        return 2
    try:
        summary = export_gguf(args.checkpoint, args.out, args.dtype)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
