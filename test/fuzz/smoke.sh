#!/usr/bin/env bash
# CI smoke for the native fuzz targets: builds every target (installing clang
# if needed), replays the committed regression inputs, then fuzzes each target
# for FUZZ_SMOKE_SECONDS (default 30) so the harnesses cannot rot.
#
#   bash test/fuzz/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SMOKE_SECONDS:-30}
test/fuzz/build.sh
status=0
while read -r target; do
  [ -n "$target" ] || continue
  test/fuzz/run.sh "$target" "$seconds" || status=1
done <test/fuzz/out/targets.txt
exit $status
