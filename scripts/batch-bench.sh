#!/usr/bin/env bash
# Continuous batching against llama.cpp's own server, on one GGUF file and
# thread count: alternating rounds of scripts/load.py (C concurrent
# streaming clients, greedy, ignore_eos) against `realizar-host serve
# --parallel P` and the native `llama-server --parallel P` (built by
# `make llama-native`), then the medians and the ratio. Loopback only.
#
#   scripts/batch-bench.sh MODEL.gguf [THREADS] [ROUNDS]
#   env: PARALLEL (8), CLIENTS (= PARALLEL), REQUESTS (4 per client), MAX_TOKENS (64),
#        PROMPT_WORDS (16), CTX (per sequence, 256), BIN (bin/realizar-host),
#        LLAMA_SERVER (.cache/llama-native/bin/llama-server), LONG (words of a later
#        long prompt, 0: none)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/batch-bench.sh MODEL.gguf [THREADS] [ROUNDS]}
threads=${2:-2}
rounds=${3:-3}
parallel=${PARALLEL:-8}
clients=${CLIENTS:-$parallel}
requests=${REQUESTS:-$((4 * clients))}
max_tokens=${MAX_TOKENS:-64}
words=${PROMPT_WORDS:-16}
ctx=${CTX:-256}
long=${LONG:-0}
bin=${BIN:-$root/bin/realizar-host}
# shellcheck source=lib/llama-server.sh
source "$root/scripts/lib/llama-server.sh"
llama_server_init batch-bench
[ -x "$bin" ] || (cd "$root" && make build >/dev/null)
port_ours=18181 port_ref=18182
logs=$(mktemp -d)

"$bin" serve --model "$model" --threads "$threads" --parallel "$parallel" --ctx-size "$ctx" \
  --addr "127.0.0.1:$port_ours" 2>"$logs/ours.log" &
server_track $!
llama_server_start "$logs/ref.log" "$port_ref" "$threads" "$parallel" $((ctx * parallel)) "$model"
wait_ready "http://127.0.0.1:$port_ours/ready" "log: $logs"
wait_ready "http://127.0.0.1:$port_ref/health" "log: $logs"

load() { # port
  python3 "$root/scripts/load.py" --url "http://127.0.0.1:$1" --clients "$clients" --requests "$requests" \
    --max-tokens "$max_tokens" --prompt-words "$words" --long-prompt "$long" --seconds 600 --json
}
# One warm-up round each.
load $port_ours >/dev/null || true
load $port_ref >/dev/null || true
: >"$logs/rounds"
for r in $(seq 1 "$rounds"); do
  o=$(load $port_ours); l=$(load $port_ref)
  echo "round $r ours: $o"
  echo "round $r llama-server: $l"
  printf '%s\t%s\n' "$o" "$l" >>"$logs/rounds"
done
python3 - "$logs/rounds" <<'PY'
import json, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
ours = [json.loads(a) for a, _ in rows]; ref = [json.loads(b) for _, b in rows]
def med(xs, k): return statistics.median(x[k] for x in xs)
for k in ("aggregate_tok_per_s", "gap_p50_ms", "gap_p99_ms"):
    a, b = med(ours, k), med(ref, k)
    print("%-22s ours %8.2f  llama-server %8.2f  ratio %.2f" % (k, a, b, a / b if b else float("nan")))
if "gap_p99_during_long_prefill_ms" in ours[0]:
    for k in ("long_prompt_ttft_s", "gap_p99_during_long_prefill_ms"):
        print("%-30s ours %8.2f  llama-server %8.2f" % (k, med(ours, k), med(ref, k)))
PY
