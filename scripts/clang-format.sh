#!/usr/bin/env bash
# clang-format over native/ (.clang-format: Google layout, 120 columns), as `npm run lint` (--check) and
# `npm run format` (--write) call it. Pinned to clang-format 14 (Debian bookworm's clang-format-14, which .ci/run
# installs): another version lays some lines out differently, so with none of 14 this skips, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:---check}
tool=
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 14\.'; then tool=$candidate; break; fi
done
if [ -z "$tool" ]; then
  echo "clang-format: SKIPPED, clang-format 14 is not installed (apt-get install clang-format-14); native/ not checked"
  exit 0
fi
mapfile -t files < <(find native -name '*.cc' -o -name '*.h' | sort)
case "$mode" in
  --check) "$tool" --dry-run --Werror "${files[@]}" && echo "clang-format: ${#files[@]} files under native/ formatted" ;;
  --write) "$tool" -i "${files[@]}" ;;
  *) echo "usage: scripts/clang-format.sh [--check|--write]" >&2; exit 2 ;;
esac
