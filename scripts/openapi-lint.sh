#!/usr/bin/env bash
# Lints the public and the operator OpenAPI documents with Redocly CLI (rules: redocly.yaml, where
# any finding is an error): built by scripts/openapi-dump.ts without a running server. No network:
# Redocly's telemetry and update check are off.
set -euo pipefail
cd "$(dirname "$0")/.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
npx tsx scripts/openapi-dump.ts "$dir/openapi.json" "$dir/openapi-operator.json"
npx redocly lint --config redocly.yaml "$dir/openapi.json" "$dir/openapi-operator.json"
