#!/usr/bin/env bash
# Speculative decoding by n-gram lookup against llama.cpp's own server, on
# one GGUF file, prompt and thread count: alternating rounds of
# `realizar-host run --json`, plain and with --lookup, and of the native
# llama-server (built by `make llama-native`) with each --spec-type given,
# greedy, one generation at a time, `/completion` with cache_prompt false.
# It prints each configuration's median decode tok/s (ours:
# timings.decode_tok_per_s; llama-server: timings.predicted_per_second),
# the drafts accepted / drafted (the last round's), our lookup's ratio to
# llama-server's plain and best n-gram mode, and whether the texts are the
# same: our greedy text against llama-server's (the issue's "same chances"
# premise), and every configuration against its own side's plain text.
# Loopback only.
#
#   scripts/spec-vs-llama.sh MODEL.gguf [THREADS] [ROUNDS]
#   env: PROMPT ("Once upon a time"), TOKENS (400), CTX (1024), MODES (none ngram-simple
#        ngram-map-k ngram-mod), BIN (bin/realizar-host), LLAMA_SERVER
#        (.cache/llama-native/bin/llama-server, else /work/llama-native/bin/llama-server),
#        OUT (a folder to keep each generation's JSON in; default a temporary one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/spec-vs-llama.sh MODEL.gguf [THREADS] [ROUNDS]}
threads=${2:-2}
rounds=${3:-3}
prompt=${PROMPT:-Once upon a time}
tokens=${TOKENS:-400}
ctx=${CTX:-1024}
read -r -a modes <<<"${MODES:-none ngram-simple ngram-map-k ngram-mod}"
bin=${BIN:-$root/bin/realizar-host}
# shellcheck source=lib/llama-server.sh
source "$root/scripts/lib/llama-server.sh"
llama_server_init spec-vs-llama
[ -x "$bin" ] || (cd "$root" && make build >/dev/null)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

# One llama-server per mode, each on its own port, idle while another runs.
port=18191
ports=()
for m in "${modes[@]}"; do
  llama_server_start "$out/llama-$m.log" "$port" "$threads" 1 "$ctx" "$model" --spec-type "$m"
  ports+=("$port")
  port=$((port + 1))
done
for p in "${ports[@]}"; do wait_ready "http://127.0.0.1:$p/health" "log: $out"; done

ours() { # name [flags...]
  local name=$1
  shift
  "$bin" run -m "$model" -t "$threads" -c "$ctx" -p "$prompt" -n "$tokens" --sampler greedy --ignore-eos \
    --json "$@" 2>"$out/$name.err"
}
body=$(python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1], "n_predict": int(sys.argv[2]),
  "temperature": 0, "top_k": 1, "ignore_eos": True, "cache_prompt": False, "return_tokens": True}))' "$prompt" "$tokens")
theirs() { # port
  curl -sf "http://127.0.0.1:$1/completion" -H 'Content-Type: application/json' -d "$body"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
echo "spec-vs-llama: $(basename "$model"), -t $threads, $tokens tokens, prompt \"$prompt\", load average at start $(loadavg)"
# Round 0 is a warm-up (page cache, CPU clocks); rounds 1.. alternate.
for r in $(seq 0 "$rounds"); do
  ours "ours-plain" >"$out/r$r-ours-plain.json"
  ours "ours-lookup" --lookup >"$out/r$r-ours-lookup.json"
  for i in "${!modes[@]}"; do
    theirs "${ports[$i]}" >"$out/r$r-llama-${modes[$i]}.json"
  done
  echo "round $r done" >&2
done

echo "load average at end $(loadavg)"
python3 - "$out" "$rounds" "${modes[@]}" <<'PY'
import json, os, statistics, sys
out, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(r, name): return json.load(open(os.path.join(out, "r%d-%s.json" % (r, name))))
def ours(d): return d["timings"]["decode_tok_per_s"], d.get("drafts", {}).get("accepted", 0), d.get("drafts", {}).get("drafted", 0), d["text"]
def theirs(d):
    t = d.get("timings", {})
    return t.get("predicted_per_second", float("nan")), t.get("draft_n_accepted", 0), t.get("draft_n", 0), d["content"]
configs = [("ours plain", "ours-plain", ours), ("ours --lookup", "ours-lookup", ours)] + \
          [("llama-server " + m, "llama-" + m, theirs) for m in modes]
res = {}
for label, name, parse in configs:
    rows = [parse(load(r, name)) for r in range(1, rounds + 1)]
    res[label] = dict(rate=statistics.median(x[0] for x in rows), rates=[x[0] for x in rows],
                      accepted=rows[-1][1], drafted=rows[-1][2], text=rows[-1][3])
def first_diff(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)) if len(a) != len(b) else -1)
for label, _, _ in configs:
    x = res[label]
    base = res["ours plain"] if label.startswith("ours") else res.get("llama-server none", res["ours plain"])
    same = "same text as its plain" if x["text"] == base["text"] else "TEXT DIFFERS from its plain at char %d" % first_diff(x["text"], base["text"])
    print("%-28s %9.1f tok/s median (%s)  drafts %d accepted / %d  %s" % (label, x["rate"],
          " ".join("%.1f" % v for v in x["rates"]), x["accepted"], x["drafted"], same))
ref = res.get("llama-server none")
if ref:
    d = first_diff(res["ours plain"]["text"], ref["text"])
    print("greedy texts, ours and llama-server's: " + ("identical" if d < 0 else "differ from char %d" % d))
    print("ours plain / llama-server none: %.2fx" % (res["ours plain"]["rate"] / ref["rate"]))
ngram = [m for m in modes if m != "none"]
if ngram:
    best = max(ngram, key=lambda m: res["llama-server " + m]["rate"])
    print("ours --lookup / llama-server %s (its best n-gram mode): %.2fx" % (best,
          res["ours --lookup"]["rate"] / res["llama-server " + best]["rate"]))
PY
