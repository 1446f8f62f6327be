#!/usr/bin/env bash
# The shipped package loads its prebuilt addon with no compiler and no install
# scripts: prebuildify, npm pack, install the tarball with --ignore-scripts
# into an empty folder, and require it with PROFPACK_BACKEND=native.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
npm run prebuild
ls prebuilds/*/
tarball=$(npm pack --silent | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work" "$root/$tarball"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --ignore-scripts --no-audit --no-fund "$root/$tarball" >/dev/null
test ! -d node_modules/profpack/build || { echo "pack-check: the tarball must not ship build/"; exit 1; }
PROFPACK_BACKEND=native node -e "
  const p = require('profpack');
  if (p.backend.name !== 'native') throw new Error('prebuild not loaded: ' + p.backend.reason);
  const bytes = p.varint.encodeU32Many(Uint32Array.from([1, 300, 70000]));
  const back = Array.from(p.varint.decodeU32Many(bytes, 0, 3).values);
  if (back.join() !== '1,300,70000') throw new Error('round trip failed: ' + back);
  console.log('pack-check: installed tarball loads the prebuilt addon (' + JSON.stringify(p.backend.features) + ')');
"
# The installed CLI records (its preload and pipe ship too) and reads back what it wrote.
# Uncompressed: --ignore-scripts also skipped zstd-napi's own build, so it has no binary here.
./node_modules/.bin/profpack record --compression none --harvest-ms 100 --out rec.tach -- node -e "function packCheckSpin() { const e = Date.now() + 300; let x = 0; while (Date.now() < e) x += Math.sqrt(x + 1); return x; } packCheckSpin();"
./node_modules/.bin/profpack top rec.tach -n 3 | tee top.txt
grep -q packCheckSpin top.txt || { echo "pack-check: the installed CLI's recording lacks the spinning function"; exit 1; }
echo "pack-check: the installed CLI records and reads back"
