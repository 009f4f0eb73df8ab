#!/usr/bin/env python3
"""Writes one of servetop's random-weight llama.cpp model pairs: a target and its draft.

Nothing is downloaded and nothing is trained. Both are `llama`-architecture GGUF files with the
real 32,000-token llama SPM vocabulary (copied from the vocab-only GGUF in llama.cpp's tree),
random F16 weights and a chat template, so llama-server loads them, tokenizes, renders chat
prompts and generates (nonsense) text at the speed a model of that shape runs.

Sizes (--size; each field can be overridden by its own option):
  tiny   n_embd 128, 4 layers, n_ff 512, 4 heads: 18 MiB, for tests and 2-core CPUs
  small  n_embd 2048, 16 layers, n_ff 5632, 16 heads: 1.8 GiB (about TinyLlama's shape), for GPUs

Every tensor is drawn from a generator seeded by (seed, tensor name). The draft is the target
cut to its first layer(s): token embedding, output matrix and the layers it has are the same
numbers as in the target, and the target's further layers are scaled down (their attention
output and FFN down projections) so that they move the residual stream only a little. That
keeps the draft's guesses close to the target's choices: speculative decoding with the pair
accepts a useful share of drafted tokens, as a real draft model does, instead of almost none.
The more extra layers, the smaller each one's scale (their pushes add up).

The two files are written in one pass: each tensor is drawn once (on several threads; numpy
releases the GIL while it fills an array), written to the target and, when the draft has it,
to the draft, then dropped, so memory stays at a few tensors whatever the size. Each file
appears under its name only by a rename of a complete file.

Run by scripts/setup-llamacpp.sh as
  PYTHONPATH=<llama.cpp>/gguf-py python3 make-tiny-models.py --size tiny \\
      --vocab <llama.cpp>/models/ggml-vocab-llama-spm.gguf --target T.gguf --draft D.gguf
Needs numpy and llama.cpp's gguf-py (on PYTHONPATH).
"""
import argparse
import os
import sys
import threading
import time
import types
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

try:
    import yaml  # noqa: F401
except ImportError:
    # gguf-py's metadata module imports yaml at load time; only its model-card reader uses it,
    # and nothing here does. A Python with numpy but without PyYAML (a CUDA/torch venv) works.
    sys.modules["yaml"] = types.ModuleType("yaml")
try:
    import gguf
except ImportError:
    sys.exit("make-tiny-models.py: cannot import gguf: put llama.cpp's gguf-py on PYTHONPATH")

PROG = "make-tiny-models.py"

# extra_layer_scale: output scale of each target layer beyond the draft's. tiny's 0.04 over 3
# extra layers gives 68% acceptance at temperature 0 (README); small's 15 extra layers get
# 0.04 * sqrt(3/15) = 0.018, the same summed push if the layers' pushes were independent.
SIZES = {
    "tiny": dict(embd=128, ff=512, heads=4, layers=4, draft_layers=1, ctx=4096,
                 extra_layer_scale=0.04),
    "small": dict(embd=2048, ff=5632, heads=16, layers=16, draft_layers=1, ctx=32768,
                  extra_layer_scale=0.018),
}

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
                sys.exit(f"{PROG}: {path}: no {key}: not a vocab GGUF")
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        out[key] = (field.contents(), vtype, sub)
    return out


def never_emitted(vocab):
    types_ = np.asarray(vocab["tokenizer.ggml.token_type"][0])
    rows = (types_ == gguf.TokenType.BYTE) | (types_ == gguf.TokenType.UNKNOWN)
    bos = vocab.get("tokenizer.ggml.bos_token_id")
    if bos is not None:
        rows[int(bos[0])] = True
    return rows


