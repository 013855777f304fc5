#!/usr/bin/env bash
# The standard sampler's per-step cost with each of llama.cpp's optional
# stages on, as a share of a decode step of the 110M Q4_K_M fixture: for
# each configuration, ROUNDS runs of `realizar-host run --json` (64 tokens,
# end-of-generation ignored, seed 1), interleaved, and the medians of the
# policies' time per step (host-side candidate selection and copies
# included, and the turn's reset: an instance's init on its first turn)
# and of the forward's decode step, and the median of each run's share
# (the first over the second, within the run).
#
#   scripts/sampler-cost.sh [MODEL.gguf] [THREADS] [ROUNDS]
#   env: BIN (bin/realizar-host)
#   MODEL defaults to .cache/demo/m110-Q4_K_M.gguf (make demo writes it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/.cache/demo/m110-Q4_K_M.gguf}
threads=${2:-2}
rounds=${3:-3}
bin=${BIN:-$root/bin/realizar-host}
[ -x "$bin" ] || (cd "$root" && make build >/dev/null)
[ -f "$model" ] || { echo "sampler-cost: $model missing: run make demo" >&2; exit 1; }
configs=(
  "defaults|"
  "top-n-sigma 1|--top-n-sigma 1"
  "xtc-probability 0.5|--xtc-probability 0.5"
  "dynatemp-range 0.5|--dynatemp-range 0.5"
  "mirostat 1|--mirostat 1"
  "mirostat 2 (mirostat-v2)|--mirostat 2"
  "dry-multiplier 0.8|--dry-multiplier 0.8"
)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for c in "${configs[@]}"; do
    name=${c%%|*} flags=${c#*|}
    # shellcheck disable=SC2086
    "$bin" run -m "$model" -p 'Once upon a time' -n 64 --ignore-eos --seed 1 --threads "$threads" --json $flags |
      python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print(sys.argv[1]+"\t"+str(t["policy_us_per_step"])+"\t"+str(t["decode_tok_per_s"]))' "$name" >>"$out"
  done
done
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, us, tps = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append((float(us), float(tps)))
print("| configuration | policies µs/step | decode step | share |")
print("|---|---|---|---|")
for name, v in rows.items():
    us = statistics.median(x[0] for x in v)
    tps = statistics.median(x[1] for x in v)
    share = statistics.median(x[0] * x[1] / 1e6 for x in v)  # per run: policies / decode step
    print(f"| {name} | {us:.1f} | {1000/tps:.2f} ms ({tps:.1f} tok/s) | {100*share:.2f}% |")
PY
