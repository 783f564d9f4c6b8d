#!/usr/bin/env bash
# Puts Prometheus's promtool on PATH (/usr/local/bin) for test/http-operations.test.ts, which runs
# `promtool check metrics` on /metrics when it is installed (and skips that one check otherwise).
# Only the tool is taken from Debian's prometheus package: installing the package would also
# set up the Prometheus server as a service. Needs root and apt (CI's machine has both).
set -euo pipefail
if command -v promtool >/dev/null 2>&1; then
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download prometheus >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get download prometheus >/dev/null; }
dpkg -x prometheus_*.deb root
install -m 0755 root/usr/bin/promtool /usr/local/bin/promtool
promtool --version | head -1
