#!/usr/bin/env bash
# Gets llama.cpp's llama-server for servetop and writes random-weight model pairs (a target
# and its draft): tiny ones for CPUs and tests, a small one for GPUs.
#
# The source is llama.cpp as bundled in the npm registry package node-llama-cpp (pinned
# version; the tarball is checked against the sha512 the registry publishes for it), cloned
# from the git bundle inside it. Only the llama-server target is built. Everything lives in
# CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/servetop:
#
#   downloads/node-llama-cpp-VERSION.tgz     the verified tarball
#   llama.cpp/src-COMMIT/                    the source tree (gguf-py and the vocab files)
#   llama.cpp/build-COMMIT-VARIANT/          a build in progress (kept by a failed build so
#                                            that the next call resumes it; removed after)
#   llama.cpp/COMMIT-VARIANT/llama-server    a finished build (VARIANT: cpu, cuda90, ...)
#   llama.cpp/COMMIT-VARIANT/build-info      how and when it was built
#   bin/llama-server -> the build made or found by the last call (servetop looks here)
#   models/SIZE-target.gguf, SIZE-draft.gguf  (scripts/make-tiny-models.py --size SIZE)
#   models/.SIZE.written-by                    which writer and vocabulary made them
#
# The tarball may be placed in downloads/ beforehand (a machine without network access): it
# is used when it matches the pinned sha512, and curl is then not needed.
# A finished build appears under its final name only by a rename of a complete, working
# binary, so an interrupted or failed build never leaves a binary that the symlink reaches.
# A call that finds everything in place downloads, builds and writes nothing.
set -Eeuo pipefail

NLC_VERSION=3.21.1
# The registry's dist.integrity of node-llama-cpp@3.21.1.
NLC_INTEGRITY=sha512-E3N0Ev2Va0wzydvXYFwM9Hvyo07PoWjt8T/9GMc43Cvt8YkV/NU/tYUgEMC1grTPv2o9PRjQi0G3Wb5P/awiMg==
NLC_URL=https://registry.npmjs.org/node-llama-cpp/-/node-llama-cpp-$NLC_VERSION.tgz
# The one (squashed) commit of package/llama/gitRelease.bundle in that tarball.
LLAMA_COMMIT=80fb11ac73e66d89eae2c6a91d8a77428fa733ed
LLAMA_SHORT=${LLAMA_COMMIT:0:7}

prog=${0##*/}
model_writer=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/make-tiny-models.py
cache=${XDG_CACHE_HOME:-$HOME/.cache}/servetop

usage() {
  cat <<EOF
usage: $prog [--cuda ARCH] [--models LIST] [--print] [--check] [--force] [--help]

Builds llama.cpp's llama-server (commit $LLAMA_SHORT, from the npm registry package
node-llama-cpp@$NLC_VERSION, sha512-checked) and writes random-weight model pairs (a target
and its draft) for servetop's tests, demos and bundled llama.cpp recipes. What is already
cached is reused: a second call downloads and builds nothing.

  --cuda ARCH    a CUDA build for compute capability ARCH (90 for H100/H200; a CMake
                 CUDA_ARCHITECTURES list such as "80;90" also works); needs nvcc
  --models LIST  the model pairs to write, comma-separated (default tiny):
                   tiny   n_embd 128 x 4 layers, 18 MiB (tests, tiny-llamacpp-cpu recipes)
                   small  n_embd 2048 x 16 layers, 1.8 GiB + a 349 MiB draft (GPU recipes)
  --print        print the paths and whether they exist; build nothing (exit 0 when
                 everything is in place, 1 when a call would build or write something)
  --check        check what the build and the models need (packages, numpy, the source) and
                 say what a call would install, download, build and write; changes nothing
                 (exit 0 when a call could go ahead, 1 when something must be installed
                 first and the script cannot do it here)
  --force        clone, build and write the models again (a cached tarball that matches
                 the pinned sha512 is kept: it is the same bytes a download would give)
  --help         this text

Cache (\${XDG_CACHE_HOME:-\$HOME/.cache}/servetop, here $cache):
  bin/llama-server         symlink to the build made or found by the last call
  llama.cpp/$LLAMA_SHORT-cpu/    the CPU build (-march=native: build it where it runs)
  llama.cpp/$LLAMA_SHORT-cuda90/ a --cuda 90 build
  models/SIZE-target.gguf  random-weight llama target (scripts/make-tiny-models.py)
  models/SIZE-draft.gguf   its 1-layer draft (same embeddings, output and first layer)
  downloads/node-llama-cpp-$NLC_VERSION.tgz  the source; may be placed there beforehand
                           (no network needed then; it is still sha512-checked)

As root on Debian 12 the missing build packages (cmake ninja-build git build-essential curl
python3-numpy) are installed with apt-get; otherwise the script names them. The models are
written by the first of \$SERVETOP_PYTHON, python3 on PATH and /usr/bin/python3 that has
numpy. The first CPU build takes 5 minutes on 2 idle cores and up to about 45 on a crowded
machine (2,729 s measured with eight builds sharing 2 cores), a CUDA build about 5 minutes on
16 cores. It ends with the build time it measured and, last,
the command to run next.
EOF
}