def tensor_plan(a, n_vocab):
    """The target's tensors in file order: (name, numpy shape, std or None for RMS-norm ones,
    in the draft)."""
    embd, ff = a.embd, a.ff
    plan = [("token_embd.weight", (n_vocab, embd), 1.0, True),
            ("output_norm.weight", (embd,), None, True),
            # logits = output · rms_norm(h): a larger spread makes the next token less random.
            ("output.weight", (n_vocab, embd), a.logit_std / np.sqrt(embd), True)]
    for i in range(a.layers):
        in_draft = i < a.draft_layers
        # The layers beyond the draft's write into the residual stream at a reduced scale.
        scale = 1.0 if in_draft else a.extra_layer_scale
        p = f"blk.{i}."
        plan += [(p + "attn_norm.weight", (embd,), None, in_draft),
                 (p + "ffn_norm.weight", (embd,), None, in_draft)]
        plan += [(p + part + ".weight", (embd, embd), 1 / np.sqrt(embd), in_draft)
                 for part in ("attn_q", "attn_k", "attn_v")]
        plan += [(p + "attn_output.weight", (embd, embd), scale / np.sqrt(embd), in_draft),
                 (p + "ffn_gate.weight", (ff, embd), 1 / np.sqrt(embd), in_draft),
                 (p + "ffn_up.weight", (ff, embd), 1 / np.sqrt(embd), in_draft),
                 (p + "ffn_down.weight", (embd, ff), scale / np.sqrt(ff), in_draft)]
    return plan


CHUNK = 1 << 20  # values drawn at a time into a thread's float32 scratch


class Buffers:
    """F16 output buffers, reused: a fresh 100 MiB array costs more in first-touch page faults
    than drawing its numbers. At most (tensors in flight) buffers exist."""

    def __init__(self):
        self.free, self.lock, self.local = [], threading.Lock(), threading.local()

    def take(self, n):
        with self.lock:
            if any(b.size >= n for b in self.free):
                i = min(range(len(self.free)), key=lambda j: (self.free[j].size < n, self.free[j].size))
                return self.free.pop(i)
        return np.empty(n, dtype=np.float16)

    def give(self, buf):
        with self.lock:
            self.free.append(buf)

    def scratch(self):
        s = getattr(self.local, "s", None)
        if s is None:
            s = self.local.s = np.empty(CHUNK, dtype=np.float32)
        return s


def draw(buffers, vocab, seed, name, shape, std):
    """One tensor and the pool buffer it lives in (None for RMS-norm weights: ones, F32). The
    same numbers in every model that has the tensor: standard normals from a generator seeded
    by (seed, name), drawn in chunks (the same sequence as one draw), times std in float32,
    rounded to F16."""
    if std is None:
        return np.ones(shape, dtype=np.float32), None
    n = int(np.prod(shape))
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    buf, s, std32 = buffers.take(n), buffers.scratch(), np.float32(std)
    for i in range(0, n, CHUNK):
        k = min(CHUNK, n - i)
        rng.standard_normal(k, dtype=np.float32, out=s[:k])
        np.multiply(s[:k], std32, out=s[:k])
        buf[i:i + k] = s[:k]
    t = buf[:n].reshape(shape)
    if name == "output.weight":
        # A trained model never emits <unk>, <s> or a lone byte token (bytes come in valid
        # UTF-8 runs); a random one would, and llama-server ends a stream whose text is not
        # valid UTF-8 with an error event. Their logits are 0, far below the top of 32,000
        # random ones.
        t[never_emitted(vocab)] = 0
    return t, buf


