# Sourced, not run, by the scripts that measure against llama.cpp's own
# server (scripts/batch-bench.sh, scripts/spec-vs-llama.sh): it finds the
# native llama-server, starts servers in the background on loopback, waits
# until they answer, and stops every one it started when the script exits.
#
#   source "$root/scripts/lib/llama-server.sh"
#   llama_server_init NAME      # NAME prefixes messages; sets $llama and the EXIT trap
#   llama_server_start LOG PORT THREADS PARALLEL CTX MODEL [ARGS...]
#                               # llama-server -c CTX (all sequences), --no-warmup,
#                               # stdout and stderr to LOG; stopped on exit
#   server_track PID            # another background server, stopped on exit too
#   wait_ready URL [HINT]       # polls URL until it answers (up to 120 s)
#
# $llama is $LLAMA_SERVER, else .cache/llama-native/bin/llama-server (built
# by `make llama-native`), else /work/llama-native/bin/llama-server; none
# executable exits 1 naming it.

llama_server_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
llama_server_name=llama-server
llama_server_pids=()

llama_server_init() { # name
  llama_server_name=$1
  llama=${LLAMA_SERVER:-$llama_server_root/.cache/llama-native/bin/llama-server}
  [ -x "$llama" ] || [ -n "${LLAMA_SERVER:-}" ] || llama=/work/llama-native/bin/llama-server
  [ -x "$llama" ] || { echo "$llama_server_name: $llama missing: run make llama-native" >&2; exit 1; }
  trap llama_server_cleanup EXIT
}

# llama_server_cleanup stops the servers: SIGTERM, then SIGKILL a second
# later for one in the middle of a generation that outlives it.
llama_server_cleanup() {
  [ ${#llama_server_pids[@]} -gt 0 ] || return 0
  for p in "${llama_server_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${llama_server_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}

server_track() { # pid
  llama_server_pids+=("$1")
}

llama_server_start() { # log port threads parallel ctx model [args...]
  local log=$1 port=$2 threads=$3 parallel=$4 ctx=$5 model=$6
  shift 6
  "$llama" -m "$model" -t "$threads" -tb "$threads" --parallel "$parallel" -c "$ctx" "$@" \
    --host 127.0.0.1 --port "$port" --no-warmup >"$log" 2>&1 &
  server_track $!
}

wait_ready() { # url [hint]
  for _ in $(seq 1 600); do
    if curl -sf "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "$llama_server_name: $1 never became ready${2:+ ($2)}" >&2
  return 1
}
