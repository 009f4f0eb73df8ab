#!/usr/bin/env bash
# servetop bench against a real llama.cpp llama-server (tiny random-weight
# target + draft, speculative decoding on):
#  1. output tokens exact: every request completed with its usage count or
#     failed with a reason, and the completed requests' tokens plus what the
#     server generated for the failed ones equal the server's own
#     llamacpp:tokens_predicted_total delta; the per-request draft counts
#     (final-chunk timings.draft_n / draft_n_accepted) sum to the server's
#     spec_decode_num_{draft,accepted}_tokens_total deltas;
#  2. the reference client (benchmark_serving.py with tests/lib/refclient)
#     with the same flags: the same requests and input tokens, and where it
#     is wrong -- it reads usage only from chunks without "choices", and
#     llama.cpp sends it in the last chunk with choices, so it reports 0
#     generated tokens (and TPOT 0).
# Skips (77) without llama-server or its models, unless
# SERVETOP_REQUIRE_LLAMA_SERVER=1 (then fails).
source "$(dirname "$0")/../lib/harness.sh"
need_llama_server
REF=${SHARED_DIR:-}/data/inferencex/utils/bench_serving/benchmark_serving.py
REFCLIENT=$(cd "$(dirname "$0")/../lib/refclient" && pwd)
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1

start_llama spec -m "$LLAMA_TARGET" -md "$LLAMA_DRAFT" --spec-type draft-simple \
  -c 4096 -np 4 -t 1 -td 1
URL=http://127.0.0.1:$PORT

counters() { # the llamacpp: counters servetop's figures must add up to
  curl -sf "$URL/metrics" | awk '/^llamacpp:(tokens_predicted_total|spec_decode_num_draft_tokens_total|spec_decode_num_accepted_tokens_total) / { sub("llamacpp:", "", $1); printf "%s=%d\n", $1, $2 }'
}
counters >"$WORK/before"
ARGS=(--model tiny --base-url "$URL" --dataset-name random --random-input-len 96
      --random-output-len 48 --random-range-ratio 0.8 --num-prompts 24 --max-concurrency 4
      --ignore-eos --num-warmups 0 --save-result --disable-tqdm --result-dir "$WORK")
timeout 300 "$SERVETOP" bench "${ARGS[@]}" --result-filename st.json --quiet \
  >"$WORK/st.out" 2>&1
rc=$?
counters >"$WORK/after"
check "servetop bench on llama-server exits 0 or 1 (failures counted)" test $rc -le 1
check "prompts through llama.cpp's own tokenizer endpoints" \
  grep -q "through the server's tokenizer (llama.cpp endpoints)" "$WORK/st.out"

"$PY" - "$WORK/st.json" "$WORK/before" "$WORK/after" <<'PY' || fail "output tokens are not exact"
import json, sys
d = json.load(open(sys.argv[1]))
kv = lambda p: dict(l.strip().split("=") for l in open(p) if "=" in l)
b, a = kv(sys.argv[2]), kv(sys.argv[3])
delta = {k: int(a[k]) - int(b.get(k, 0)) for k in a}
st = d["servetop"]
fails = st["failures"]
n = d["num_prompts"]
ok = True
def check(what, cond):
    global ok
    print(f"  {'ok' if cond else 'FAIL'}: {what}")
    ok = ok and cond
check(f"every request accounted for: {d['completed']} completed + {sum(fails.values())} failed "
      f"({fails}) = {n}", d["completed"] + sum(fails.values()) == n)
outs = d["output_lens"]
completed_tokens = sum(outs)
check("no completed request has 0 tokens", sum(1 for o in outs if o > 0) == d["completed"])
check("total_output_tokens = sum of the usage counts", d["total_output_tokens"] == completed_tokens)
pred = delta["tokens_predicted_total"]
# The identity: the server counts what it generated for every request, the
# failed ones included; a failed request streamed at most its max_tokens.
if not fails:
    check(f"generated tokens {completed_tokens} = llamacpp:tokens_predicted_total delta {pred}",
          completed_tokens == pred)
else:
    extra = pred - completed_tokens
    check(f"generated tokens {completed_tokens} + {extra} of the {sum(fails.values())} failed "
          f"= llamacpp:tokens_predicted_total delta {pred} (failed streams made 0 .. "
          f"{48 * sum(fails.values())})", 0 <= extra <= 48 * sum(fails.values()))
    check("every failure has a reason kept", all(st["failure_examples"].get(k) for k in fails))
