#!/usr/bin/env bash
# Starts dpsql with the demo data and walks the README tour with the real
# mariadb client, checking each answer.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
go build -o "$work/dpsql" ./cmd/dpsql
DPSQL_ROOT_PASSWORD=ci-root "$work/dpsql" serve --demo --data-dir "$work/data" --listen "127.0.0.1:$port" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for i in $(seq 1 100); do
  if mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -pci-root -e 'SELECT 1' >/dev/null 2>&1; then break; fi
  sleep 0.2
done
root() { mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -pci-root -N -B demo -e "$1"; }
ana() { mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uanalyst -panalyst -N -B demo -e "$1"; }
fail() { echo "CLI smoke FAILED: $*"; cat "$work/server.log"; exit 1; }
pass=0
check() { pass=$((pass + 1)); echo "ok $pass - $1"; }

[ "$(root 'SELECT COUNT(*) FROM iris')" = 120 ] || fail "owner count of iris"; check "owner reads a protected table"
if ana 'SELECT * FROM iris LIMIT 1' 2>"$work/err"; then fail "analyst read protected rows"; fi
grep -q "protected" "$work/err" || fail "analyst error does not say protected: $(cat "$work/err")"; check "analyst refused raw rows"
m=$(ana "SELECT DP_MEAN('iris', 'petal_length_cm', 1)")
awk -v m="$m" 'BEGIN { exit !(m >= 0 && m <= 10) }' || fail "DP_MEAN out of bounds: $m"; check "DP_MEAN through the CLI ($m)"
s=$(ana "SELECT epsilon_spent FROM dp_budget WHERE table_name = 'demo.iris'")
[ "$s" = 1 ] || fail "dp_budget spent = $s, want 1"; check "dp_budget shows the spend"
model=$(ana "SELECT DP_SVM_TRAIN('breast_cancer', 1, 'linear', 'C=1')") || fail "DP_SVM_TRAIN"
[ -n "$model" ] || fail "no model name"; check "DP_SVM_TRAIN -> $model"
acc=$(ana "SELECT DP_EVALUATE('$model', 'breast_cancer_test', 1)") || fail "DP_EVALUATE"
check "DP_EVALUATE -> $acc"
lm=$(ana "SELECT DP_LMGC_TRAIN('iris', 2)") || fail "DP_LMGC_TRAIN"
p=$(ana "SELECT DP_PREDICT('$lm', sepal_length_cm, sepal_width_cm, petal_length_cm, petal_width_cm) FROM new_flowers ORDER BY id" | wc -l)
[ "$p" = 3 ] || fail "DP_PREDICT rows = $p"; check "DP_PREDICT on a public table"
# The README tour's person-level query, copied from the README as it stands.
uq=$(awk '/^SELECT WITH DIFFERENTIAL_PRIVACY/{f=1} f{print} f&&/;/{exit}' README.md)
[ -n "$uq" ] || fail "README has no SELECT WITH DIFFERENTIAL_PRIVACY query"
[ "$(ana "$uq" | wc -l)" = 4 ] || fail "README unit query: $(ana "$uq" 2>&1)"
for t in customers orders; do
  [ "$(ana "SELECT epsilon_spent FROM dp_budget WHERE table_name = 'demo.$t'")" = 1 ] || fail "unit spend not shown on demo.$t"
done
check "README's person-level query (BigQuery syntax) over demo.orders JOIN demo.customers, one shared budget"
if ana "SELECT DP_MEAN('iris', 'petal_length_cm', 100)" 2>"$work/err"; then fail "overspend accepted"; fi
grep -q "privacy budget exceeded" "$work/err" || fail "overspend error: $(cat "$work/err")"; check "overspend refused"
kill -TERM $pid; wait $pid || true
grep -q "shutting down" "$work/server.log" || fail "no graceful shutdown"; check "graceful shutdown on SIGTERM"
echo "$pass passed, 0 failed"
