#!/usr/bin/env bash
# CI smoke for the native fuzz targets: builds every target (installing clang
# if needed; two targets at a time), replays the committed regression inputs, then fuzzes each target
# for FUZZ_SMOKE_SECONDS (default 30) so the harnesses cannot rot.
#
#   bash test/fuzz/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SMOKE_SECONDS:-30}
# Each target is one clang process to build and one libFuzzer process to run: two targets at a time
# (FUZZ_SMOKE_JOBS) keep both cores of a CI machine busy, each target still built and fuzzed for $seconds.
jobs=${FUZZ_SMOKE_JOBS:-2}
targets=$(test/fuzz/build.sh --list)
export seconds
status=0
xargs -P "$jobs" -I{} bash -c 'test/fuzz/build.sh "$1" 2>&1 && test/fuzz/run.sh "$1" "$seconds"' _ {} <<<"$targets" ||
  status=1
printf '%s\n' $targets >test/fuzz/out/targets.txt
exit $status