pra = st["per_request_acceptance"]
print(f"  per-request acceptance: {pra['accepted_tokens']}/{pra['draft_tokens']} over "
      f"{pra['requests']} requests; server deltas "
      f"{delta['spec_decode_num_accepted_tokens_total']}/{delta['spec_decode_num_draft_tokens_total']}")
if not fails:
    check("per-request draft tokens sum to the server's delta",
          pra["draft_tokens"] == delta["spec_decode_num_draft_tokens_total"])
    check("per-request accepted tokens sum to the server's delta",
          pra["accepted_tokens"] == delta["spec_decode_num_accepted_tokens_total"])
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- the reference client
if [[ ! -f $REF ]] || ! "$PY" -c 'import aiohttp, numpy' 2>/dev/null; then
  echo "SKIP (part): the reference client or python3-aiohttp/numpy is absent"
  finish "llama-server bench"
  exit 0
fi
mkdir -p "$WORK/tok"
printf '{"base_url": "%s", "model": "tiny"}\n' "$URL" >"$WORK/tok/servetop-tokenizer.json"
echo '{"tokenizer_class": "ServetopServerTokenizer"}' >"$WORK/tok/tokenizer_config.json"
(cd "$WORK" && PYTHONPATH=$REFCLIENT timeout 300 "$PY" "$REF" "${ARGS[@]}" --tokenizer "$WORK/tok" \
   --result-filename ref.json) >"$WORK/ref.out" 2>&1
check "the reference runs against llama-server" test -s "$WORK/ref.json"
timeout 300 "$SERVETOP" bench "${ARGS[@]}" --tokenizer "$WORK/tok" --result-filename st2.json \
  --quiet >"$WORK/st2.out" 2>&1
"$PY" - "$WORK/ref.json" "$WORK/st2.json" <<'PY' || fail "reference vs servetop on llama-server"
import json, sys
ref, st = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fails = st["servetop"]["failures"]
ok = True
def check(what, cond):
    global ok
    print(f"  {'ok' if cond else 'FAIL'}: {what}")
    ok = ok and cond
# The reference calls a stream that ended in an error event a success (0 tokens).
stream_failed = sum(v for k, v in fails.items() if k in ("stream_error", "no_usage", "no_finish_reason",
                                                           "usage_without_count"))
check(f"the same requests: reference {ref['completed']} successful = servetop {st['completed']} "
      f"completed + {stream_failed} failed after HTTP 200", ref["completed"] == st["completed"] + stream_failed)
check("the same input lengths (the same prompts, the client's count)", ref["input_lens"] == st["input_lens"])
check(f"the reference is wrong here: 0 generated tokens (it reads usage only from chunks "
      f"without choices); servetop {st['total_output_tokens']}",
      ref["total_output_tokens"] == 0 and st["total_output_tokens"] > 0)
check("the reference's TPOT is 0 for want of token counts; servetop's is not",
      ref["mean_tpot_ms"] == 0 and st["mean_tpot_ms"] > 0)
print(f"  {'figure':24s} {'reference':>12s} {'servetop':>12s}   (a real server: timings vary run to run)")
for k in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_itl_ms", "median_itl_ms",
          "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms", "mean_tpot_ms",
          "request_throughput", "output_throughput", "total_token_throughput"):
    print(f"  {k:24s} {ref[k]:12.3f} {st[k]:12.3f}")
sys.exit(0 if ok else 1)
PY
# --use-chat-template: the template through llama.cpp's /apply-template on
# both sides, its length subtracted as the reference does.
(cd "$WORK" && PYTHONPATH=$REFCLIENT timeout 300 "$PY" "$REF" "${ARGS[@]}" --tokenizer "$WORK/tok" \
   --use-chat-template --random-num-workers 3 --result-filename reft.json) >"$WORK/reft.out" 2>&1
timeout 300 "$SERVETOP" bench "${ARGS[@]}" --tokenizer "$WORK/tok" --use-chat-template \
  --random-num-workers 3 --result-filename stt.json --quiet >"$WORK/stt.out" 2>&1
check "chat template: the same prompts as the reference (input_lens)" "$PY" -c "
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
p = b['servetop']['client']['prompts']
print('  template', p['chat_template'], 'length', p['chat_template_len'], 'input', b['total_input_tokens'])
sys.exit(0 if a['input_lens'] == b['input_lens'] and p['chat_template'] == 'server /apply-template' else 1)
" "$WORK/reft.json" "$WORK/stt.json"
kill "$LLAMA_PID"; wait "$LLAMA_PID" 2>/dev/null
check "llama-server stopped" bash -c "! kill -0 $LLAMA_PID 2>/dev/null"
finish "llama-server bench"
