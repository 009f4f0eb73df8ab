# scripts/setup-llamacpp.sh against its cache: --help and bad options, numpy unimportable in a
# scratch cache (says why for each python; --check; the apt-get branch with a shim; recovery
# through /usr/bin/python3; nothing downloaded or built), --print on an empty
# cache (says what is missing, creates nothing) and on the real one, a second call that
# downloads and builds nothing (curl, git, tar, cmake and ninja replaced by shims that record
# any call and fail), a cache holding only the build and a tarball placed in downloads/ (no
# network: the source comes from the tarball, the models are written by $SERVETOP_PYTHON, the
# same bytes as the cache's), a placed tarball that does not match the sha512 (refused,
# nothing installed), and the cached llama-server serving the tiny target with its draft:
# /health, /props, /tokenize, /apply-template, a completion, the draft's tokens accepted.
# Skips (77) when the cache has no CPU build or models, unless SERVETOP_REQUIRE_LLAMA_SERVER=1.
source "$(dirname "$0")/../lib/harness.sh"
SETUP=$PROJECT_DIR/scripts/setup-llamacpp.sh
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/servetop

has() { grep -qF -- "$1" <<<"$2"; } # has TEXT IN

out=$(bash "$SETUP" --help); rc=$?
check "--help exits 0" test "$rc" = 0
check "--help names every option" \
  eval 'has "--cuda ARCH" "$out" && has "--models LIST" "$out" && has --print "$out" && has --force "$out"'
err=$(bash "$SETUP" --bogus 2>&1 >/dev/null); rc=$?
check "an unknown option exits 2" test "$rc" = 2
check "an unknown option is named" has "'--bogus'" "$err"
bash "$SETUP" --cuda 'x;y' >/dev/null 2>&1; rc=$?
check "--cuda with a bad architecture exits 2" test "$rc" = 2
bash "$SETUP" --cuda >/dev/null 2>&1; rc=$?
check "--cuda without an architecture exits 2" test "$rc" = 2
err=$(bash "$SETUP" --models tiny,huge 2>&1 >/dev/null); rc=$?
check "--models with an unknown size exits 2 and names it" eval 'test "$rc" = 2 && has "huge" "$err"'
bash "$SETUP" --models "" >/dev/null 2>&1; rc=$?
check "--models with no size exits 2" test "$rc" = 2

# --print on an empty cache: exit 1, every path marked missing, nothing created.
empty=$WORK/empty-cache
out=$(XDG_CACHE_HOME=$empty bash "$SETUP" --print); rc=$?
check "--print on an empty cache exits 1" test "$rc" = 1
check "--print on an empty cache marks the binary and both models missing" \
  test "$(grep -c '(missing)' <<<"$out")" -ge 4
check "--print creates nothing" test ! -e "$empty"
# --print with a build that runs (a stand-in) and no models: exit 1 and the report only, no
# line of the failure trap (an expected status is not a failure)
fake=$WORK/fake-cache/servetop/llama.cpp/$(sed -n 's/^LLAMA_COMMIT=\(.......\).*/\1/p' "$SETUP")-cpu
mkdir -p "$fake"
printf '#!/bin/sh\necho version\n' >"$fake/llama-server"
chmod +x "$fake/llama-server"
err=$(XDG_CACHE_HOME=$WORK/fake-cache bash "$SETUP" --print 2>&1 >/dev/null); rc=$?
check "--print with the build but no models exits 1 without a failure message" \
  eval 'test "$rc" = 1 && test -z "$err"'
[[ -z $err ]] || echo "$err"
out=$(XDG_CACHE_HOME=$empty bash "$SETUP" --print --models tiny,small); rc=$?
check "--print --models tiny,small names both pairs" \
  eval 'test "$rc" = 1 && has "$empty/servetop/models/small-target.gguf (missing)" "$out" &&
        has "$empty/servetop/models/tiny-draft.gguf (missing)" "$out"'

