#!/usr/bin/env bash
# Lists the DLLs each Windows addon imports (x86_64-w64-mingw32-objdump -p) and
# fails on any but node.exe and Windows' own system DLLs, as glibc-check.sh
# does for the Linux prebuilds: a DLL of mingw's runtime (libstdc++-6.dll,
# libgcc_s_seh-1.dll, libwinpthread-1.dll) would not exist on a user's machine.
#   bash scripts/dll-check.sh prebuilds/win32-x64/profpack.node
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: dll-check.sh FILE.node..." >&2; exit 2; }
# Present on every Windows 10+ (msvcrt.dll: the C runtime mingw builds against;
# api-ms-win-*: the API sets that resolve to system DLLs).
allowed='^(node\.exe|kernel32\.dll|kernelbase\.dll|ntdll\.dll|user32\.dll|advapi32\.dll|msvcrt\.dll|ucrtbase\.dll|ws2_32\.dll|api-ms-win-[a-z0-9-]+\.dll)$'
status=0
for f in "$@"; do
  dlls=$(x86_64-w64-mingw32-objdump -p "$f" | awk '/DLL Name:/ {print $3}')
  [ -n "$dlls" ] || { echo "dll-check: $f: no imports found (not a PE file?)" >&2; status=1; continue; }
  bad=$(echo "$dlls" | tr 'A-Z' 'a-z' | grep -Ev "$allowed" || true)
  if [ -n "$bad" ]; then
    echo "dll-check: FAIL $f imports $(echo "$bad" | paste -sd' ') (not a Windows system DLL or node.exe)"
    status=1
  else
    echo "dll-check: ok $f imports $(echo "$dlls" | paste -sd' ')"
  fi
done
exit $status
