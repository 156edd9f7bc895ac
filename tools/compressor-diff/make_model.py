"""Builds the shared tiny scoring model: a GPT-2 (the architecture Selective-Context hard-codes) with seeded
random weights and a byte-level BPE learned on the fixtures' texts (GPT-2's pre-tokenizer, <|endoftext|>
as its only special token), saved with save_pretrained. Nothing is downloaded.

    python make_model.py [OUT_DIR]      (default: model/)

The vocabulary is small (600) so that most words are split into several tokens, as real GPT-2 splits
rarer words; the initialiser's spread is raised (0.3) so that the random model's token probabilities
vary enough for the compressors' rankings not to hinge on rounding."""
import json, os, sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures import tokenizer_texts

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "model")
EOT = "<|endoftext|>"

bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
bpe.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=600, min_frequency=2, special_tokens=[EOT],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
bpe.train_from_iterator(tokenizer_texts(), trainer=trainer)
tok = GPT2TokenizerFast(tokenizer_object=bpe, bos_token=EOT, eos_token=EOT, unk_token=EOT, clean_up_tokenization_spaces=False, model_max_length=1024)

config = GPT2Config(vocab_size=len(tok), n_positions=1024, n_embd=64, n_layer=2, n_head=4, initializer_range=0.3,
                    bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
torch.manual_seed(0)
model = GPT2LMHeadModel(config)
model.eval()
os.makedirs(OUT, exist_ok=True)
model.save_pretrained(OUT)
tok.save_pretrained(OUT)
# The slow GPT2Tokenizer files as well (vocab.json, merges.txt), for loaders that look for them.
bpe.model.save(OUT)
json.dump({"seed": 0, "vocab_size": len(tok), "n_layer": 2, "n_embd": 64, "n_head": 4, "initializer_range": 0.3}, open(os.path.join(OUT, "tiny.json"), "w"))
print(f"saved {OUT}: vocab {len(tok)}, {sum(p.numel() for p in model.parameters())} parameters")
