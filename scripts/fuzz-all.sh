#!/usr/bin/env bash
# Runs every `func FuzzXxx` in the root module for $1 (default 10s) each.
#
# Minimization of a new interesting input is capped at 5 s (Go's default,
# 60 s, is spent whole on a 2-3 KB input: keep-coverage minimization runs
# the target about n^2/2 times; that was the "stalled" FuzzParse run).
#
# Under heavy load Go's fuzz coordinator can end a run with a bare
# "context deadline exceeded" when a worker answers late at the deadline
# (no input is reported). Such a run is retried once; a real finding
# ("Failing input written to ...") always fails.
set -uo pipefail
t=${1:-10s}
cd "$(dirname "$0")/.."
status=0
while read -r f; do
  dir=$(dirname "$f")
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
    for try in 1 2; do
      echo "fuzz $dir $fn ($t, try $try)"
      out=$(go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" -fuzzminimizetime 5s "$dir" 2>&1); rc=$?
      echo "$out" | tail -n 3
      [ $rc -eq 0 ] && break
      if [ $try -eq 1 ] && echo "$out" | grep -q 'context deadline exceeded' && ! echo "$out" | grep -q 'Failing input'; then
        continue
      fi
      echo "$out"; status=1; break
    done
  done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./tools/' | sort)
exit $status
