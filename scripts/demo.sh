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
# The model is models/stories260K.gguf, committed with its licence and
# provenance (models/README.md), or the file named by $REALIZAR_MODEL when that
# is set. Everything the demo writes goes to .cache/demo/ (ignored by git,
# about 80 MB) and is reused next time.
#
# What it needs is checked before anything is built: Go at least the go.mod
# version, and the modules of the build (in the module cache, or fetched once
# from $GOPROXY: the script says so before it fetches).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${BIN:-bin/realizar-host}
cache=.cache/demo
stories_sha256=270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d

fail() {
	echo "demo: $*" >&2
	exit 1
}

# Prerequisites, before any build.
command -v go >/dev/null || fail "no go command on PATH: install Go $(sed -n 's/^go //p' go.mod) or newer (https://go.dev/dl/)"
need=$(sed -n 's/^go //p' go.mod)
have=$(go env GOVERSION)
have=${have#go}
if [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1) != "$need" ]]; then
	fail "go $have is older than go.mod's go $need: install a newer Go (https://go.dev/dl/)"
fi
stories=${REALIZAR_MODEL:-models/stories260K.gguf}
[[ -f $stories ]] || fail "model $stories not found${REALIZAR_MODEL:+ (REALIZAR_MODEL)}"
if [[ -z ${REALIZAR_MODEL:-} ]] && command -v sha256sum >/dev/null; then
	sum=$(sha256sum "$stories" | cut -d' ' -f1)
	if [[ $sum != "$stories_sha256" ]]; then
		fail "$stories has sha256 $sum, not stories260K's $stories_sha256 (a Git LFS pointer or a damaged checkout?)"
	fi
fi
if ! GOFLAGS= GOPROXY=off go list -deps ./cmd/realizar-host >/dev/null 2>&1; then
	echo "demo: the first build downloads the modules the binary imports (23 modules, about 24 MB," >&2
	echo "      README \"Set-up\") from $(go env GOPROXY) into $(go env GOMODCACHE); later builds are offline" >&2
fi
echo "building $bin" >&2
go build -o "$bin" ./cmd/realizar-host
mkdir -p "$cache"

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

section "110M fixture: write it (random weights, llama vocabulary) quantized Q4_K_M by our quantizer"
m110=$cache/m110-Q4_K_M.gguf
if [[ -f $m110 ]]; then
	echo "(cached) $m110" >&2
else
	# --type quantizes each tensor as it is drawn: no 537 MB F32 file on the way.
	"$bin" fixture --preset m110 --type Q4_K_M --out "$m110.tmp" >&2
	mv "$m110.tmp" "$m110"
fi

section "110M fixture Q4_K_M: 32 tokens through the Q4_K path (random weights: the text is noise)"
"$bin" run --model "$m110" --prompt "Once upon a time" --echo --max-tokens 32 --ignore-eos \
	--sampler greedy --seed 1
