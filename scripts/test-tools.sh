#!/usr/bin/env bash
# The outside tools the conformance and browser tests drive: Go's `go tool
# pprof` (Debian golang-go) and Chromium (Debian chromium, for playwright-core).
# Installed with apt-get when missing (about 1-2 min each the first time, 0 s
# after), so that the README's `npm ci && npm test` holds on a fresh machine.
# Without root or apt-get it says so, and those tests fail rather than skip.
set -uo pipefail
missing=()
command -v go >/dev/null || missing+=(golang-go)
command -v chromium >/dev/null || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "test-tools: ${missing[*]} missing and cannot be installed here (needs root and apt-get): the pprof conformance / browser tests will fail" >&2
  exit 0
fi
echo "test-tools: installing ${missing[*]} with apt-get for the pprof conformance (go) and browser (chromium) tests:" >&2
echo "test-tools: about 1-2 minutes each, once; nothing else is installed (to avoid it, install them yourself first)" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq && timeout 900 apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}"; } >&2 ||
  echo "test-tools: apt-get could not install ${missing[*]}: those tests will fail" >&2
exit 0
