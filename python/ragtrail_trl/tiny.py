"""Tiny, randomly initialised language models for tests and smoke runs.

Nothing here downloads anything. The tokenizer is a byte-level BPE learned with the
`tokenizers` library on the ragtrail world (passages and questions), wrapped as a
transformers fast tokenizer that carries:

* special tokens: ``<|pad|>`` (padding), ``<|end|>`` (end of a turn, used as EOS) and
  ``<|turn|>`` (start of a turn);
* a Jinja chat template of our own (see ``CHAT_TEMPLATE``) that renders system, user,
  assistant and tool turns, the tool list, and assistant tool calls, with
  ``{% generation %}`` markers around what the assistant writes (so SFT can train on the
  assistant tokens only);
* a ``response_template`` (transformers >= 5.13 response parsing) describing how to read an
  assistant reply back into ``{"content", "tool_calls"}``; TRL's GRPOTrainer needs it to
  turn generated text into tool calls when an ``environment_factory`` is used.

The model is a small Llama built from a config with seeded random weights. The same
directory can be loaded as a causal LM (policy) or as a one-output sequence classifier
(process reward model).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable

from .jsonl import read_jsonl

SPECIAL_TOKENS = ["<|pad|>", "<|end|>", "<|turn|>"]
PAD, EOS, TURN = SPECIAL_TOKENS
# Plain added tokens (not "special": decoding keeps them) so that a tool call is cheap to emit.
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"


# Every turn is rendered as  <|turn|>ROLE \n TEXT <|end|> \n .  Only explicit strings produce
# output; all template whitespace is trimmed.  Assistant text (content, then tool calls) sits
# inside {% generation %} so `return_assistant_tokens_mask` marks it, including <|end|>.
def _turn_loop(messages: str, role: str, render_call: str) -> str:
    """The message loop both chat templates share: an assistant turn is its content then its tool
    calls (`render_call` writes one, with `fn` bound to the call's function) inside
    {% generation %}; any other turn is a plain `role` turn."""
    return (
        "{%- for message in " + messages + " -%}"
        "{%- if message['role'] == 'assistant' -%}"
        "{{- '<|turn|>assistant\\n' -}}"
        "{%- generation -%}"
        "{%- if message['content'] -%}{{- message['content'] -}}{%- endif -%}"
        "{%- if message['tool_calls'] -%}"
        "{%- for call in message['tool_calls'] -%}"
        "{%- if call['function'] is defined -%}{%- set fn = call['function'] -%}{%- else -%}{%- set fn = call -%}{%- endif -%}"
        + render_call
        + "{%- endfor -%}"
        "{%- endif -%}"
        "{{- '<|end|>' -}}"
        "{%- endgeneration -%}"
        "{{- '\\n' -}}"
        "{%- else -%}"
        "{{- '<|turn|>' + " + role + " + '\\n' + (message['content'] if message['content'] is string else '') + '<|end|>\\n' -}}"
        "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|turn|>assistant\\n' -}}{%- endif -%}"
    )


CHAT_TEMPLATE = (
    "{%- set ns = namespace(first=0, system='') -%}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set ns.system = messages[0]['content'] -%}{%- set ns.first = 1 -%}"
    "{%- endif -%}"
    "{%- if ns.system or tools -%}"
    "{{- '<|turn|>system\\n' + ns.system -}}"
    "{%- if tools -%}"
    "{%- if ns.system -%}{{- '\\n\\n' -}}{%- endif -%}"
    "{{- 'Functions you may call are listed below, one JSON schema per line. To call one, write "
    "<tool_call>{\"name\": NAME, \"arguments\": {...}}</tool_call> and end your turn; its result "
    "comes back in a tool turn.' -}}"
    "{%- for tool in tools -%}{{- '\\n' + (tool | tojson) -}}{%- endfor -%}"
    "{%- endif -%}"
    "{{- '<|end|>\\n' -}}"
    "{%- endif -%}"
    + _turn_loop(
        "messages[ns.first:]",
        "message['role']",
        "{{- '<tool_call>{\"name\": ' + (fn['name'] | tojson) + ', \"arguments\": ' -}}"
        "{%- if fn['arguments'] is string -%}{{- fn['arguments'] -}}{%- else -%}{{- fn['arguments'] | tojson -}}{%- endif -%}"
        "{{- '}</tool_call>' -}}",
    )
)

# How to read a generated assistant turn back (transformers' response-template parser):
# zero or more <tool_call>JSON</tool_call> regions, the rest is content, <|end|> closes it.
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|turn|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": TOOL_OPEN,
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|end\|>\s*", "content": "text"},
    },
}

# The search-r1 variant (the LLM loop): the model speaks ragtrail's search-r1 tag protocol, so the
# template lists no tools (the protocol's instructions describe the tags) and shows a tool turn as a
# user turn (where the protocol puts <information>); a search call, if a client sends one as a tool
# call, is written back as its tag. Training in the protocol goes through rollout.py, which reads
# the model's text as text.
SEARCH_R1_CHAT_TEMPLATE = _turn_loop(
    "messages",
    "('user' if message['role'] == 'tool' else message['role'])",
    "{%- set args = fn['arguments'] if fn['arguments'] is mapping else {} -%}"
    "{%- if fn['name'] == 'search' and args['query'] is defined -%}"
    "{{- '<search> ' + args['query'] + ' </search>' -}}"
    "{%- else -%}"
    "{{- '<tool_call>' + ({'name': fn['name'], 'arguments': fn['arguments']} | tojson) + '</tool_call>' -}}"
    "{%- endif -%}",
)

# The search-r1 variant has no response template: servers such as `transformers serve` would parse
# tool calls with it and move the <search> out of the text that ragtrail's protocol reads.
TEMPLATES = {
    "tools": (CHAT_TEMPLATE, RESPONSE_TEMPLATE),
    "search-r1": (SEARCH_R1_CHAT_TEMPLATE, None),
}

# Protocol strings from ragtrail's agent formats, added to the tokenizer's training text so
# that tags become short token sequences.
_PROTOCOL_TEXT = [
    "<query></query> <answer></answer> <evidence></evidence> <evidence>None</evidence>",
    "<think></think> <search></search> <information></information> <reflect></reflect>",
    "<step></step> <subquery></subquery> <retrieval></retrieval> <subanswer></subanswer>",
    "<relevance></relevance> <analysis></analysis> Question: Documents: Doc 1 (Title: )",
    '{"name": "search", "arguments": {"query": ""}} {"name": "answer", "arguments": {"text": ""}}',
]


def world_texts(corpus: str | None, questions: str | None, extra: Iterable[str] = ()) -> list[str]:
    """Texts the tokenizer learns from: passage titles and texts, questions and answers, and for
    each `extra` jsonl file (e.g. SFT data) the text of its messages."""
    texts: list[str] = list(_PROTOCOL_TEXT)
    for path in extra:
        for row in read_jsonl(path):
            for message in row.get("messages") or []:
                if isinstance(message, dict) and isinstance(message.get("content"), str):
                    texts.append(message["content"])
    if corpus:
        for row in read_jsonl(corpus):
            texts.append(f"{row.get('title', '')}\n{row.get('text', '')}")
    if questions:
        for row in read_jsonl(questions):
            texts.append(str(row.get("question", "")))
            texts.extend(str(answer) for answer in row.get("golden_answers", []) or [])
    return texts


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2000, template: str = "tools"):
    """Learn a byte-level BPE on `texts` and wrap it as a transformers fast tokenizer.

    BPE training in `tokenizers` is deterministic for a given input order, so the same texts
    give the same vocabulary.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(texts), trainer=trainer)

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token=PAD,
        eos_token=EOS,
        additional_special_tokens=[TURN],
        clean_up_tokenization_spaces=False,
        model_max_length=2048,
    )
    tokenizer.add_tokens([TOOL_OPEN, TOOL_CLOSE])
    if template not in TEMPLATES:
        raise ValueError(f"unknown chat template {template!r}; use one of {', '.join(TEMPLATES)}")
    tokenizer.chat_template, tokenizer.response_template = TEMPLATES[template]
    return tokenizer


