#!/usr/bin/env bash
# Installs the llama.cpp reference used by tools/llamaref, idempotently:
#
#   <dest>/lib        prebuilt llama.cpp v0.5.0 shared libraries (npm
#                     @node-llama-cpp/linux-x64@3.22.1), with libllama.so and
#                     libggml.so linked to their versioned names
#   <dest>/llama.cpp  the matching llama.cpp source, checked out from the git
#                     bundle inside npm node-llama-cpp@3.22.1 (llama/gitRelease.bundle)
#   <dest>/vocab      models/ggml-vocab-*.gguf and their .inp/.out tokenizer vectors
#
# <dest> is the first argument, default <repo>/.cache/llamaref (git-ignored).
# npm's cache goes to <repo>/.cache/npm; nothing is written to /tmp or $HOME.
# A second run with everything in place returns at once.
#
# Needs: npm, tar, git; Linux x86-64 (the only platform the package ships).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dest=${1:-$root/.cache/llamaref}
npm_cache=$root/.cache/npm

libs_pkg=@node-llama-cpp/linux-x64@3.22.1
src_pkg=node-llama-cpp@3.22.1
llama_version=v0.5.0
stamp_text="$libs_pkg $src_pkg"
stamp=$dest/.installed

installed() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] &&
    [ -e "$dest/lib/libllama.so" ] && [ -e "$dest/lib/libggml.so" ] &&
    [ -e "$dest/lib/libggml-base.so" ] &&
    [ -f "$dest/vocab/ggml-vocab-llama-spm.gguf" ] &&
    [ -f "$dest/vocab/ggml-vocab-qwen2.gguf" ]
}

if installed; then
  echo "llamaref: $stamp_text already installed in $dest"
  exit 0
fi

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "llamaref: $libs_pkg ships Linux x86-64 libraries only (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi
for tool in npm tar git; do
  command -v "$tool" >/dev/null || { echo "llamaref: $tool is required" >&2; exit 1; }
done

mkdir -p "$dest" "$npm_cache"
work=$dest/.work
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

echo "llamaref: fetching $libs_pkg and $src_pkg"
(cd "$work" && npm pack "$libs_pkg" "$src_pkg" --cache "$npm_cache" --loglevel=error >/dev/null)

# Libraries: package/bins/linux-x64/*.so -> lib/
mkdir -p "$work/lib"
tar -xzf "$work"/node-llama-cpp-linux-x64-*.tgz -C "$work/lib" --strip-components=3 package/bins/linux-x64
for name in llama ggml; do
  versioned=lib$name.$llama_version.so
  [ -f "$work/lib/$versioned" ] || { echo "llamaref: $versioned missing from $libs_pkg" >&2; exit 1; }
  ln -sfn "$versioned" "$work/lib/lib$name.so"
done

# Source: the git bundle pinned by node-llama-cpp, checked out detached.
tar -xzf "$work"/node-llama-cpp-[0-9]*.tgz -C "$work" package/llama/gitRelease.bundle
git -c advice.detachedHead=false clone --quiet "$work/package/llama/gitRelease.bundle" "$work/llama.cpp"

# Vocabularies and their tokenizer test vectors.
mkdir -p "$work/vocab"
cp "$work"/llama.cpp/models/ggml-vocab-*.gguf* "$work/vocab/"

rm -f "$stamp"
for part in lib llama.cpp vocab; do
  rm -rf "${dest:?}/$part"
  mv "$work/$part" "$dest/$part"
done
echo "$stamp_text" >"$stamp"
echo "llamaref: installed $stamp_text (llama.cpp $llama_version) in $dest"
