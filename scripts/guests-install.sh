#!/usr/bin/env bash
# Installs the toolchains of the Rust and AssemblyScript plugins, idempotently
# (a second run with everything in place installs nothing and takes ~0.1 s):
#
#   rust  Debian bookworm's rustc 1.63 and its wasm32 standard library
#         (apt-get install rustc libstd-rust-dev-wasm32). The builds call
#         /usr/bin/rustc by path, so a rustup toolchain on PATH is never used.
#   as    AssemblyScript, pinned by abi/guest/assemblyscript/package.json and
#         package-lock.json, into <repo>/.cache/asc/node_modules with `npm ci`
#         (npm's cache in <repo>/.cache/npm; nothing in /tmp or $HOME).
#
#   scripts/guests-install.sh [rust|as|all]     (default all)
#
# Needs: apt-get (root, or sudo) for rust; node >= 18 and npm for as.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}

install_rust() {
  if [ -x /usr/bin/rustc ] && compgen -G '/usr/lib/rustlib/wasm32-unknown-unknown/lib/libcore-*.rlib' >/dev/null; then
    return
  fi
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends rustc libstd-rust-dev-wasm32
}

install_as() {
  local src=$root/abi/guest/assemblyscript dest=$root/.cache/asc
  local stamp=$dest/.installed want
  want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dest/node_modules/.bin/asc" ]; then
    return
  fi
  command -v npm >/dev/null || { echo "guests-install: npm is required (apt-get install nodejs npm)" >&2; exit 1; }
  rm -rf "$dest"
  mkdir -p "$dest" "$root/.cache/npm"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --cache "$root/.cache/npm" --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
  echo "guests-install: $("$dest/node_modules/.bin/asc" --version) in $dest"
}

case $what in
  rust) install_rust ;;
  as) install_as ;;
  all) install_rust; install_as ;;
  *) echo "usage: $0 [rust|as|all]" >&2; exit 2 ;;
esac
