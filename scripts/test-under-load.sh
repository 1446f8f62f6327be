#!/usr/bin/env bash
# The test suite (or the files given) on both backends while two busy loops
# compete for the CPUs, as on a shared 2-core CI machine: the tests that count
# samples must judge them against the CPU time the process got, not the wall
# clock. Prints how long the run took. Usage:
#   bash scripts/test-under-load.sh                  # the whole suite
#   bash scripts/test-under-load.sh test/record      # some files
set -uo pipefail
cd "$(dirname "$0")/.."
loops=()
stop_loops() {
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null; done
}
trap stop_loops EXIT INT TERM
for _ in 1 2; do
  node -e 'for (;;) {}' &
  loops+=("$!")
done
echo "test-under-load: two busy loops running (pids ${loops[*]})" >&2
start=$(date +%s)
node scripts/test-both.mjs "$@"
status=$?
echo "test-under-load: $(( $(date +%s) - start )) s under load, exit $status" >&2
exit "$status"
