#!/usr/bin/env bash
# The shipped package, as users get it:
#  1. npm run prebuilds (linux-x64 and linux-arm64, glibc <= 2.28, with the
#     heap sampler per Node major; win32-x64, only Windows system DLLs and
#     node.exe imported), npm pack: the tarball holds the prebuilds and no build/ (scripts/win-smoke.sh runs the
#     win32 one under Wine);
#  2. installed with --ignore-scripts into an empty folder it loads the
#     prebuilt addon on x64 and, under qemu-user, on arm64, and the installed
#     CLI records and reads back; the heap sampler's probe picks the prebuilt
#     V8 addon (scripts/prebuild-heap.sh) on Node 20, 22, 24 and 26 for x64
#     and on Node 24 for arm64, and the CLI records the heap with it;
#  3. with the prebuilds removed and no compiler (cc, c++, make fail), npm
#     install still succeeds and the library reads, converts and records on
#     the pure-JS twin, with one warning.
# PACK_CHECK_ARM64=0 skips the arm64 load (no qemu-user); PACK_CHECK_PREBUILT=1
# packs the prebuilds already in prebuilds/ (re-checking their glibc needs);
# PACK_CHECK_KEEP=DIR leaves the checked tarball in DIR (CI hands it to
# scripts/win-smoke.sh rather than pack and compile again).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
heap_nodes=$(bash scripts/prebuild-heap.sh --majors)
if [ "${PACK_CHECK_PREBUILT:-0}" = 1 ]; then
  bash scripts/glibc-check.sh prebuilds/linux-*/*.node prebuilds/linux-*/heap-node*.v8heap
  bash scripts/dll-check.sh prebuilds/win32-x64/profpack.node
else
  npm run prebuilds
