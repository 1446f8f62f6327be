#!/usr/bin/env bash
# CI's arm64 smoke under qemu-user: an arm64 tree (scripts/arm64-tree.sh: addon
# and zstd-napi cross-built, the official arm64 Node 24) runs, on both
# backends, the tests of every shared vector: Tachyon read and written, Stream
# VByte (NEON kernels forced and not), LEB128, PC tables. Never a speed claim.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
for pkg in qemu-user:qemu-aarch64 libc6-arm64-cross:/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1; do
  name=${pkg%%:*} probe=${pkg#*:}
  if ! command -v "$probe" >/dev/null && [ ! -e "$probe" ]; then
    echo "arm64-smoke: installing $name" >&2
    apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 "$name" >/dev/null
  fi
done
# The tests find ../shared beside the checkout: the tree gets a link to it.
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
ln -s "$(cd "$root/../shared" && pwd)" "$base/shared"
bash scripts/arm64-tree.sh "$base/tree" >/dev/null
tests=(test/backend.test.ts test/svb/vectors.test.ts test/varint/leb128.test.ts test/pctable/vectors.test.ts
  test/tachyon/read/vectors.test.ts test/tachyon/write/vectors.test.ts)
if bash scripts/qemu-arm64.sh "$base/tree" -e "require('child_process').execFileSync(process.execPath, ['-e', ''])" 2>/dev/null; then
  # arm64 children start (binfmt_misc): the usual runner, plus the forced-kernel test (it spawns).
  # One file at a time: under emulation a vitest worker can miss its start-up deadline when several start at once.
  bash scripts/qemu-arm64.sh "$base/tree" scripts/test-both.mjs --no-file-parallelism "${tests[@]}" test/svb/simd.test.ts
else
  # No binfmt_misc: one qemu process, tests in worker threads, each backend in turn.
  echo "arm64-smoke: arm64 child processes cannot start here (no binfmt_misc): worker threads, no forced-kernel test" >&2
  for backend in native js; do
    PROFPACK_BACKEND=$backend bash scripts/qemu-arm64.sh "$base/tree" node_modules/vitest/vitest.mjs run --pool=threads --no-file-parallelism "${tests[@]}"
  done
fi
