#!/usr/bin/env bash
# Builds llama.cpp's native command-line tools, for benchmarks against
# realizar-host, idempotently:
#
#   <dest>/bin/        llama-bench, llama-batched-bench, llama-server and
#                      llama-completion (llama-cli where a version lacks
#                      llama-completion), statically linked against llama/ggml
#   <dest>/src/        the llama.cpp source they were built from: llama.cpp
#                      v0.5.0, the git bundle in npm node-llama-cpp@3.22.1
#                      (llama/gitRelease.bundle), checked out detached
#   <dest>/BUILD-INFO  commit, configure flags, compiler, CPU, build time
#
# <dest> is $LLAMA_NATIVE_DIR, default <repo>/.cache/llama-native (git-ignored).
# npm's cache goes to <repo>/.cache/npm (shared with tools/llamaref/install.sh).
#
# The build is -DGGML_NATIVE=ON (-march=native): the binaries fit this machine's
# CPU, so the CPU's flags are part of the version stamp, and a checkout moved to
# another CPU rebuilds. A second run with a matching stamp and every binary in
# place returns at once. A failed build keeps <dest>/build, and the next run
# resumes it; a successful one removes it (LLAMA_NATIVE_KEEP_BUILD=1 keeps it).
#
# The build runs at nice 19 with LLAMA_NATIVE_JOBS jobs (default 2), so other
# work keeps the machine; on 2 cores it takes ~25 minutes.
#
# Needs: npm, tar, git, a C/C++ compiler; cmake and ninja (installed from
# Debian with apt-get, as root or with sudo, when missing). No network beyond
# the npm registry: no libcurl, no OpenSSL, no downloaded web UI.
#
# Not part of `make test` / CI; run it with `make llama-native`.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${LLAMA_NATIVE_DIR:-$root/.cache/llama-native}
npm_cache=$root/.cache/npm
jobs=${LLAMA_NATIVE_JOBS:-2}

src_pkg=node-llama-cpp@3.22.1
llama_release=v0.5.0
# Wanted targets, in order. llama-completion is llama-cli in older trees.
targets=(llama-bench llama-batched-bench llama-server llama-completion)
required=(llama-bench llama-server)

cmake_flags=(
  -G Ninja
  -DCMAKE_BUILD_TYPE=Release
  -DGGML_NATIVE=ON
  -DBUILD_SHARED_LIBS=OFF
  -DLLAMA_CURL=OFF
  -DLLAMA_OPENSSL=OFF
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF
  -DLLAMA_USE_PREBUILT_UI=OFF
)

log() { echo "llama-native: $*"; }
die() {
  echo "llama-native: ERROR: $*" >&2
  exit 1
}
step=starting
trap 'rc=$?; [ $rc -eq 0 ] || echo "llama-native: FAILED (exit $rc) while $step" >&2' EXIT

# Version stamp: everything that decides what the binaries are.
cpu_flags=$(grep -m1 -E '^(flags|Features)[[:space:]]*:' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*:[[:space:]]*//' || true)
cpu_sig=$(uname -m)-$(printf '%s' "$cpu_flags" | sha256sum | cut -c1-16)
want=$(printf '%s\n' "package $src_pkg" "release $llama_release" "cpu $cpu_sig" \
  "targets ${targets[*]}" "cmake ${cmake_flags[*]}")
stamp=$dest/.installed

installed() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -s "$dest/bin/.binaries" ] || return 1
  local b
  while read -r b; do
    [ -x "$dest/bin/$b" ] || return 1
  done <"$dest/bin/.binaries"
}

if installed; then
  log "llama.cpp $llama_release ($src_pkg) already built in $dest/bin: $(tr '\n' ' ' <"$dest/bin/.binaries")"
  exit 0
fi
if [ -f "$stamp" ]; then
  log "stamp in $dest differs from this script's (or binaries missing): rebuilding"
fi

# --- tools -------------------------------------------------------------------
step="checking tools"
[ "$(uname -s)" = Linux ] || die "Linux only (this is $(uname -s))"
for tool in npm tar git; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
command -v c++ >/dev/null || command -v g++ >/dev/null || die "a C++ compiler is required (apt-get install build-essential)"
if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
  step="installing cmake and ninja-build"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "cmake/ninja missing and not root (apt-get install cmake ninja-build)"
    sudo=sudo
  fi
  log "installing cmake and ninja-build from Debian"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends cmake ninja-build
fi
log "cmake $(cmake --version | head -1 | awk '{print $3}'), ninja $(ninja --version), $(c++ --version | head -1)"

mkdir -p "$dest" "$npm_cache"
rm -f "$stamp"

# --- source ------------------------------------------------------------------
step="fetching $src_pkg"
dl=$dest/dl
rm -rf "$dl"
mkdir -p "$dl"
log "fetching $src_pkg from the npm registry"
(cd "$dl" && npm pack "$src_pkg" --cache "$npm_cache" --loglevel=error >/dev/null)
tgz=$(ls "$dl"/node-llama-cpp-*.tgz 2>/dev/null | head -1)
[ -n "$tgz" ] || die "npm pack $src_pkg produced no tarball"
tar -xzf "$tgz" -C "$dl" package/llama/gitRelease.bundle package/llama/binariesGithubRelease.json ||
  die "$tgz lacks llama/gitRelease.bundle or llama/binariesGithubRelease.json"
grep -q "\"release\": *\"$llama_release\"" "$dl/package/llama/binariesGithubRelease.json" ||
  die "$src_pkg is not llama.cpp $llama_release: $(cat "$dl/package/llama/binariesGithubRelease.json")"
bundle=$dl/package/llama/gitRelease.bundle