fi
tarball=$(npm pack --silent | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work" "$root/$tarball"' EXIT
if [ -n "${PACK_CHECK_KEEP:-}" ]; then mkdir -p "$PACK_CHECK_KEEP" && cp "$tarball" "$PACK_CHECK_KEEP/"; fi

echo "== pack-check: tarball contents"
tar -tzf "$tarball" >"$work/contents.txt"
heap_prebuilds=()
for arch in x64 arm64; do
  for major in $heap_nodes; do heap_prebuilds+=("package/prebuilds/linux-$arch/heap-node$major.v8heap"); done
done
for prebuild in package/prebuilds/linux-x64/profpack.glibc.node package/prebuilds/linux-arm64/profpack.glibc.node \
  package/prebuilds/win32-x64/profpack.node "${heap_prebuilds[@]}"; do
  grep -qx "$prebuild" "$work/contents.txt" || { echo "pack-check: the tarball lacks $prebuild"; exit 1; }
done
if grep -q '^package/build/' "$work/contents.txt"; then echo "pack-check: the tarball must not ship build/"; exit 1; fi

echo "== pack-check: installed with --ignore-scripts, native on x64"
mkdir "$work/native" && cd "$work/native"
npm init -y >/dev/null
npm install --ignore-scripts --no-audit --no-fund "$root/$tarball" >/dev/null
test ! -d node_modules/profpack/build || { echo "pack-check: the installed package has build/"; exit 1; }
cat >load.js <<'EOF'
const p = require('profpack');
if (p.backend.name !== 'native') throw new Error('prebuild not loaded: ' + p.backend.reason);
const bytes = p.varint.encodeU32Many(Uint32Array.from([1, 300, 70000]));
const back = Array.from(p.varint.decodeU32Many(bytes, 0, 3).values);
if (back.join() !== '1,300,70000') throw new Error('varint round trip failed: ' + back);
const values = Uint32Array.from({ length: 1000 }, (_, i) => (i * 2654435761) >>> (i % 32));
const svb = p.svb.deltaDecode(p.svb.deltaEncode(values), values.length);
if (Array.from(p.svb.decode(p.svb.encode(values, "0124"), values.length, "0124")).join() !== Array.from(values).join()) throw new Error("svb 0124 round trip failed");
if (Buffer.compare(Buffer.from(svb.buffer, svb.byteOffset, svb.byteLength), Buffer.from(values.buffer)) !== 0) throw new Error('svb round trip failed');
console.log(`pack-check: ${process.arch}: installed tarball loads the prebuilt addon (simd ${p.backend.features.simd})`);
EOF
PROFPACK_BACKEND=native node load.js
# The installed CLI records (its preload and pipe ship too) and reads back what it wrote.
./node_modules/.bin/profpack record --compression none --harvest-ms 100 --out rec.tach -- node -e "function packCheckSpin() { const e = Date.now() + 300; let x = 0; while (Date.now() < e) x += Math.sqrt(x + 1); return x; } packCheckSpin();"
./node_modules/.bin/profpack top rec.tach -n 3 | tee top.txt
grep -q packCheckSpin top.txt || { echo "pack-check: the installed CLI's recording lacks the spinning function"; exit 1; }
echo "pack-check: the installed CLI records and reads back"

echo "== pack-check: the installed package's heap sampler is its prebuilt V8 addon on Node $heap_nodes (x64)"
# Asked of the library's own probe (dist/record/program/heap, beside the public entry): it loads the prebuild for
# the Node that runs it, and says why when it falls back to the inspector.
cat >heap.js <<'EOF'
const path = require('node:path');
const installed = path.dirname(require.resolve('profpack/package.json'));
const { heapSamplerChoice } = require(path.join(installed, 'dist', 'record', 'program', 'heap', 'index.js'));
const choice = heapSamplerChoice();
const where = `${process.platform}-${process.arch}, Node ${process.version}`;
if (choice.kind !== 'native') throw new Error(`${where}: the heap sampler is the inspector: ${choice.reason}`);
const major = Number(process.versions.node.split('.')[0]);
if (choice.addon.nodeMajor !== major) throw new Error(`${where}: the heap addon is for ${choice.addon.nodeMajor}`);
const file = `prebuilds/${process.platform}-${process.arch}/heap-node${major}.v8heap`;
console.log(`pack-check: ${where}: the heap sampler is native (${file})`);
EOF
host_major=$(node -p 'process.versions.node.split(".")[0]')
for major in $heap_nodes; do
  node_bin=node
  [ "$major" = "$host_major" ] || node_bin=$(bash "$root/scripts/node-bin.sh" linux-x64 "$major")
  "$node_bin" heap.js
done
# The installed CLI records the heap with it (PROFPACK_HEAP_SAMPLER=native: the recording fails without it).
hoard="const kept = []; function packCheckHoard() { for (let i = 0; i < 2000; i++) kept.push(Array(1000).fill(i)); }"
PROFPACK_HEAP_SAMPLER=native ./node_modules/.bin/profpack record --heap --compression none --out heap.tach -- \
  node -e "$hoard packCheckHoard();"
./node_modules/.bin/profpack top heap.tach --sample-type inuse_space -n 3 | tee heap-top.txt
grep -q packCheckHoard heap-top.txt || { echo "pack-check: the heap recording lacks packCheckHoard"; exit 1; }

if [ "${PACK_CHECK_ARM64:-1}" != 0 ]; then
  echo "== pack-check: the same folder on arm64 (qemu-user): the addon, and the heap sampler on Node 24"
  PROFPACK_BACKEND=native bash "$root/scripts/qemu-arm64.sh" "$work/native" load.js
  bash "$root/scripts/qemu-arm64.sh" "$work/native" heap.js
fi

echo "== pack-check: no prebuild, no compiler: npm install succeeds, the JS twin runs"
mkdir -p "$work/repack" "$work/nocc/bin"
tar -xzf "$root/$tarball" -C "$work/repack"
rm -rf "$work/repack/package/prebuilds"
tar -czf "$work/profpack-noprebuild.tgz" -C "$work/repack" package
# Failing shims for every compiler and make node-gyp might reach.
for tool in cc gcc c++ g++ clang clang++ make gmake; do
  printf '#!/bin/sh\necho "%s: no compiler here (pack-check)" >&2\nexit 1\n' "$tool" >"$work/nocc/bin/$tool"
  chmod +x "$work/nocc/bin/$tool"
done
mkdir "$work/nocc/app" && cd "$work/nocc/app"
npm init -y >/dev/null
PATH="$work/nocc/bin:$PATH" CC=false CXX=false MAKE=false \
  npm install --no-audit --no-fund "$work/profpack-noprebuild.tgz" >install.log 2>&1 ||
  { cat install.log; echo "pack-check: npm install failed without a compiler"; exit 1; }
test ! -e node_modules/profpack/build/Release/profpack.node || { echo "pack-check: an addon was built although no compiler works"; exit 1; }
# zstd-napi is optional: its failed build leaves it out, and profpack reads zstd without it.
test ! -e node_modules/zstd-napi/build/Release/binding.node || { echo "pack-check: zstd-napi was built although no compiler works"; exit 1; }
shared="$root/../shared"
node -e "
  const warnings = [];
  process.on('warning', (w) => warnings.push(w.code + ': ' + w.message));
  const p = require('profpack');
  if (p.backend.name !== 'js') throw new Error('expected the JS twin, got ' + p.backend.name);
  const info = p.ProfileReader.open(process.argv[1]).info;
  if (Number(info.sampleCount) !== 668) throw new Error('read ' + info.sampleCount + ' samples, expected 668');
  setImmediate(() => {
    if (warnings.length !== 1 || !/PROFPACK_NO_NATIVE/.test(warnings[0])) throw new Error('expected one PROFPACK_NO_NATIVE warning, got ' + JSON.stringify(warnings));
    console.log('pack-check: no-compiler install: JS twin, one warning, read a zstd vector (' + info.sampleCount + ' samples)');
  });
" "$shared/vectors/tachyon/c01_big_endian_s02_zstd.bin"
./node_modules/.bin/profpack convert "$shared/data/outside/node-cpu-prof.heavy.cpuprofile" --compression none -o conv.tach 2>/dev/null
./node_modules/.bin/profpack convert conv.tach -o conv.collapsed 2>/dev/null
test -s conv.collapsed || { echo "pack-check: convert wrote nothing"; exit 1; }
./node_modules/.bin/profpack record --compression none --harvest-ms 100 --out rec.tach -- node -e "function noCompilerSpin() { const e = Date.now() + 300; let x = 0; while (Date.now() < e) x += Math.sqrt(x + 1); return x; } noCompilerSpin();" 2>/dev/null
./node_modules/.bin/profpack top rec.tach -n 3 2>/dev/null | grep -q noCompilerSpin || { echo "pack-check: no-compiler record lacks the spinning function"; exit 1; }
echo "pack-check: no-compiler install converts and records on the JS twin"
