#!/usr/bin/env bash
# docs/results/external.md's script on a fresh machine (issue 28 item 8): fetch the
# public tables from the npm registry (pinned version and checksums), load them
# raw over the wire (LOAD DATA LOCAL, text columns, NULLs), one default call per
# set and variant at ε = 1; fails unless every call answers and DP_PREDICT on the
# raw test columns agrees with DP_EVALUATE. The full experiment is not run here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null || { echo "external smoke: npm is not installed"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/dpsql" ./cmd/dpsql
py=/usr/bin/python3
$py docs/results/external_raw.py fetch "$work"
$py docs/results/external_raw.py run "$work" --dpsql "$work/dpsql" --runs 1 --eps 1 --kinds-eps "" --check
$py docs/results/external_raw.py baselines "$work" >/dev/null
$py docs/results/external_raw.py table "$work" | tail -12
