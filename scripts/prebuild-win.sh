#!/usr/bin/env bash
# The win32-x64 prebuild, cross-compiled here with Debian's mingw-w64 (issue 31):
#   bash scripts/prebuild-win.sh   ->  prebuilds/win32-x64/profpack.node
# N-API, so one file serves every Node >= 20 for Windows. node.exe exports
# N-API: an import library for it comes from node-api-headers' node_api.def
# (fetched from the npm registry into a cache, like scripts/node-bin.sh's
# Nodes). libstdc++, libgcc and winpthread are linked statically, so the addon
# needs only Windows system DLLs and node.exe (scripts/dll-check.sh checks).
# The posix-thread compiler: node-addon-api uses std::mutex, which the win32
# thread model of mingw's libstdc++ lacks. g++-mingw-w64-x86-64 is installed
# with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=x86_64-w64-mingw32-g++-posix
if ! command -v "$cxx" >/dev/null; then
  echo "prebuild-win: installing g++-mingw-w64-x86-64" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 g++-mingw-w64-x86-64 >/dev/null
fi
headers_version=1.9.0
default=$HOME/.cache/profpack-nodes
[ -d /work/nodes ] && default=/work/nodes
headers_dir="${PROFPACK_NODES:-$default}/node-api-headers-$headers_version"
headers="$headers_dir/node_modules/node-api-headers"
if [ ! -f "$headers/def/node_api.def" ]; then
  mkdir -p "$headers_dir"
  npm install --prefix "$headers_dir" --no-audit --no-fund --no-save "node-api-headers@$headers_version" >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
x86_64-w64-mingw32-dlltool -d "$headers/def/node_api.def" -l "$work/libnode_api.a" -D node.exe
# binding.gyp's flags, for this compiler.
flags=(-std=c++17 -fexceptions -O3 -fvisibility=hidden -ffunction-sections -fdata-sections
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS
  -I"$(node -p "require('node-addon-api').include_dir")" -I"$headers/include" -Inative)
export cxx work
# Two compilers at a time: the machines this runs on are shared.
node scripts/native-sources.js | tr ' ' '\n' | xargs -P 2 -I{} sh -c \
  'o="$work/$(echo "$1" | tr / _).o"; shift; "$cxx" "$@" -c "$0" -o "$o"' {} "{}" "${flags[@]}"
mkdir -p prebuilds/win32-x64
"$cxx" -shared -static -static-libgcc -static-libstdc++ -s -Wl,--gc-sections -o prebuilds/win32-x64/profpack.node \
  "$work"/*.o -L"$work" -lnode_api
ls -l prebuilds/win32-x64/
bash scripts/dll-check.sh prebuilds/win32-x64/profpack.node
