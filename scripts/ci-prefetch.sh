#!/usr/bin/env bash
# The downloads of CI's phases after the tests, fetched while the tests run (.ci/run starts this beside them and
# waits for it before the first phase that needs it): the apt packages those scripts install when missing, and the
# official Nodes they run (scripts/node-bin.sh's cache). Network and disk, not CPU, so it overlaps the CPU-bound
# tests instead of adding to the run. Each later script still installs what it lacks: a failed prefetch costs time,
# never a check.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
# package lists: with recommends, as the scripts install them; without, as test/fuzz/build.sh does.
with=(qemu-user libc6-arm64-cross g++-aarch64-linux-gnu g++-mingw-w64-x86-64 wine wine64)
without=(clang libclang-rt-14-dev libzstd-dev)
missing() { for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done; }
mapfile -t need_with < <(missing "${with[@]}")
mapfile -t need_without < <(missing "${without[@]}")
if [ $((${#need_with[@]} + ${#need_without[@]})) -gt 0 ]; then
  echo "ci-prefetch: apt-get install ${need_with[*]} ${need_without[*]}"
  apt-get update -qq || status=1
  export DEBIAN_FRONTEND=noninteractive
  apt_install=(apt-get install -y -qq -o DPkg::Lock::Timeout=600)
  [ ${#need_with[@]} -eq 0 ] || "${apt_install[@]}" "${need_with[@]}" >/dev/null || status=1
  [ ${#need_without[@]} -eq 0 ] || "${apt_install[@]}" --no-install-recommends "${need_without[@]}" >/dev/null || status=1
fi
# Node 22-26 smoke and the heap prebuilds' headers (20-26), arm64 under qemu (24), win32 under Wine (22, 24).
for node in linux-x64:20 linux-x64:22 linux-x64:24 linux-x64:26 linux-arm64:24 win-x64:22 win-x64:24; do
  bash scripts/node-bin.sh "${node%:*}" "${node#*:}" >/dev/null || status=1
done
echo "ci-prefetch: done (status $status)"
exit $status