def tiny_config(tokenizer, hidden_size: int = 64, layers: int = 2, heads: int = 4, max_positions: int = 2048):
    """A small Llama config sized to `tokenizer`."""
    from transformers import LlamaConfig

    if hidden_size % heads:
        raise ValueError(f"hidden_size {hidden_size} is not divisible by {heads} attention heads")
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )


def _spec_key(spec: dict) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps(spec, sort_keys=True).encode())
    for path in [spec.get("corpus"), spec.get("questions"), *spec.get("extra_texts", [])]:
        if path and os.path.exists(path):
            stat = os.stat(path)
            digest.update(f"{os.path.abspath(path)}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def build_tiny(
    out_dir: str | os.PathLike,
    corpus: str | None = None,
    questions: str | None = None,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    vocab_size: int = 2000,
    seed: int = 0,
    template: str = "tools",
    extra_texts: Iterable[str] = (),
) -> str:
    """Build (or reuse) a tiny random causal LM plus tokenizer in `out_dir`; return the path.

    The directory loads with ``AutoModelForCausalLM.from_pretrained`` /
    ``AutoTokenizer.from_pretrained`` like any checkpoint. A small ``tiny.json`` records the
    build settings; a later call with the same settings reuses the directory.
    """
    import torch
    from transformers import LlamaForCausalLM

    spec = {
        "corpus": os.path.abspath(corpus) if corpus else None,
        "questions": os.path.abspath(questions) if questions else None,
        "hidden_size": hidden_size,
        "layers": layers,
        "heads": heads,
        "vocab_size": vocab_size,
        "seed": seed,
        "template": template,
        "extra_texts": [os.path.abspath(p) for p in extra_texts],
    }
    out = Path(out_dir)
    marker = out / "tiny.json"
    key = _spec_key(spec)
    if marker.exists():
        try:
            if json.loads(marker.read_text()).get("key") == key:
                return str(out)
        except (OSError, json.JSONDecodeError):
            pass

    for path in (corpus, questions):
        if path and not os.path.exists(path):
            raise FileNotFoundError(path)
    tokenizer = train_tokenizer(world_texts(corpus, questions, spec["extra_texts"]), vocab_size=vocab_size, template=template)
    config = tiny_config(tokenizer, hidden_size=hidden_size, layers=layers, heads=heads)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.eos_token_id
    # Sampling by default, as released chat models ship it: servers such as `transformers serve`
    # only sample when the checkpoint says so, and a request's temperature 0 still means greedy.
    model.generation_config.do_sample = True
    model.generation_config.top_k = 0
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    marker.write_text(json.dumps({"key": key, **spec}, indent=2))
    return str(out)


def load_tokenizer(path: str | os.PathLike):
    """Load a tokenizer saved by `build_tiny` (or any checkpoint) from `path`."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_classifier(path: str | os.PathLike, seed: int = 0):
    """Load the checkpoint in `path` as a one-output sequence classifier (a PRM / reward model).

    The transformer body comes from the checkpoint; the scalar head is new and seeded.
    """
    import torch
    from transformers import AutoModelForSequenceClassification

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(str(path), num_labels=1)
    return model


def tiny_classifier(tokenizer, hidden_size: int = 64, layers: int = 2, heads: int = 4, seed: int = 0):
    """A fresh random one-output Llama sequence classifier sized to `tokenizer`."""
    import torch
    from transformers import LlamaForSequenceClassification

    config = tiny_config(tokenizer, hidden_size=hidden_size, layers=layers, heads=heads)
    config.num_labels = 1
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return LlamaForSequenceClassification(config)
