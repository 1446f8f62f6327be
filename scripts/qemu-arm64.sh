#!/usr/bin/env bash
# Runs NODE_ARGS... with the arm64 Node under qemu-user, in DIR (an arm64
# tree from scripts/arm64-tree.sh):  bash scripts/qemu-arm64.sh DIR scripts/test-both.mjs
# Child processes (the tests spawn node) need the kernel to hand arm64 ELF
# files to qemu: registered here through binfmt_misc when it is writable,
# else only the one process runs under qemu and spawning tests fail.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir=${1:?usage: qemu-arm64.sh DIR NODE_ARGS...}
shift
node_arm=$(bash "$here/node-bin.sh" linux-arm64 24)
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
# Emulated code runs 10-30x slower: test timeouts (vitest.config.mts) stretch to match.
export PROFPACK_TEST_TIMEOUT_SCALE=${PROFPACK_TEST_TIMEOUT_SCALE:-20}
# The emulator's own memory counts in every process's RSS: tests that bound peak RSS allow for it.
export PROFPACK_EMULATED=qemu-user
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
  if [ -w "$binfmt/register" ]; then
    # Debian's qemu-user-binfmt entry for aarch64 ELF executables (/usr/share/binfmts/qemu-aarch64).
    printf '%s' ':qemu-aarch64:M:0:\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64:' \
      >"$binfmt/register" 2>/dev/null || echo "qemu-arm64: could not register binfmt_misc: child processes will not start" >&2
  fi
fi
cd "$dir"
exec qemu-aarch64 "$node_arm" "$@"
