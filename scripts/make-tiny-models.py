#!/usr/bin/env python3
"""Writes servetop's two tiny random-weight llama.cpp models: a target and its draft.

Nothing is downloaded and nothing is trained. Both are `llama`-architecture GGUF files with the
real 32,000-token llama SPM vocabulary (copied from the vocab-only GGUF in llama.cpp's tree),
random F16 weights and a chat template, so llama-server loads them, tokenizes, renders chat
prompts and generates (nonsense) text at the speed a model of that shape runs.

Every tensor is drawn from a generator seeded by (seed, tensor name). The draft is the target
cut to its first layer(s): token embedding, output matrix and the layers it has are the same
numbers as in the target, and the target's further layers are scaled down (their attention
output and FFN down projections) so that they move the residual stream only a little. That
keeps the draft's guesses close to the target's choices: speculative decoding with the pair
accepts a useful share of drafted tokens, as a real draft model does, instead of almost none.

Run by scripts/setup-llamacpp.sh as
  PYTHONPATH=<llama.cpp>/gguf-py python3 make-tiny-models.py --vocab <llama.cpp>/models/ggml-vocab-llama-spm.gguf \
      --target tiny-target.gguf --draft tiny-draft.gguf
Needs numpy and llama.cpp's gguf-py (on PYTHONPATH).
"""
import argparse
import os
import sys
import zlib

import numpy as np

try:
    import gguf
except ImportError:
    sys.exit("make-tiny-models.py: cannot import gguf: put llama.cpp's gguf-py on PYTHONPATH")

# ChatML. The SPM vocabulary has no <|im_start|> token, so the markers are plain text; that is
# enough for /apply-template and the chat endpoint to render and serve prompts.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# Tokenizer fields copied verbatim from the vocab-only GGUF.
TOKENIZER_KEYS = [
    "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
    "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
]


def read_vocab(path):
    reader = gguf.GGUFReader(path)
    out = {}
    for key in TOKENIZER_KEYS:
        field = reader.fields.get(key)
        if field is None:
            if key in ("tokenizer.ggml.model", "tokenizer.ggml.tokens"):
                sys.exit(f"make-tiny-models.py: {path}: no {key}: not a vocab GGUF")
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        out[key] = (field.contents(), vtype, sub)
    return out


def never_emitted(vocab):
    types = np.asarray(vocab["tokenizer.ggml.token_type"][0])
    rows = (types == gguf.TokenType.BYTE) | (types == gguf.TokenType.UNKNOWN)
    bos = vocab.get("tokenizer.ggml.bos_token_id")
    if bos is not None:
        rows[int(bos[0])] = True
    return rows


def write_model(path, vocab, a, n_layer, label):
    n_vocab = len(vocab["tokenizer.ggml.tokens"][0])
    embd, ff, heads = a.embd, a.ff, a.heads
    head_dim = embd // heads
    tmp = f"{path}.tmp.{os.getpid()}"
    w = gguf.GGUFWriter(tmp, "llama")
    w.add_name(f"servetop tiny {label} (random weights, {n_layer} layers, n_embd {embd})")
    w.add_context_length(a.ctx)
    w.add_embedding_length(embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_vocab_size(n_vocab)
    for key, (value, vtype, sub) in vocab.items():
        w.add_key_value(key, value, vtype, sub_type=sub)
    w.add_chat_template(CHAT_TEMPLATE)

    def add(name, shape, std):  # a random F16 tensor, the same numbers in every model
        rng = np.random.default_rng([a.seed, zlib.crc32(name.encode())])
        t = (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float16)
        if name == "output.weight":
            # A trained model never emits <unk>, <s> or a lone byte token (bytes come in valid
            # UTF-8 runs); a random one would, and llama-server ends a stream whose text is not
            # valid UTF-8 with an error event. Their logits are 0, far below the top of 32,000
            # random ones.
            t[never_emitted(vocab)] = 0
        w.add_tensor(name, t)

    ones = np.ones(embd, dtype=np.float32)  # RMS norm weights (F32)
    add("token_embd.weight", (n_vocab, embd), 1.0)
    w.add_tensor("output_norm.weight", ones)
    # logits = output · rms_norm(h): a larger spread makes the next token less random.
    add("output.weight", (n_vocab, embd), a.logit_std / np.sqrt(embd))
    for i in range(n_layer):
        # The layers beyond the draft's write into the residual stream at a reduced scale.
        scale = 1.0 if i < a.draft_layers else a.extra_layer_scale
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones)
        w.add_tensor(p + "ffn_norm.weight", ones)
        for part in ("attn_q", "attn_k", "attn_v"):
            add(p + part + ".weight", (embd, embd), 1 / np.sqrt(embd))
        add(p + "attn_output.weight", (embd, embd), scale / np.sqrt(embd))
        add(p + "ffn_gate.weight", (ff, embd), 1 / np.sqrt(embd))
        add(p + "ffn_up.weight", (ff, embd), 1 / np.sqrt(embd))
        add(p + "ffn_down.weight", (embd, ff), scale / np.sqrt(ff))
    try:
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB, {n_layer} "
          f"layer{'s' if n_layer != 1 else ''}, "
          f"n_embd {embd}, n_ff {ff}, {heads} heads, context {a.ctx})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", required=True, help="vocab-only GGUF (ggml-vocab-llama-spm.gguf)")
    ap.add_argument("--target", required=True, help="where to write the target model")
    ap.add_argument("--draft", required=True, help="where to write the draft model")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--embd", type=int, default=128, help="n_embd (default 128)")
    ap.add_argument("--ff", type=int, default=512, help="n_ff (default 512)")
    ap.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    ap.add_argument("--layers", type=int, default=4, help="target layers (default 4)")
    ap.add_argument("--draft-layers", type=int, default=1, help="draft layers (default 1)")
    ap.add_argument("--ctx", type=int, default=4096, help="training context length (default 4096)")
    ap.add_argument("--logit-std", type=float, default=20.0,
                    help="spread of the output logits (default 20)")
    ap.add_argument("--extra-layer-scale", type=float, default=0.04,
                    help="output scale of the target's layers beyond the draft's (default 0.04)")
    a = ap.parse_args()
    if a.embd % a.heads:
        ap.error("--embd must be a multiple of --heads")
    if not 0 < a.draft_layers <= a.layers:
        ap.error("--draft-layers must be between 1 and --layers")
    vocab = read_vocab(a.vocab)
    write_model(a.target, vocab, a, a.layers, "target")
    write_model(a.draft, vocab, a, a.draft_layers, "draft")


if __name__ == "__main__":
    main()
