#!/usr/bin/env bash
# Installs what the `cuda` build tag needs on a machine without a GPU, into
# <repo>/.cache/cuda (idempotent; a second run downloads nothing):
#
#   include/cuda.h          the driver API header gorgonia.org/cu compiles against
#   include/nvrtc.h         NVRTC's header (scripts/cuda-ptx.sh)
#   lib/stubs/libcuda.so    the link-time stub of the driver (no GPU needed)
#   lib/libnvrtc*.so*       NVRTC (+ builtins), which compiles internal/cuda/kernels/*.cu to PTX
#
# They come from Debian bookworm non-free: nvidia-cuda-dev (headers, stub)
# and libnvrtc11.2 + libnvrtc-builtins11.8 (CUDA 11.8's NVRTC, which knows compute_80 and
# compute_90), fetched with `apt-get download` and unpacked with `dpkg -x`;
# nothing is installed system-wide. The non-free component is added to apt's
# sources in its own file, /etc/apt/sources.list.d/realizar-nonfree.sources.
#
# Prints the CGO flags to export at the end (also in .cache/cuda/env).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/.cache/cuda
stamp=$dest/.installed-v1
if [ -f "$stamp" ]; then
  cat "$dest/env"
  exit 0
fi

src=/etc/apt/sources.list.d/realizar-nonfree.sources
if [ ! -f "$src" ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo tee "$src" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $sudo apt-get update -qq
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
# apt-get's own exit status is checked through the count of .deb files below;
# its output (minus the "unsandboxed" note root gets) goes to stderr.
fetch() {
  (cd "$work" && apt-get download -qq nvidia-cuda-dev libnvrtc11.2 libnvrtc-builtins11.8 2>&1 || true) |
    { grep -v 'unsandboxed' || true; } >&2
}
fetch
if [ "$(ls "$work"/*.deb 2>/dev/null | wc -l)" -ne 3 ]; then
  # The sources file predates this run but apt's lists do not know non-free yet.
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  rm -f "$work"/*.deb
  fetch
fi
[ "$(ls "$work"/*.deb 2>/dev/null | wc -l)" -eq 3 ] || { echo "cuda-install: apt-get download failed" >&2; exit 1; }
bytes=$(cat "$work"/*.deb | wc -c)
mkdir -p "$work/x" "$dest/include" "$dest/lib/stubs"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/x"; done

# Only what the build needs; the rest of the packages is dropped.
inc=$(dirname "$(find "$work/x" -name cuda.h -path '*include*' | head -n1)")
cp "$inc/cuda.h" "$inc/nvrtc.h" "$dest/include/"
[ -f "$inc/cudaProfiler.h" ] && cp "$inc/cudaProfiler.h" "$dest/include/"
cp "$(find "$work/x" -name libcuda.so -path '*stubs*' | head -n1)" "$dest/lib/stubs/libcuda.so"
# NVRTC and its builtins (which it dlopens by soname): real files, then links.
for f in $(find "$work/x" -type f \( -name 'libnvrtc.so.*' -o -name 'libnvrtc-builtins.so.*' \)); do cp "$f" "$dest/lib/"; done
(cd "$dest/lib" &&
  ln -sf "$(basename "$(ls libnvrtc.so.11.*.* | head -n1)")" libnvrtc.so.11.2 &&
  ln -sf libnvrtc.so.11.2 libnvrtc.so &&
  ln -sf "$(basename "$(ls libnvrtc-builtins.so.*.*.* | head -n1)")" libnvrtc-builtins.so.11.8)

cat >"$dest/env" <<ENV
export CGO_CFLAGS="-I$dest/include"
export CGO_LDFLAGS="-L$dest/lib/stubs"
export CUDA_NVRTC_LIB="$dest/lib/libnvrtc.so"
ENV
echo "cuda-install: downloaded $((bytes / 1024 / 1024)) MiB in $(($(date +%s) - start)) s; kept $(du -sh "$dest" | cut -f1) in $dest" >&2
touch "$stamp"
cat "$dest/env"