step="checking out the bundle"
git bundle verify -q "$bundle" >/dev/null 2>&1 || die "git bundle verify failed for $bundle"
commit=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" {print $1}')
[ -n "$commit" ] || commit=$(git bundle list-heads "$bundle" | awk 'NR == 1 {print $1}')
[ -n "$commit" ] || die "no heads in $bundle"
log "bundle heads: $(git bundle list-heads "$bundle" | tr '\n' ' ')"
if [ -d "$dest/src/.git" ] && [ "$(git -C "$dest/src" rev-parse HEAD 2>/dev/null)" = "$commit" ] &&
  [ -z "$(git -C "$dest/src" status --porcelain --untracked-files=no)" ]; then
  log "source $commit already checked out in $dest/src"
else
  log "cloning $commit into $dest/src"
  rm -rf "$dest/src" "$dest/src.tmp" "$dest/build"
  git -c advice.detachedHead=false clone --quiet "$bundle" "$dest/src.tmp"
  git -C "$dest/src.tmp" -c advice.detachedHead=false checkout --quiet --detach "$commit"
  mv "$dest/src.tmp" "$dest/src"
fi
rm -rf "$dl"

# --- configure ---------------------------------------------------------------
step="configuring (cmake)"
build=$dest/build
# A build dir from other flags or another CPU is wiped: -march=native is not
# on ninja's command lines, so ninja would not notice.
if [ -d "$build" ] && [ "$(cat "$build/.config" 2>/dev/null)" != "$want" ]; then
  log "removing $build (configured for something else)"
  rm -rf "$build"
fi
mkdir -p "$build"
printf '%s\n' "$want" >"$build/.config"
log "cmake ${cmake_flags[*]}"
cmake -S "$dest/src" -B "$build" "${cmake_flags[@]}" >"$build/configure.log" 2>&1 || {
  tail -40 "$build/configure.log" >&2
  die "cmake configure failed (log: $build/configure.log)"
}
grep -E '^(-- )?(CMAKE_BUILD_TYPE|GGML_NATIVE|Including CPU backend|Adding CPU backend variant|CMake Warning)' "$build/configure.log" | sed 's/^/llama-native:   /' || true

# Which of the wanted targets this tree has.
step="listing targets"
all_targets=$(ninja -C "$build" -t targets all | sed -n 's/^\([^:]*\): .*/\1/p')
has() { grep -qxF "$1" <<<"$all_targets"; }
build_targets=()
for t in "${targets[@]}"; do
  if has "$t"; then
    build_targets+=("$t")
  elif [ "$t" = llama-completion ] && has llama-cli; then
    log "no llama-completion target in this tree: building llama-cli instead"
    build_targets+=(llama-cli)
  else
    log "no $t target in this tree: skipped"
  fi
done
for t in "${required[@]}"; do
  has "$t" || die "required target $t missing from llama.cpp $llama_release"
done
log "targets: ${build_targets[*]}"

# --- build -------------------------------------------------------------------
step="building (ninja)"
log "building with nice -n 19 ninja -j$jobs (~25 min on 2 cores; log: $build/build.log)"
start=$(date +%s)
if ! nice -n 19 ninja -C "$build" -j"$jobs" "${build_targets[@]}" >"$build/build.log" 2>&1; then
  grep -E -B2 -A10 'FAILED|error:' "$build/build.log" | tail -60 >&2 || tail -60 "$build/build.log" >&2
  die "ninja failed (log: $build/build.log); rerun to resume"
fi
secs=$(($(date +%s) - start))
log "built in $((secs / 60))m$((secs % 60))s"

# --- install -----------------------------------------------------------------
step="installing into $dest/bin"
rm -rf "$dest/bin.tmp"
mkdir -p "$dest/bin.tmp"
for t in "${build_targets[@]}"; do
  [ -x "$build/bin/$t" ] || die "$build/bin/$t missing after the build"
  cp "$build/bin/$t" "$dest/bin.tmp/$t"
  if ldd "$dest/bin.tmp/$t" | grep -qE 'libllama|libggml|not found'; then
    die "$t is not self-contained: $(ldd "$dest/bin.tmp/$t" | grep -E 'libllama|libggml|not found' | tr '\n' ' ')"
  fi
  "$dest/bin.tmp/$t" --help >/dev/null 2>&1 || die "$t --help failed"
done
printf '%s\n' "${build_targets[@]}" >"$dest/bin.tmp/.binaries"
rm -rf "$dest/bin"
mv "$dest/bin.tmp" "$dest/bin"

{
  echo "llama.cpp $llama_release from $src_pkg (llama/gitRelease.bundle)"
  echo "commit     $commit"
  echo "version    $("$dest/bin/llama-server" --version 2>&1 | grep -m1 -i version || true)"
  echo "binaries   ${build_targets[*]}"
  echo "cmake      ${cmake_flags[*]}"
  echo "compiler   $(c++ --version | head -1)"
  echo "cpu        $(grep -m1 'model name' /proc/cpuinfo | sed 's/^[^:]*:[[:space:]]*//') ($cpu_sig)"
  echo "built      $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${secs}s with nice -n 19 ninja -j$jobs on $(nproc) cores"
} >"$dest/BUILD-INFO"

if [ "${LLAMA_NATIVE_KEEP_BUILD:-0}" = 1 ]; then
  log "keeping $build (LLAMA_NATIVE_KEEP_BUILD=1)"
else
  rm -rf "$build"
fi
printf '%s\n' "$want" >"$stamp"
step=done
log "installed in $dest/bin:"
ls -la "$dest/bin" | sed 's/^/llama-native:   /'
log "vocabularies: $dest/src/models/ggml-vocab-*.gguf; chat templates: $dest/src/models/templates/"
