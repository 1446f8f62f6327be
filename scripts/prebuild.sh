#!/usr/bin/env bash
# npm run prebuilds: the addon for linux-x64 and linux-arm64 (glibc) into
# prebuilds/<platform>-<arch>/profpack.glibc.node (node-gyp-build's names;
# N-API, so one file serves every Node >= 20), then checks that each needs
# glibc <= 2.28 (scripts/glibc-check.sh). arm64 is cross-compiled with
# Debian's g++-aarch64-linux-gnu, installed here when missing. Then the heap
# sampler's V8 addon, one per Node major and arch (scripts/prebuild-heap.sh:
# prebuilds/linux-<arch>/heap-node<major>.v8heap), and the win32-x64 addon
# (scripts/prebuild-win.sh: mingw-w64, checked with dll-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
  echo "prebuild: installing g++-aarch64-linux-gnu" >&2
  apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 g++-aarch64-linux-gnu >/dev/null
fi
rm -rf prebuilds/linux-x64 prebuilds/linux-arm64
# arm64 first: prebuildify builds in build/, which must end up holding the host's build.
CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar \
  npx prebuildify --napi --strip --strip-bin aarch64-linux-gnu-strip --tag-libc --arch arm64
npx prebuildify --napi --strip --tag-libc --arch x64
ls -l prebuilds/*/
bash scripts/glibc-check.sh prebuilds/linux-*/*.node
bash scripts/prebuild-heap.sh
bash scripts/prebuild-win.sh
