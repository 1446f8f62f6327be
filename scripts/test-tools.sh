#!/usr/bin/env bash
# The outside tools the conformance, browser and ClickHouse tests drive: Go's
# `go tool pprof` (Debian golang-go), Chromium (Debian chromium, for
# playwright-core) and ClickHouse 18.16 (Debian clickhouse-server and
# clickhouse-client, ~10 MB of .deb; test/fleet/clickhouse.test.ts starts two
# servers of its own). Installed with apt-get when missing (about 1-2 min each
# for Go and Chromium the first time, well under a minute for ClickHouse; all
# four with clang-format took 65 s on this machine; 0 s after), so that the
# README's `npm ci && npm test` holds on a fresh machine.
# Without root or apt-get it says so, and those tests fail rather than skip.
set -uo pipefail
missing=()
command -v go >/dev/null || missing+=(golang-go)
command -v chromium >/dev/null || missing+=(chromium)
# Debian puts the server in /usr/sbin, outside a non-root PATH.
{ command -v clickhouse-server || [ -x /usr/sbin/clickhouse-server ]; } >/dev/null || missing+=(clickhouse-server)
command -v clickhouse-client >/dev/null || missing+=(clickhouse-client)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "test-tools: ${missing[*]} missing and cannot be installed here (needs root and apt-get): the pprof conformance / browser / ClickHouse tests will fail" >&2
  exit 0
fi
echo "test-tools: installing ${missing[*]} with apt-get for the pprof conformance (go), browser (chromium) and ClickHouse tests:" >&2
echo "test-tools: about 1-2 minutes each, once; nothing else is installed (to avoid it, install them yourself first)" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq && timeout 900 apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}"; } >&2 ||
  echo "test-tools: apt-get could not install ${missing[*]}: those tests will fail" >&2
exit 0
