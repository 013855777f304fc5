#!/usr/bin/env bash
# Runs every `func FuzzXxx` in the root module for $1 (default 10s) each.
set -euo pipefail
t=${1:-10s}
cd "$(dirname "$0")/.."
grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./tools/' | while read -r f; do
  dir=$(dirname "$f")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | while read -r fn; do
    echo "fuzz $dir $fn ($t)"
    go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" "$dir"
  done
done
