#!/usr/bin/env bash
# Lists the newest GLIBC_ symbol version each shared object needs (objdump -T)
# and fails when one needs more than glibc 2.28, the oldest glibc Node 20+'s
# own Linux binaries run on (RHEL 8, Debian 10, Ubuntu 20.04 have 2.28-2.31).
#   bash scripts/glibc-check.sh prebuilds/*/*.node
set -euo pipefail
limit=${GLIBC_LIMIT:-2.28}
[ $# -gt 0 ] || { echo "usage: glibc-check.sh FILE.node..." >&2; exit 2; }
status=0
for f in "$@"; do
  # The host objdump reads only its own architecture: use the cross one for arm64.
  dump=objdump
  if file -L "$f" | grep -q aarch64; then dump=aarch64-linux-gnu-objdump; fi
  versions=$("$dump" -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV)
  newest=$(echo "$versions" | tail -n 1)
  if [ -z "$newest" ]; then
    echo "glibc-check: $f: no GLIBC_ symbols found (not a glibc build?)" >&2
    status=1
  elif [ "$(printf '%s\n%s\n' "$newest" "$limit" | sort -V | tail -n 1)" != "$limit" ]; then
    echo "glibc-check: FAIL $f needs GLIBC_$newest (> $limit):"
    "$dump" -T "$f" | grep -E "GLIBC_($(echo "$versions" | awk -v l="$limit" 'BEGIN{split(l,L,".")} {split($0,V,"."); if (V[1]>L[1] || (V[1]==L[1] && V[2]+0>L[2]+0)) print $0}' | sed 's/\./\\./g' | paste -sd'|'))[ )]" | sed 's/^/  /'
    status=1
  else
    echo "glibc-check: ok $f needs GLIBC_$newest (<= $limit); $("$dump" -p "$f" | awk '/NEEDED/ {print $2}' | paste -sd' ')"
  fi
done
exit $status