die() { echo "$prog: $*" >&2; exit 1; }
# Nothing ends the script without a word: a failing command that no check above caught names
# itself, its line and its status (set -E carries the trap into functions).
on_err() { echo "$prog: line $1: '$2' failed (exit $3); nothing half-done was installed" >&2; }
trap 'on_err "$LINENO" "$BASH_COMMAND" "$?"' ERR
note() { echo "$prog: $*"; }

# ---- state --------------------------------------------------------------------------------
set_paths() {
  src_dir=$cache/llama.cpp/src-$LLAMA_SHORT
  build_dir=$cache/llama.cpp/build-$LLAMA_SHORT-$variant
  out_dir=$cache/llama.cpp/$LLAMA_SHORT-$variant
  binary=$out_dir/llama-server
  link=$cache/bin/llama-server
  tarball=$cache/downloads/node-llama-cpp-$NLC_VERSION.tgz
  models_dir=$cache/models
}
target_of() { echo "$models_dir/$1-target.gguf"; }
draft_of() { echo "$models_dir/$1-draft.gguf"; }
stamp_of() { echo "$models_dir/.$1.written-by"; }

# pick_python: the first of $SERVETOP_PYTHON, python3 on PATH (a venv's, pyenv's) and Debian's
# /usr/bin/python3 that has numpy; empty when none has.
pick_python() {
  local p
  python=""
  for p in "${SERVETOP_PYTHON:-}" "$(command -v python3 || true)" /usr/bin/python3; do
    [[ -n $p ]] && "$p" -c 'import numpy' 2>/dev/null && { python=$p; return 0; }
  done
  return 0 # none: the caller says what to install (a failing status here ended the script)
}
# numpy_why: why the pythons pick_python tries cannot import numpy (the last line of each error).
numpy_why() {
  local p seen=" " why
  for p in "${SERVETOP_PYTHON:-}" "$(command -v python3 || true)" /usr/bin/python3; do
    [[ -n $p && $seen != *" $p "* ]] || continue
    seen+="$p "
    if ! command -v "$p" >/dev/null 2>&1; then echo "  $p: not found"; continue; fi
    why=$("$p" -c 'import numpy' 2>&1 | tail -n 1) || true
    echo "  $p: ${why:-import numpy failed}"
  done
}

# A size's stamp names the writer's content, the vocabulary's commit and the size: models
# written by another version of make-tiny-models.py are written again.
writer_id() { echo "$(sha256sum <"$model_writer" | cut -c1-16) $LLAMA_SHORT $1"; }
size_ok() {
  local stamp
  stamp=$(stamp_of "$1")
  [[ -s $(target_of "$1") && -s $(draft_of "$1") && -f $stamp ]] &&
    [[ $(<"$stamp") == "$(writer_id "$1")" ]]
}
models_ok() {
  local size
  for size in "${sizes[@]}"; do size_ok "$size" || return 1; done
}
# A cached build must run on this machine (a -march=native build from another CPU may not).
binary_runs() { [[ -x $binary ]] && "$binary" --version >/dev/null 2>&1; }
info_of() { sed -n "s/^$1=//p" "$out_dir/build-info" 2>/dev/null; }

