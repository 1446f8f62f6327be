#!/usr/bin/env bash
# clang-format over native/ (.clang-format: Google layout, 120 columns), as `npm run lint` (--check) and
# `npm run format` (--write) call it. Pinned to clang-format 14 (Debian bookworm's clang-format-14, which .ci/run
# installs): another version lays some lines out differently, so with none of 14 this fails, saying why (a lint that
# passed without checking native/ would let misformatted C++ through).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:---check}
tool=
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 14\.'; then tool=$candidate; break; fi
done
if [ -z "$tool" ]; then
  found=$(command -v clang-format >/dev/null && clang-format --version | head -n 1 || echo none)
  echo "clang-format: FAILED, native/ not checked: clang-format 14 is needed (apt-get install clang-format-14;" \
    "other versions lay some lines out differently); found: $found" >&2
  exit 1
fi
mapfile -t files < <(find native -name '*.cc' -o -name '*.h' | sort)
case "$mode" in
  --check) "$tool" --dry-run --Werror "${files[@]}" && echo "clang-format: ${#files[@]} files under native/ formatted" ;;
  --write) "$tool" -i "${files[@]}" ;;
  *) echo "usage: scripts/clang-format.sh [--check|--write]" >&2; exit 2 ;;
esac
