#!/bin/bash
# servetop gpus without a GPU: every backend's reason, exit statuses, and the
# nvidia-smi backend through stand-in tools (captured H200 output, a hung tool).
set -u
: "${SERVETOP:?}" "${TEST_DATA_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
empty="$tmp/empty"; mkdir -p "$empty"

# 1. No tool on PATH: exit 0, JSON names every backend with its reason.
out=$(env PATH="$empty" "$SERVETOP" gpus --json) || fail "gpus --json exited $?"
for name in nvml nvidia-smi amd-smi dcgm sim; do
  grep -q "\"name\":[[:space:]]*\"$name\"" <<<"$out" || fail "backend $name missing: $out"
done
[ "$(grep -c '"status":' <<<"$out")" = 5 ] || fail "expected 5 backend statuses: $out"
grep -q '"reason":[[:space:]]*"nvidia-smi: not found in PATH' <<<"$out" || fail "nvidia-smi reason: $out"
grep -q '"reason":[[:space:]]*"no --telemetry-url given"' <<<"$out" || fail "dcgm/sim reason: $out"
if grep -q '"backend":[[:space:]]*"none"' <<<"$out"; then
  grep -q '"reason":[[:space:]]*"dlopen: libnvidia-ml.so.1: cannot open shared object file' <<<"$out" \
    || fail "nvml dlopen reason: $out"
  grep -q '"gpus":[[:space:]]*\[\]' <<<"$out" || fail "no GPUs expected: $out"
  # A named backend that is unavailable is an error (exit 1) with its reason.
  err=$(env PATH="$empty" "$SERVETOP" gpus --telemetry nvml 2>&1 >/dev/null); rc=$?
  [ $rc = 1 ] || fail "--telemetry nvml exited $rc"
  grep -q "telemetry backend nvml: dlopen: libnvidia-ml.so.1" <<<"$err" || fail "nvml error: $err"
fi
text=$(env PATH="$empty" "$SERVETOP" gpus) || fail "gpus (text) exited $?"
grep -q "amd-smi     unavailable: amd-smi: not found in PATH" <<<"$text" || fail "text report: $text"

# 2. Usage.
"$SERVETOP" gpus --help | grep -q -- "--telemetry-url URL" || fail "--help"
"$SERVETOP" gpus --no-such-flag >/dev/null 2>&1; [ $? = 2 ] || fail "unknown flag must exit 2"
"$SERVETOP" gpus --telemetry rocm >/dev/null 2>&1; [ $? = 2 ] || fail "unknown backend is an input error: exit 2"
"$SERVETOP" gpus --telemetry-interval 0 >/dev/null 2>&1; [ $? = 2 ] || fail "interval 0 must exit 2"

# 3. nvidia-smi backend over the H200 capture.
bin="$tmp/bin"; mkdir -p "$bin"
cat_bin=$(command -v cat)  # the stand-in runs with a PATH that has no cat
cat > "$bin/nvidia-smi" <<SH
#!/bin/sh
case "\$1" in
--query-gpu=*) "$cat_bin" "$TEST_DATA_DIR/telemetry/nvsmi_h200_held_gpu_noheader.csv";;
--query-compute-apps=*) "$cat_bin" "$TEST_DATA_DIR/telemetry/nvsmi_h200_held_apps_noheader.csv";;
*) exit 2;;
esac
SH
chmod +x "$bin/nvidia-smi"
out=$(env PATH="$bin:$empty" "$SERVETOP" gpus --json --telemetry nvidia-smi) || fail "nvidia-smi backend exited $?"
grep -q '"mem_used_bytes":[[:space:]]*5397020672' <<<"$out" || fail "5147 MiB used expected: $out"
grep -q '"energy_j":[[:space:]]*null' <<<"$out" || fail "energy unknown must be null: $out"
grep -q '"pid":[[:space:]]*452' <<<"$out" || fail "process 452 expected: $out"
# --watch: one JSON object per line, bounded by --count.
lines=$(timeout 20 env PATH="$bin:$empty" "$SERVETOP" gpus --watch --json --count 2 \
          --telemetry nvidia-smi --telemetry-interval 0.2 | grep -c '"schema_version":1')
[ "$lines" = 2 ] || fail "--watch --count 2 printed $lines lines"

# 4. A hung nvidia-smi is killed at the deadline, reported, no crash.
printf '#!/bin/sh\n%s 30\n' "$(command -v sleep)" > "$bin/nvidia-smi"
start=$(date +%s)
err=$(timeout 20 env PATH="$bin:$empty" "$SERVETOP" gpus --telemetry nvidia-smi 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || fail "hung nvidia-smi: exit $rc ($err)"
grep -q "no answer within 2000 ms (killed)" <<<"$err" || fail "hung nvidia-smi message: $err"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "hung nvidia-smi took too long"
echo "PASS"