path_state() { [[ -e $1 ]] && echo "$1" || echo "$1 (missing)"; }
model_state() { # model_state FILE SIZE
  if [[ ! -s $1 ]]; then echo "$1 (missing)"
  elif ! size_ok "$2"; then echo "$1 (stale: written by another make-tiny-models.py)"
  else echo "$1"
  fi
}
report() {
  local to=""
  [[ -L $link ]] && to=" -> $(readlink -f "$link" 2>/dev/null || readlink "$link")"
  echo "llama-server   $(path_state "$link")$to"
  if [[ -e $binary ]] && ! binary_runs; then
    echo "build          $binary (does not run here)"
  else
    echo "build          $(path_state "$binary")"
  fi
  [[ -f $out_dir/build-info ]] &&
    echo "built          $(info_of built_at) in $(info_of build_seconds) s (-j$(info_of jobs), $(info_of host_cpus) CPUs)"
  echo "commit         $LLAMA_COMMIT (node-llama-cpp@$NLC_VERSION, variant $variant)"
  local size
  for size in "${sizes[@]}"; do
    printf '%-15s%s\n' "$size target" "$(model_state "$(target_of "$size")" "$size")" \
      "$size draft" "$(model_state "$(draft_of "$size")" "$size")"
  done
  echo "source         $(path_state "$src_dir")"
}

# ---- exits: temporary files removed, a running build stopped -------------------------------
tmp_files=() build_pgid=""
cleanup() { local f; for f in "${tmp_files[@]}"; do rm -rf -- "$f"; done; }
new_tmp() { tmp_files+=("$1"); } # new_tmp PATH: PATH is removed when the script exits
on_signal() {
  if [[ -n $build_pgid ]]; then
    kill -TERM -- "-$build_pgid" 2>/dev/null || true
    wait "$build_pgid" 2>/dev/null || true
  fi
  echo >&2
  echo "$prog: interrupted; nothing half-done was installed (a new call resumes the build)" >&2
  exit 130
}

