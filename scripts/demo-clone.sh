#!/usr/bin/env bash
# make test-demo: `make demo` on a fresh clone of HEAD in a folder with no
# ../shared beside it (under .cache/, removed afterwards), with REALIZAR_MODEL
# unset: the demo must need nothing outside the clone. It checks that the story
# is stories260K's greedy text (models/README.md), then that make build gives
# the two commands README's "Writing a plugin" calls (realizar-host, wasmmeta). Uncommitted changes are not
# in the clone; the Go build cache is shared, so only the demo's own work is
# paid again (about 50 s on 2 cores, most of it writing the 110M fixture).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.cache"
tmp=$(mktemp -d "$root/.cache/demo-clone.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-hardlinks "$root" "$tmp/realizar-host"
[[ ! -e $tmp/shared ]]
out=$(cd "$tmp/realizar-host" && env -u REALIZAR_MODEL -u BIN make -s demo 2>&1) || {
	echo "$out"
	echo "test-demo: make demo failed on a fresh clone" >&2
	exit 1
}
want="Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
if ! grep -qF "$want" <<<"$out"; then
	echo "$out"
	echo "test-demo: the story is not stories260K's greedy text" >&2
	exit 1
fi
# "Writing a plugin" calls realizar-host and wasmmeta by name from bin/ (make build).
(cd "$tmp/realizar-host" && make -s build >/dev/null && [[ -x bin/realizar-host && -x bin/wasmmeta ]]) || {
	echo "test-demo: make build does not give bin/realizar-host and bin/wasmmeta" >&2
	exit 1
}
echo "test-demo: make demo ran to completion on a fresh clone in $tmp (no ../shared); make build gave bin/realizar-host and bin/wasmmeta"
