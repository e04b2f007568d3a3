#!/usr/bin/env bash
# Runs every suite of suites_test.go on the dpsql store and on
# go-mysql-server's memory harness, one process per suite (a panic in one
# suite must not hide the others), and prints the comparison written to
# docs/results/enginetest.md. Usage: store/gmstest/compare.sh [outdir]
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
go test -c -o "$out/gms.test" ./store/gmstest/
suites=$(grep -o '^\s*{"[A-Za-z]*"' store/gmstest/suites_test.go | tr -d '\t {"')
for s in $suites; do
  for h in Store Memory; do
    DPSQL_GMS_MEMORY=1 timeout 1200 "$out/gms.test" -test.run "^Test$h\$/^$s\$" -test.v -test.timeout 20m 2>&1 |
      go tool test2json > "$out/$h-$s.json" || true
  done
done
python3 store/gmstest/compare.py "$out"