# ---- packages -----------------------------------------------------------------------------
# install_missing: the commands the remaining steps need; as root with apt-get, installs the
# missing ones' packages, otherwise names them and stops.
install_missing() {
  local pkgs=() what=() cmd_pkg cmd
  local wanted=(git:git tar:tar sha512sum:coreutils flock:util-linux)
  # curl only for a download: not when the source or a verified tarball is in the cache
  [[ $(git -C "$src_dir" rev-parse HEAD 2>/dev/null) == "$LLAMA_COMMIT" ]] ||
    tarball_ok "$tarball" || wanted+=(curl:curl)
  (( need_binary )) &&
    wanted+=(cmake:cmake ninja:ninja-build "cc|gcc:build-essential" "c++|g++:build-essential")
  local alt found
  for cmd_pkg in "${wanted[@]}"; do # CMD[|CMD...]:PACKAGE, any one of the commands will do
    cmd=${cmd_pkg%%:*} found=0
    for alt in ${cmd//|/ }; do command -v "$alt" >/dev/null 2>&1 && found=1; done
    (( found )) || { what+=("$cmd"); pkgs+=("${cmd_pkg#*:}"); }
  done
  if (( need_models )); then
    pick_python
    if [[ -z $python ]]; then
      what+=("numpy (for python3)") pkgs+=(python3-numpy)
      note "no python with numpy to write the models; tried:"
      numpy_why
    fi
  fi
  if (( ${#pkgs[@]} )); then
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      if (( check_only )); then
        note "would install ${pkgs[*]} with apt-get (missing: ${what[*]})"
        return 0
      fi
      note "installing ${pkgs[*]} (missing: ${what[*]})"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" \
        >/dev/null || die "apt-get install ${pkgs[*]} failed"
      # what was promised must be there now
      for cmd_pkg in "${what[@]}"; do
        [[ $cmd_pkg == numpy* ]] && continue
        found=0
        for alt in ${cmd_pkg//|/ }; do command -v "$alt" >/dev/null 2>&1 && found=1; done
        (( found )) || die "apt-get installed ${pkgs[*]} but '$cmd_pkg' is still not on PATH"
      done
      if (( need_models )) && [[ -z $python ]]; then
        pick_python
        [[ -n $python ]] || die "apt-get installed python3-numpy but no python imports numpy:
$(numpy_why)
set SERVETOP_PYTHON to a python that has numpy (or fix PYTHONPATH) and call this again"
      fi
    else
      if (( check_only )); then
        note "missing: ${what[*]}; install them first (as root: apt-get install ${pkgs[*]})"
        return 1
      fi
      die "missing: ${what[*]}; install them first (as root: apt-get install ${pkgs[*]})"
    fi
  fi
  if (( need_binary )) && [[ -n $cuda_arch ]]; then
    nvcc=$(command -v nvcc || true)
    [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
    if [[ -z $nvcc ]]; then
      (( check_only )) && { note "--cuda $cuda_arch: no nvcc (on PATH or in /usr/local/cuda/bin); install the CUDA toolkit first"; return 1; }
      die "--cuda $cuda_arch: no nvcc (on PATH or in /usr/local/cuda/bin); install the CUDA toolkit first"
    fi
  fi
  return 0
}

# ---- source -------------------------------------------------------------------------------
integrity_hex() { base64 -d <<<"${NLC_INTEGRITY#sha512-}" | od -An -v -tx1 | tr -d ' \n'; }
tarball_ok() { [[ -f $1 && $(sha512sum <"$1" | cut -d' ' -f1) == "$(integrity_hex)" ]]; }

get_tarball() {
  tarball_ok "$tarball" && return
  [[ -e $tarball ]] && note "$tarball does not match the pinned sha512; downloading it again"
  mkdir -p "${tarball%/*}"
  local tmp=$tarball.tmp.$$ rc=0
  new_tmp "$tmp"
  note "downloading $NLC_URL"
  curl -fsSL --retry 3 --connect-timeout 20 -o "$tmp" "$NLC_URL" || rc=$?
  (( rc == 0 )) || die "download of $NLC_URL failed (curl exit $rc)"
  tarball_ok "$tmp" ||
    die "$NLC_URL: sha512 $(sha512sum <"$tmp" | cut -c1-16)..., not the pinned $(integrity_hex | cut -c1-16)... ($NLC_INTEGRITY)"
  mv -f "$tmp" "$tarball"
}

get_source() {
  [[ $(git -C "$src_dir" rev-parse HEAD 2>/dev/null) == "$LLAMA_COMMIT" ]] && return
  get_tarball
  local tmp=$cache/llama.cpp/src.tmp.$$ head
  new_tmp "$tmp"
  mkdir -p "$tmp"
  tar -xzf "$tarball" -C "$tmp" package/llama/gitRelease.bundle ||
    die "cannot extract package/llama/gitRelease.bundle from $tarball"
  git -c advice.detachedHead=false clone -q "$tmp/package/llama/gitRelease.bundle" "$tmp/tree" ||
    die "git clone of package/llama/gitRelease.bundle (from $tarball) failed"
  head=$(git -C "$tmp/tree" rev-parse HEAD)
  [[ $head == "$LLAMA_COMMIT" ]] ||
    die "the bundle in node-llama-cpp@$NLC_VERSION holds commit $head, not the pinned $LLAMA_COMMIT"
  rm -rf "$src_dir"
  mv "$tmp/tree" "$src_dir"
}

# ---- build --------------------------------------------------------------------------------
# progress T0: of Ninja's "[N/M] ..." lines on stdin prints one in 25 with the seconds since
# T0, so that a long build shows it is moving.
progress() {
  local line n m
  while IFS= read -r line; do
    [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
    n=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]}
    if (( n % 25 == 0 || n == m )); then echo "  [$n/$m] $(( $(date +%s) - $1 )) s"; fi
  done
}

build() {
  local jobs t0 t1 log built flags
  jobs=$(nproc)
  flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
         -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
         -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_WEBUI=OFF)
  if [[ -n $cuda_arch ]]; then
    flags+=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$cuda_arch" "-DCMAKE_CUDA_COMPILER=$nvcc")
  fi
  (( force )) && rm -rf "$build_dir"
  mkdir -p "$build_dir"
  rm -f "$out_dir"/*.tmp.* # left by a call that was killed outright
  log=$build_dir/build.log
  note "building llama-server ($variant, commit $LLAMA_SHORT) with -j$jobs; log: $log"
  t0=$(date +%s)
  cmake -S "$src_dir" -B "$build_dir" "${flags[@]}" >"$log" 2>&1 ||
    { tail -n 40 "$log" >&2; die "cmake configure failed (full log: $log)"; }
  # The build runs in its own process group and the script waits for it: a signal to the
  # script alone (a CI timeout, kill) stops the whole build at once (see on_signal).
  setsid cmake --build "$build_dir" -j"$jobs" --target llama-server >>"$log" 2>&1 &
  build_pgid=$!
  tail -n +1 -f --pid="$build_pgid" "$log" | progress "$t0" &
  local rc=0
  wait "$build_pgid" || rc=$?
  build_pgid=""
  wait
  if (( rc != 0 )); then
    tail -n 40 "$log" >&2
    die "build failed (exit $rc; full log: $log); a new call resumes it, --force starts over"
  fi
  t1=$(date +%s)
  built=$build_dir/bin/llama-server
  [[ -x $built ]] || die "the build finished but made no $built (log: $log)"
  "$built" --version >/dev/null 2>&1 || die "the new $built does not run: $built --version fails"
  # Install by renames: the final names only ever hold a complete, working binary.
  mkdir -p "$out_dir"
  new_tmp "$binary.tmp.$$"
  new_tmp "$out_dir/build-info.tmp.$$"
  cp "$built" "$binary.tmp.$$"
  {
    echo "commit=$LLAMA_COMMIT"
    echo "source=node-llama-cpp@$NLC_VERSION"
    echo "variant=$variant"
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "build_seconds=$((t1 - t0))"
    echo "jobs=$jobs"
    echo "host_cpus=$(nproc --all)"
    echo "cmake_flags=${flags[*]}"
    echo "version=$("$built" --version 2>&1 | tr '\n' ' ')"
  } >"$out_dir/build-info.tmp.$$"
  mv -f "$out_dir/build-info.tmp.$$" "$out_dir/build-info"
  mv -f "$binary.tmp.$$" "$binary"
  rm -rf "$build_dir"
  build_seconds=$((t1 - t0))
  note "built $binary in $build_seconds s"
}

# link_binary: bin/llama-server -> this variant's build, replaced by one rename.
link_binary() {
  local tmp=$cache/bin/.llama-server.tmp.$$
  mkdir -p "$cache/bin"
  new_tmp "$tmp"
  ln -sfn "../llama.cpp/$LLAMA_SHORT-$variant/llama-server" "$tmp"
  mv -Tf "$tmp" "$link"
}

write_models() {
  local size
  mkdir -p "$models_dir"
  for size in "${sizes[@]}"; do
    (( force )) || ! size_ok "$size" || continue
    rm -f "$(stamp_of "$size")"
    note "writing the $size models with $python"
    PYTHONPATH=$src_dir/gguf-py "$python" "$model_writer" --size "$size" \
        --vocab "$src_dir/models/ggml-vocab-llama-spm.gguf" \
        --target "$(target_of "$size")" --draft "$(draft_of "$size")" ||
      die "writing the $size models failed ($model_writer, $python)"
    writer_id "$size" >"$(stamp_of "$size")"
  done
}

main() {
  cuda_arch="" print_only=0 check_only=0 force=0 models=tiny build_seconds=""
  local t_start
  t_start=$(date +%s)
  while (( $# )); do
    case $1 in
      --cuda) (( $# >= 2 )) || { echo "$prog: --cuda needs an architecture (e.g. 90)" >&2; exit 2; }
              cuda_arch=$2; shift ;;
      --cuda=*) cuda_arch=${1#--cuda=} ;;
      --models) (( $# >= 2 )) || { echo "$prog: --models needs a list (tiny, small)" >&2; exit 2; }
                models=$2; shift ;;
      --models=*) models=${1#--models=} ;;
      --print) print_only=1 ;;
      --check) check_only=1 ;;
      --force) force=1 ;;
      -h|--help) usage; exit 0 ;;
      *) echo "$prog: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
  done
  variant=cpu
  if [[ -n $cuda_arch ]]; then
    [[ $cuda_arch =~ ^[0-9]+[a-z]?(\;[0-9]+[a-z]?)*$ ]] ||
      { echo "$prog: --cuda '$cuda_arch': want a compute capability such as 90 or \"80;90\"" >&2; exit 2; }
    variant=cuda${cuda_arch//;/-}
  fi
  IFS=, read -ra sizes <<<"$models"
  (( ${#sizes[@]} )) || { echo "$prog: --models '$models': name at least one of tiny, small" >&2; exit 2; }
  for size in "${sizes[@]}"; do
    [[ $size == tiny || $size == small ]] ||
      { echo "$prog: --models: unknown size '$size' (tiny, small)" >&2; exit 2; }
  done
  set_paths

  if (( print_only )); then
    report
    if binary_runs && models_ok; then exit 0; fi
    exit 1
  fi

  need_binary=1 need_models=1
  if (( ! force )); then
    if binary_runs; then need_binary=0
    elif [[ -e $binary ]]; then note "$binary does not run here (built on another CPU?); building it again"
    fi
    models_ok && need_models=0
  fi

  if (( check_only )); then
    local rc=0 python=""
    install_missing || rc=$?
    if (( need_binary || need_models )); then
      [[ $(git -C "$src_dir" rev-parse HEAD 2>/dev/null) == "$LLAMA_COMMIT" ]] ||
        { tarball_ok "$tarball" && note "would unpack the source from $tarball" ||
            note "would download $NLC_URL"; }
      (( need_binary )) && note "would build llama-server ($variant) with -j$(nproc) into $out_dir"
      (( need_models )) && note "would write the ${sizes[*]} models with ${python:-the python3 that apt-get installs numpy for}"
    else
      note "everything is in place: a call builds and writes nothing"
    fi
    (( rc == 0 )) && note "check passed; nothing was changed" ||
      note "check failed: install what is named above first; nothing was changed"
    exit "$rc"
  fi

  mkdir -p "$cache" || die "cannot create the cache folder $cache"
  # One setup at a time per cache: a second caller waits, then finds the first one's work.
  exec 9>"$cache/.setup-llamacpp.lock"
  if ! flock -n 9; then
    note "another setup-llamacpp.sh is working in $cache; waiting for it"
    flock 9
  fi
  trap cleanup EXIT
  trap on_signal INT TERM HUP

  if (( need_binary || need_models )); then
    install_missing
    if (( force )); then rm -rf "$src_dir"; fi
    get_source
    if (( need_binary )); then build; fi
    link_binary
    if (( need_models )); then write_models; fi
  else
    link_binary
  fi
  report
  if [[ -n $build_seconds ]]; then
    note "build time: $build_seconds s measured now (-j$(nproc), load $(cut -d' ' -f1 /proc/loadavg)); whole setup $(( $(date +%s) - t_start )) s"
  elif [[ -f $out_dir/build-info ]]; then
    note "build time: $(info_of build_seconds) s, measured when it was built ($(info_of built_at)); this call built nothing"
  fi
  if [[ -n $cuda_arch ]]; then
    note "next: ./build/servetop run small-llamacpp-h200   (needs --models small)"
  else
    note "next: ./build/servetop run tiny-llamacpp-cpu"
  fi
}

main "$@"
exit
