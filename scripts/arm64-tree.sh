#!/usr/bin/env bash
# Makes an arm64 copy of this checkout in DIR, to run under qemu-user:
# the tracked files and dist/, node_modules installed for linux-arm64 (its
# optional platform packages, e.g. vitest's bundler), zstd-napi and the addon
# cross-compiled with g++-aarch64-linux-gnu (installed when missing). Prints
# the arm64 node's path. ARM64_TREE_ADDON=FILE: an arm64 profpack.node already
# built (CI: the prebuild scripts/pack-check.sh made, the one that ships) is
# the tree's addon instead of a second cross-compile of the same sources.
#   bash scripts/arm64-tree.sh DIR     (then: bash scripts/qemu-arm64.sh DIR CMD...)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${1:?usage: arm64-tree.sh DIR}
addon=${ARM64_TREE_ADDON:+$(realpath "$ARM64_TREE_ADDON")}
node_arm=$(bash scripts/node-bin.sh linux-arm64 24)
export CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar
# A fresh CI machine may lack the cross compiler: install it as scripts/prebuild.sh does.
if ! command -v "$CXX" >/dev/null; then
  echo "arm64-tree: installing g++-aarch64-linux-gnu" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    g++-aarch64-linux-gnu >/dev/null
fi
command -v "$CXX" >/dev/null || { echo "arm64-tree: $CXX missing (apt-get install g++-aarch64-linux-gnu)" >&2; exit 1; }

rm -rf "$dir"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
git ls-files -z | tar --null -cf - -T - | tar -xf - -C "$dir"
[ -d dist ] || npm run compile >/dev/null
cp -r dist "$dir/dist"
cd "$dir"
# --ignore-scripts: nothing builds for the host; the two addons are cross-built below.
npm ci --cpu=arm64 --os=linux --libc=glibc --ignore-scripts --no-audit --no-fund >/dev/null
gyp="node $dir/node_modules/node-gyp/bin/node-gyp.js"
# node-gyp run directly does not see npm's config: pass its header folder on (N-API headers serve every Node).
nodedir=$(npm config get nodedir 2>/dev/null || true)
case "$nodedir" in '' | undefined | null) ;; *) gyp="$gyp --nodedir=$nodedir" ;; esac
# Quiet unless a build fails: then the end of its log.
built() { "$@" >"$dir/.arm64-build.log" 2>&1 || { tail -n 40 "$dir/.arm64-build.log" >&2; exit 1; }; }
(cd node_modules/zstd-napi && built $gyp rebuild --arch=arm64 -j 2)
if [ -n "$addon" ]; then
  mkdir -p build/Release && cp "$addon" build/Release/profpack.node
else
  built $gyp rebuild --arch=arm64 -j 2
fi
file -L build/Release/profpack.node node_modules/zstd-napi/build/Release/binding.node | grep -c aarch64 | grep -qx 2 ||
  { echo "arm64-tree: the addons did not build for aarch64" >&2; exit 1; }
echo "$node_arm"
