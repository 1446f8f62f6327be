#!/usr/bin/env bash
# Regenerates the outside fixtures of test/fixtures/outside/{go,datadog,node}
# with the real tools, then their expected.json from `go tool pprof`
# (test/outside/outside-fixtures.test.ts checks them). Needs Go (Debian
# golang-go, standard library only) and npm: @datadog/pprof goes into a scratch
# folder outside the repo (DD_SCRATCH, default /tmp/profpack-datadog-pprof),
# never into package.json. Not run by the tests. New runs give new samples of
# the same shape: record the date and versions in ORIGINS.md.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$repo/test/fixtures/outside"
gen="$fixtures/gen"
scratch=${DD_SCRATCH:-/tmp/profpack-datadog-pprof}
DATADOG_PPROF_VERSION=5.20.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$fixtures/go" "$fixtures/datadog" "$fixtures/node"

# Go runtime/pprof: one process per profile type; -trimpath keeps local paths out of the files.
(cd "$gen/go" && go build -trimpath -o "$tmp/outside-fixtures" .)
for kind in cpu heap allocs goroutine mutex block; do
  "$tmp/outside-fixtures" -profile "$kind" -o "$fixtures/go/go.$kind.pb.gz"
done

# @datadog/pprof time (wall + cpu, with contexts) and heap profiles.
installed=$(node -p "try { require('$scratch/node_modules/@datadog/pprof/package.json').version } catch { '' }")
if [ "$installed" != "$DATADOG_PPROF_VERSION" ]; then
  mkdir -p "$scratch"
  cd "$scratch"
  [ -f package.json ] || npm init -y >/dev/null
  npm install --no-save "@datadog/pprof@$DATADOG_PPROF_VERSION" >&2
  cd "$repo"
fi
node "$gen/node/datadog.cjs" "$scratch" "$fixtures/datadog"

# Node's own profilers: --heap-prof (one .heapprofile) and --cpu-prof of a
# program with one worker thread (one .cpuprofile per thread, tid 0 = main).
(cd "$tmp" && node --heap-prof --heap-prof-dir "$tmp/heap" --heap-prof-interval 32768 "$gen/node/heap-work.js")
mv "$tmp"/heap/*.heapprofile "$fixtures/node/node.heapprofile"
(cd "$tmp" && node --cpu-prof --cpu-prof-dir "$tmp/cpu" --cpu-prof-interval 1000 "$gen/node/worker-work.js")
mv "$tmp"/cpu/CPU.*.0.*.cpuprofile "$fixtures/node/node.cpu-main.cpuprofile"
mv "$tmp"/cpu/CPU.*.1.*.cpuprofile "$fixtures/node/node.cpu-worker.cpuprofile"

# expected.json, from the same support code the test compares with.
out="$repo/.outside-expected-build"
rm -rf "$out"
trap 'rm -rf "$tmp" "$out"' EXIT
"$repo/node_modules/.bin/tsc" --outDir "$out" --rootDir "$repo/test/support" --module commonjs \
  --target es2022 --moduleResolution node --esModuleInterop --skipLibCheck --strict --types node \
  "$repo/test/support/outside-expected.ts"
cd "$fixtures"
NODE_PATH="$repo/node_modules" node "$out/outside-expected.js" "$fixtures" \
  go/*.pb.gz datadog/*.pb.gz node/*.heapprofile node/*.cpuprofile
ls -l "$fixtures"/go "$fixtures"/datadog "$fixtures"/node