# numpy unimportable (issue 19.10): every python the script tries fails `import numpy` (a
# numpy.py on PYTHONPATH that raises ImportError). The script must say why and what it does,
# never end silently. apt-get and id are shims (nothing is installed, either branch is taken
# whatever the real uid), curl a failing one, and the cache is a scratch folder: no download,
# no build, the shared cache untouched.
mkdir -p "$WORK/nonumpy" "$WORK/pkgshim"
printf 'raise ImportError("numpy made unimportable by the test")\n' >"$WORK/nonumpy/numpy.py"
printf '#!/bin/sh\necho "apt-get $*" >>"%s"\nexit 0\n' "$WORK/apt.calls" >"$WORK/pkgshim/apt-get"
printf '#!/bin/sh\necho "curl $*" >>"%s"\nexit 1\n' "$WORK/apt.calls" >"$WORK/pkgshim/curl"
mkdir -p "$WORK/asroot" "$WORK/asuser"
printf '#!/bin/sh\n[ "$1" = -u ] && { echo 0; exit 0; }\nexec /usr/bin/id "$@"\n' >"$WORK/asroot/id"
printf '#!/bin/sh\n[ "$1" = -u ] && { echo 1000; exit 0; }\nexec /usr/bin/id "$@"\n' >"$WORK/asuser/id"
chmod +x "$WORK"/pkgshim/* "$WORK"/asroot/id "$WORK"/asuser/id
nonumpy() { # nonumpy ROOTNESS ARGS...: the script with numpy unimportable, a scratch cache
  local who=$1; shift
  PYTHONPATH=$WORK/nonumpy SERVETOP_PYTHON="" XDG_CACHE_HOME=$WORK/nonumpy-cache \
    PATH=$WORK/$who:$WORK/pkgshim:$PATH timeout 60 bash "$SETUP" "$@" 2>&1
}
out=$(nonumpy asroot --check); rc=$?
check "no numpy, --check as root: exit 0 (apt-get can install it)" test "$rc" = 0
check "no numpy, --check: says no python has numpy and why, for each python it tried" \
  eval 'has "no python with numpy" "$out" && has "/usr/bin/python3: ImportError: numpy made unimportable" "$out"'
check "no numpy, --check as root: says it would install python3-numpy" \
  has "would install python3-numpy with apt-get" "$out"
check "no numpy, --check: says it would build and write, and that it changed nothing" \
  eval 'has "would build llama-server" "$out" && has "nothing was changed" "$out"'
check "no numpy, --check: apt-get and curl never called, the cache not created" \
  eval 'test ! -e "$WORK/apt.calls" && test ! -e "$WORK/nonumpy-cache"'
out=$(nonumpy asuser --check); rc=$?
check "no numpy, --check not as root: exit 1 naming the package to install" \
  eval 'test "$rc" = 1 && has "missing: numpy (for python3); install them first (as root: apt-get install python3-numpy)" "$out"'
out=$(nonumpy asuser); rc=$?
check "no numpy, not as root: exit 1 naming the package (not a silent exit)" \
  eval 'test "$rc" = 1 && has "apt-get install python3-numpy" "$out"'
check "no numpy, not as root: stops before any download" test ! -e "$WORK/apt.calls"
out=$(nonumpy asroot); rc=$?
check "no numpy, as root: installs python3-numpy with apt-get" \
  eval 'grep -q "apt-get install .*python3-numpy" "$WORK/apt.calls" && has "installing python3-numpy" "$out"'
check "no numpy, as root: numpy still unimportable after the install is said, exit 1, before any download" \
  eval 'test "$rc" = 1 && has "apt-get installed python3-numpy but no python imports numpy" "$out" &&
        ! grep -q "^curl" "$WORK/apt.calls"'
[[ $rc == 1 ]] || echo "$out"
# Recovery: python3 on PATH lacks numpy (a shim), Debian's /usr/bin/python3 has it: the script
# goes on with that one.
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  mkdir -p "$WORK/badpy"
  printf '#!/bin/sh\nPYTHONPATH=%s exec /usr/bin/python3 "$@"\n' "$WORK/nonumpy" >"$WORK/badpy/python3"
  chmod +x "$WORK/badpy/python3"
  out=$(SERVETOP_PYTHON="" XDG_CACHE_HOME=$WORK/nonumpy-cache PATH=$WORK/badpy:$WORK/asuser:$WORK/pkgshim:$PATH \
        timeout 60 bash "$SETUP" --check 2>&1); rc=$?
  check "python3 on PATH without numpy, /usr/bin/python3 with it: --check passes with /usr/bin/python3" \
    eval 'test "$rc" = 0 && has "would write the tiny models with /usr/bin/python3" "$out"'
  [[ $rc == 0 ]] || echo "$out"
else
  echo "note: /usr/bin/python3 has no numpy: the recovery check is skipped"
fi

out=$(bash "$SETUP" --print); rc=$?
if [[ $rc != 0 ]]; then
  echo "$out"
  skip_without_llama_server "no llama-server CPU build and tiny models in $CACHE (run scripts/setup-llamacpp.sh)"
fi
ok "--print on the warm cache exits 0"
binary=$(readlink -f "$CACHE/bin/llama-server")
target=$CACHE/models/tiny-target.gguf
draft=$CACHE/models/tiny-draft.gguf
check "--print names the binary and the models" \
  eval 'has "$CACHE/bin/llama-server" "$out" && has "$target" "$out" && has "$draft" "$out"'

# A second call touches nothing: every tool of a download or build is a failing shim.
mkdir -p "$WORK/shim"
for tool in curl git tar cmake ninja cc c++ make; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$tool" "$WORK/shim.calls" >"$WORK/shim/$tool"
  chmod +x "$WORK/shim/$tool"
done
before=$(stat -c '%Y %s' "$binary" "$target" "$draft")
out=$(PATH=$WORK/shim:$PATH bash "$SETUP" 2>&1); rc=$?
check "the second call exits 0" test "$rc" = 0
check "the second call runs no download or build tool" test ! -e "$WORK/shim.calls"
[[ -e $WORK/shim.calls ]] && cat "$WORK/shim.calls"
check "the second call leaves the binary and models as they were" \
  test "$before" = "$(stat -c '%Y %s' "$binary" "$target" "$draft")"
check "the second call prints where the binary is" has "$CACHE/bin/llama-server" "$out"
check "the second call says the build time measured when it was built" has "build time: " "$out"
check "the second call ends with the command to run next" \
  test "$(tail -n 1 <<<"$out")" = "setup-llamacpp.sh: next: ./build/servetop run tiny-llamacpp-cpu"
check "bin/llama-server points at the build" test "$(readlink -f "$CACHE/bin/llama-server")" = "$binary"

# No network, a cache holding only the build (linked) and a tarball placed in downloads/: the
# source comes from the tarball without curl, and the models are written by $SERVETOP_PYTHON.
shim_calls() { cat "$WORK/shim.calls" 2>/dev/null; }
tarball=$(ls "$CACHE"/downloads/node-llama-cpp-*.tgz 2>/dev/null | head -1)
real_python=""
for p in python3 /usr/bin/python3; do
  "$p" -c 'import numpy' 2>/dev/null && { real_python=$(command -v "$p"); break; }
done
if [[ -z $tarball || -z $real_python ]]; then
  echo "note: no tarball in $CACHE/downloads or no python3 with numpy: the placed-tarball checks are skipped"
else
  placed=$WORK/placed/servetop
  mkdir -p "$placed/downloads" "$placed/llama.cpp" "$WORK/netless"
  ln -s "$tarball" "$placed/downloads/"
  ln -s "$(dirname "$binary")" "$placed/llama.cpp/"
  cp "$WORK/shim/curl" "$WORK/netless/curl"
  printf '#!/bin/sh\necho "$0 $*" >>"%s"\nexec "%s" "$@"\n' "$WORK/python.calls" "$real_python" \
    >"$WORK/python-wrapper"
  chmod +x "$WORK/python-wrapper"
  rm -f "$WORK/shim.calls"
  out=$(PATH=$WORK/netless:$PATH XDG_CACHE_HOME=$WORK/placed SERVETOP_PYTHON=$WORK/python-wrapper \
        bash "$SETUP" 2>&1); rc=$?
  check "a placed tarball: setup exits 0 without the network" test "$rc" = 0
  [[ $rc == 0 ]] || echo "$out"
  check "a placed tarball: curl is never called" test -z "$(shim_calls)"
  check "a placed tarball: the source is the pinned commit" \
    test -d "$placed/llama.cpp/src-$(basename "$(dirname "$binary")" | cut -d- -f1)/gguf-py"
  check "a placed tarball: \$SERVETOP_PYTHON wrote the models" grep -q make-tiny-models "$WORK/python.calls"
  check "a placed tarball: the tiny models are the cache's, byte for byte" \
    eval 'cmp -s "$placed/models/tiny-target.gguf" "$target" && cmp -s "$placed/models/tiny-draft.gguf" "$draft"'
  # A placed tarball that does not match the pinned sha512 is refused (and, with no network,
  # nothing is installed).
  bad=$WORK/bad/servetop
  mkdir -p "$bad/downloads" "$bad/llama.cpp"
  echo "not the tarball" >"$bad/downloads/$(basename "$tarball")"
  ln -s "$(dirname "$binary")" "$bad/llama.cpp/"
  out=$(PATH=$WORK/netless:$PATH XDG_CACHE_HOME=$WORK/bad bash "$SETUP" 2>&1); rc=$?
  check "a wrong placed tarball: setup exits 1" test "$rc" = 1
  check "a wrong placed tarball: it says so, then that the download failed" \
    eval 'has "does not match the pinned sha512" "$out" && has "download of" "$out"'
  check "a wrong placed tarball: no source and no models installed" \
    eval 'test -z "$(ls -d "$bad"/llama.cpp/src-* 2>/dev/null)" && test ! -e "$bad/models/tiny-target.gguf"'
fi

# The cached binary serves the tiny target with its draft.
"$CACHE/bin/llama-server" -m "$target" -md "$draft" --spec-type draft-simple --spec-draft-n-max 8 \
  -td 1 --host 127.0.0.1 --port 0 -c 1024 -np 2 -t 1 --metrics --no-webui >"$WORK/server.log" 2>&1 &
PIDS+=("$!")
server=$!
port=""
for _ in $(seq 300); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/server.log" | head -1)
  [[ -n $port ]] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
[[ -n $port ]] || { fail "llama-server did not start"; tail -30 "$WORK/server.log"; finish; }
url=http://127.0.0.1:$port
health=""
for _ in $(seq 300); do
  health=$(curl -s -o /dev/null -w '%{http_code}' "$url/health")
  [[ $health == 200 ]] && break
  sleep 0.1
done
check "/health answers 200 once the models are loaded" test "$health" = 200

props=$(curl -sf "$url/props")
check "/props serves the target model with 2 slots" \
  python3 -c 'import json,sys; p=json.load(sys.stdin); sys.exit(not (p["total_slots"] == 2 and p["model_path"].endswith("tiny-target.gguf")))' <<<"$props"
check "/props has the chat template" \
  python3 -c 'import json,sys; sys.exit("im_start" not in json.load(sys.stdin)["chat_template"])' <<<"$props"
tok=$(curl -sf "$url/tokenize" -d '{"content": "Hello world"}')
check "/tokenize gives the llama SPM tokens" \
  python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["tokens"] != [15043, 3186])' <<<"$tok"
tpl=$(curl -sf "$url/apply-template" -d '{"messages": [{"role": "user", "content": "hi"}]}')
check "/apply-template renders the chat template" \
  python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["prompt"] != "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")' <<<"$tpl"
# Token ids as the prompt, so no sampled byte sequence of the random model matters here.
cmpl=$(curl -sf "$url/v1/completions" -d '{"prompt": [1, 15043, 3186], "max_tokens": 32, "ignore_eos": true, "temperature": 0}')
check "a completion generates 32 tokens with the draft" \
  python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(not (r["usage"]["completion_tokens"] == 32 and r["timings"]["draft_n"] > 0))' <<<"$cmpl"
accepted=$(curl -sf "$url/metrics" | sed -n 's/^llamacpp:spec_decode_num_accepted_tokens_total \([0-9.e+]*\)$/\1/p')
check "the draft's tokens are accepted (llamacpp:spec_decode_num_accepted_tokens_total $accepted)" \
  python3 -c "import sys; sys.exit(not float('${accepted:-0}') > 0)"

kill -TERM "$server"
wait "$server"; rc=$?
check "llama-server exits cleanly on SIGTERM" test "$rc" = 0
PIDS=()
finish setup-llamacpp