def new_writer(path, tmp, vocab, a, n_layer, label, tensors):
    n_vocab = len(vocab["tokenizer.ggml.tokens"][0])
    w = gguf.GGUFWriter(tmp, "llama")
    w.add_name(f"servetop {a.size} {label} (random weights, {n_layer} layers, n_embd {a.embd})")
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.heads)
    w.add_rope_dimension_count(a.embd // a.heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_vocab_size(n_vocab)
    for key, (value, vtype, sub) in vocab.items():
        w.add_key_value(key, value, vtype, sub_type=sub)
    w.add_chat_template(CHAT_TEMPLATE)
    for name, shape, std, _ in tensors:
        dtype = np.float32 if std is None else np.float16
        w.add_tensor_info(name, shape, np.dtype(dtype), int(np.prod(shape)) * np.dtype(dtype).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    return w


def write_pair(a, vocab):
    n_vocab = len(vocab["tokenizer.ggml.tokens"][0])
    plan = tensor_plan(a, n_vocab)
    draft_plan = [t for t in plan if t[3]]
    pid = os.getpid()
    outs = [(a.target, f"{a.target}.tmp.{pid}", a.layers, "target", plan),
            (a.draft, f"{a.draft}.tmp.{pid}", a.draft_layers, "draft", draft_plan)]
    t0 = time.monotonic()
    writers = []
    try:
        for path, tmp, n_layer, label, tensors in outs:
            writers.append(new_writer(path, tmp, vocab, a, n_layer, label, tensors))
        target_w, draft_w = writers
        # Tensors are drawn ahead on a few threads, at most jobs + 2 in flight, and written
        # in file order.
        jobs = max(1, min(a.jobs, len(plan)))
        buffers = Buffers()

        def write_next():
            in_draft, future = queue.popleft()
            t, buf = future.result()
            target_w.write_tensor_data(t)
            if in_draft:
                draft_w.write_tensor_data(t)
            if buf is not None:
                buffers.give(buf)

        queue = deque()
        with ThreadPoolExecutor(jobs) as pool:
            for name, shape, std, in_draft in plan:
                queue.append((in_draft, pool.submit(draw, buffers, vocab, a.seed, name, shape, std)))
                if len(queue) >= jobs + 2:
                    write_next()
            while queue:
                write_next()
        for w in writers:
            w.close()
        for path, tmp, *_ in outs:
            os.replace(tmp, path)
    except BaseException:
        for _, tmp, *_ in outs:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
    secs = time.monotonic() - t0
    total = 0
    for path, _, n_layer, _, _ in outs:
        size = os.path.getsize(path)
        total += size
        print(f"wrote {path} ({size / 2**20:.1f} MiB, {n_layer} "
              f"layer{'s' if n_layer != 1 else ''}, n_embd {a.embd}, n_ff {a.ff}, "
              f"{a.heads} heads, context {a.ctx})")
    print(f"{total / 2**20:.1f} MiB in {secs:.1f} s ({total / 2**20 / max(secs, 1e-3):.0f} MiB/s, "
          f"{jobs} thread{'s' if jobs != 1 else ''})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", required=True, help="vocab-only GGUF (ggml-vocab-llama-spm.gguf)")
    ap.add_argument("--target", required=True, help="where to write the target model")
    ap.add_argument("--draft", required=True, help="where to write the draft model")
    ap.add_argument("--size", choices=sorted(SIZES), default="tiny",
                    help="the shape's defaults: " + "; ".join(
                        f"{k}: n_embd {v['embd']} x {v['layers']} layers" for k, v in SIZES.items())
                    + " (default tiny)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--embd", type=int, help="n_embd")
    ap.add_argument("--ff", type=int, help="n_ff")
    ap.add_argument("--heads", type=int, help="attention heads")
    ap.add_argument("--layers", type=int, help="target layers")
    ap.add_argument("--draft-layers", type=int, help="draft layers")
    ap.add_argument("--ctx", type=int, help="training context length")
    ap.add_argument("--logit-std", type=float, default=20.0,
                    help="spread of the output logits (default 20)")
    ap.add_argument("--extra-layer-scale", type=float,
                    help="output scale of the target's layers beyond the draft's")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                    help="threads drawing tensors (default: CPUs, at most 8)")
    a = ap.parse_args()
    for key, value in SIZES[a.size].items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    if a.embd % a.heads:
        ap.error("--embd must be a multiple of --heads")
    if not 0 < a.draft_layers <= a.layers:
        ap.error("--draft-layers must be between 1 and --layers")
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    write_pair(a, read_vocab(a.vocab))


if __name__ == "__main__":
    main()
