#!/usr/bin/env bash
# make demo: the main job end to end, offline, on CPU.
#
#  1. The real trained stories260K (TinyStories, llama architecture, F32),
#     quantized by our quantizer to Q8_0 (its widths cannot hold Q4_K; the
#     tensors too narrow for Q8_0 stay F16/F32), then "Once upon a time"
#     through the embedded WASM standard sampler (temperature 0: greedy) and
#     strings stop policy.
#  2. The 110M fixture (random weights, real llama vocabulary) written by
#     `realizar-host fixture`, quantized Q4_K_M by our quantizer, run through
#     the same policies: gibberish by design, there to show the Q4_K path and
#     its speed.
#
# The model is taken from ../shared/models/stories260K.gguf (relative to the
# repository root) when it exists, else from $REALIZAR_MODEL. Everything the
# demo writes goes to .cache/demo/ (ignored by git) and is reused next time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${BIN:-bin/realizar-host}
cache=.cache/demo
stories_sha256=270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d
stories_url=https://github.com/cozy-creator/python-gen-worker/raw/main/tests/testdata/stories260K.gguf

if [[ ! -x $bin ]]; then
	echo "building $bin"
	go build -o "$bin" ./cmd/realizar-host
fi
mkdir -p "$cache"

# ../shared/models of this checkout, or of the main checkout when this is a
# linked git worktree; then $REALIZAR_MODEL.
stories=../shared/models/stories260K.gguf
if [[ ! -f $stories ]] && common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
	stories=$(dirname "$(dirname "$common")")/shared/models/stories260K.gguf
fi
if [[ ! -f $stories ]]; then
	stories=${REALIZAR_MODEL:-}
fi
if [[ -z $stories || ! -f $stories ]]; then
	cat >&2 <<EOF
demo: stories260K.gguf not found (looked in ../shared/models/ and \$REALIZAR_MODEL).
  Download it (1,185,376 bytes, MIT) and point REALIZAR_MODEL at it:
    curl -Lo stories260K.gguf $stories_url
    echo "$stories_sha256  stories260K.gguf" | sha256sum -c
    REALIZAR_MODEL=\$PWD/stories260K.gguf make demo
EOF
	exit 1
fi
if command -v sha256sum >/dev/null; then
	sum=$(sha256sum "$stories" | cut -d' ' -f1)
	if [[ $sum != "$stories_sha256" ]]; then
		echo "demo: note: $stories has sha256 $sum, not stories260K's $stories_sha256; running it anyway" >&2
	fi
fi

section() {
	if [[ -t 2 ]]; then
		printf '\n\033[1m== %s\033[0m\n' "$*" >&2
	else
		printf '\n== %s\n' "$*" >&2
	fi
}

# newer OUT IN: OUT exists and is newer than IN.
newer() { [[ -f $1 && $1 -nt $2 ]]; }

section "stories260K: quantize F32 -> Q8_0 with our quantizer"
q8=$cache/stories260K-Q8_0.gguf
if newer "$q8" "$stories"; then
	echo "(cached) $q8" >&2
else
	"$bin" quantize "$stories" "$q8" Q8_0 >&2
fi

section "stories260K Q8_0: \"Once upon a time\", embedded standard sampler at temperature 0, stop at the end of the paragraph"
"$bin" run --model "$q8" --prompt "Once upon a time" --echo --max-tokens 200 \
	--temperature 0 --stop-string $'\n'

section "110M fixture: write it (random weights, llama vocabulary)"
m110=$cache/m110-Q4_K_M.gguf
if [[ -f $m110 ]]; then
	echo "(cached) $m110" >&2
else
	f32=$cache/m110-F32.gguf
	"$bin" fixture --preset m110 --out "$f32"
	section "110M fixture: quantize F32 -> Q4_K_M with our quantizer"
	"$bin" quantize "$f32" "$m110" Q4_K_M >&2
	rm -f "$f32"
fi

section "110M fixture Q4_K_M: 32 tokens through the Q4_K path (random weights: the text is noise)"
"$bin" run --model "$m110" --prompt "Once upon a time" --echo --max-tokens 32 --ignore-eos \
	--sampler greedy --seed 1
