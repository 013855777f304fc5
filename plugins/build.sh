#!/usr/bin/env bash
# Rebuilds the committed plugin modules in plugins/wasm/ from their sources,
# byte for byte (CI rebuilds them and runs git diff --exit-code).
#
#   plugins/build.sh [c|go|wat|all]     (default all)
#
# c    clang-14 --target=wasm32, no libc (apt-get install clang-14 lld-14);
#      the SDK is abi/guest/c. These are the embedded defaults.
# go   the pinned Go toolchain (GOTOOLCHAIN=local, GOOS=wasip1, c-shared,
#      -trimpath, no build id); the SDK is abi/guest.
# wat  wabt's wat2wasm (apt-get install wabt).
#
# Each module then gets its realizar.meta section from abi/cmd/wasmmeta,
# which writes the same bytes for the same input.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=plugins/wasm
what=${1:-all}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
GOTOOLCHAIN=local go build -trimpath -o "$tmp/wasmmeta" ./abi/cmd/wasmmeta

CLANG=${CLANG:-clang-14}
# Fixed flags: no debug info (so no paths), no fused or reassociated
# floating point (ABI §9), no libc, exports named in the sources.
CFLAGS=(--target=wasm32 -std=c11 -O2 -nostdlib -ffp-contract=off -fno-fast-math
  -fno-builtin -fno-ident -g0 -ffile-prefix-map="$root"=. -Wall -Wextra -Werror
  -Iabi/guest/c -Wl,--no-entry -Wl,--strip-all -Wl,-z,stack-size=65536)

meta() { # kind name version description in out
  "$tmp/wasmmeta" -kind "$1" -name "$2" -version "$3" -description "$4" "$5" "$6"
}

build_c() { # name kind source description
  local name=$1 kind=$2 src=$3 desc=$4
  "$CLANG" "${CFLAGS[@]}" -o "$tmp/$name.wasm" "$src" abi/guest/c/realizar.c
  meta "$kind" "$name" 1.0.0 "$desc" "$tmp/$name.wasm" "$out/$name.wasm"
}

build_go() { # name kind package description
  local name=$1 kind=$2 pkg=$3 desc=$4
  GOTOOLCHAIN=local GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath \
    -ldflags="-s -w -buildid=" -o "$tmp/$name.wasm" "$pkg"
  meta "$kind" "$name" 1.0.0 "$desc" "$tmp/$name.wasm" "$out/$name.wasm"
}

build_wat() { # name kind source description
  local name=$1 kind=$2 src=$3 desc=$4
  wat2wasm -o "$tmp/$name.wasm" "$src"
  meta "$kind" "$name" 1.0.0 "$desc" "$tmp/$name.wasm" "$out/$name.wasm"
}

if [ "$what" = c ] || [ "$what" = all ]; then
  build_c greedy sampler plugins/sampler/greedy/greedy.c \
    "argmax (top-1 candidate); lowest id on ties; C"
  build_c standard sampler plugins/sampler/standard/c/standard.c \
    "llama.cpp's default chain: logit bias, penalties, top-k, typical-p, top-p, min-p, temperature, seeded draw; C"
fi
if [ "$what" = go ] || [ "$what" = all ]; then
  build_go standard-go sampler ./plugins/sampler/standard/wasm \
    "llama.cpp's default chain (as standard), built with the Go SDK"
fi
if [ "$what" = wat ] || [ "$what" = all ]; then
  :
fi
