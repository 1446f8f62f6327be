#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, one process, with hang and
# memory limits; the corpus grows in test/fuzz/out/corpus/<target>. Seeds:
# test/fuzz/corpus/<target>/ (small, committed) and inputs generated from the
# shared vectors in place (test/fuzz/native-seeds.mjs). Regression inputs of
# test/fuzz/regressions/<target>/ are replayed first and must pass.
#
#   test/fuzz/run.sh <target> <seconds> [libFuzzer flags...]
# Writes test/fuzz/out/<target>.log; prints "target execs seconds cov ft" last.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=$1
seconds=$2
shift 2
out=test/fuzz/out
bin=$out/$target
[ -x "$bin" ] || test/fuzz/build.sh "$target"

if [ -d "test/fuzz/regressions/$target" ] && [ -n "$(ls -A "test/fuzz/regressions/$target")" ]; then
  "$bin" -runs=1 test/fuzz/regressions/"$target"/* >"$out/$target.regressions.log" 2>&1 ||
    { tail -40 "$out/$target.regressions.log"; echo "fuzz: regression input failed for $target" >&2; exit 1; }
fi

corpus=$out/corpus/$target
seeds=$out/seeds/$target
mkdir -p "$corpus" "$out/artifacts"
rm -rf "$seeds"
node test/fuzz/native-seeds.mjs "$target" "$seeds"
dirs=("$corpus" "$seeds")
[ -d "test/fuzz/corpus/$target" ] && dirs+=("test/fuzz/corpus/$target")

# Inputs beyond these sizes only slow a target down (svb decodes up to 4 values
# per payload byte on three kernel levels); Tachyon files need room for tables.
case "$target" in
  svb) max_len=8192 ;;
  svb_kernels) max_len=4096 ;;
  leb128) max_len=4096 ;;
  tachyon_reader) max_len=32768 ;;
  tachyon_recover) max_len=32768 ;;
  tachyon_v2_region) max_len=4096 ;;
  tachyon_heap) max_len=16384 ;;
  *) max_len=65536 ;;
esac
log=$out/$target.log
set +e
# -reload=0: one process owns the corpus, so rereading its directory every second only costs time.
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len -reload=0 \
  -print_final_stats=1 -artifact_prefix="$out/artifacts/$target-" "$@" "${dirs[@]}" >"$log" 2>&1
rc=$?
set -e
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
echo "$target execs=$execs seconds=$seconds $cov rc=$rc"
if [ $rc -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|contract violated|Test unit written' "$log" | head -20 >&2
  exit $rc
fi
