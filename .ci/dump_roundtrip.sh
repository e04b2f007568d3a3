#!/usr/bin/env bash
# issue 13: mysqldump → restore keeps protection. Dumps the demo database of
# one dpsql with the real mariadb-dump (as root), restores it with the
# mariadb CLI into a fresh dpsql, and checks: data identical (per-table row
# counts and checksums read by the owner), every protected table still
# protected (an analyst's raw SELECT refused), bounds/domains, budgets and
# ledger and quotas identical, the restored budget enforced; a second restore changes
# no budget; a non-owner's dump of protected tables is refused loudly;
# --all-databases works. The demo shop's privacy unit (customers ← orders)
# travels with its shared account.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mariadb-dump >/dev/null || { echo "mariadb-dump missing (apt-get install mariadb-client)"; exit 1; }
work=$(mktemp -d)
pa=$((20000 + RANDOM % 20000)); pb=$((pa + 1))
go build -o "$work/dpsql" ./cmd/dpsql
DPSQL_ROOT_PASSWORD=ci-root "$work/dpsql" serve --demo --data-dir "$work/a" --listen "127.0.0.1:$pa" >"$work/a.log" 2>&1 &
pida=$!
DPSQL_ROOT_PASSWORD=ci-root "$work/dpsql" serve --data-dir "$work/b" --listen "127.0.0.1:$pb" >"$work/b.log" 2>&1 &
pidb=$!
trap 'kill $pida $pidb 2>/dev/null || true; rm -rf "$work"' EXIT
for p in $pa $pb; do
  for i in $(seq 1 150); do
    if mariadb --protocol=tcp -h127.0.0.1 -P"$p" -uroot -pci-root -e 'SELECT 1' >/dev/null 2>&1; then break; fi
    sleep 0.2
  done
done
q() { local port=$1 user=$2 pw=$3; shift 3; mariadb --protocol=tcp -h127.0.0.1 -P"$port" -u"$user" -p"$pw" -N -B demo -e "$*"; }
fail() { echo "dump round trip FAILED: $*"; tail -20 "$work/a.log" "$work/b.log"; exit 1; }
pass=0
check() { pass=$((pass + 1)); echo "ok $pass - $1"; }

# Some history on A: releases by the analyst, a model, an owner's domain.
q $pa analyst analyst "SELECT DP_MEAN('iris', 'petal_length_cm', 0.5)" >/dev/null
q $pa analyst analyst "SELECT DP_TRAIN('wine', 1, 'auto', 'model=wine_ci')" >/dev/null
q $pa analyst analyst "SELECT DP_HISTOGRAM('iris', 'species', 0.25)" >/dev/null
q $pa root ci-root "CALL dp_bounds('new_flowers', 'sepal_length_cm', 0, 10)" >/dev/null
# issue 27: a person-level release on the demo shop's unit (customers ← orders).
q $pa analyst analyst "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon=0.5) COUNT(*) FROM orders" >/dev/null
# Quotas travel with the budgets: a cap for the analyst on iris and a default on the unit.
q $pa root ci-root "CALL dp_quota('analyst', 'iris', 2, 0); CALL dp_quota('%', 'orders', 1.5, 0)" >/dev/null
protected=$(q $pa root ci-root "SELECT table_name FROM dp_budget ORDER BY 1" | sed 's/^demo\.//')
[ "$(echo "$protected" | wc -l)" -ge 10 ] || fail "expected the demo's protected tables, got: $protected"

mariadb-dump --protocol=tcp -h127.0.0.1 -P$pa -uroot -pci-root --databases demo >"$work/demo.sql" 2>"$work/dump.err" || fail "mariadb-dump: $(cat "$work/dump.err")"
n=$(grep -c "^) ENGINE=.*COMMENT='dpsql:v1:" "$work/demo.sql" || true)
want=$(q $pa root ci-root "SELECT COUNT(DISTINCT table_name) FROM (SELECT table_name FROM dp_budget UNION SELECT table_name FROM dp_columns) x")
[ "$n" = "$want" ] || fail "$n CREATE TABLEs carry the dpsql catalog, want $want"
check "mariadb-dump as root: $n tables carry their dpsql catalog in the CREATE TABLE"

# Restore into a fresh server.
mariadb --protocol=tcp -h127.0.0.1 -P$pb -uroot -pci-root <"$work/demo.sql" 2>"$work/restore.err" || fail "restore: $(cat "$work/restore.err")"
check "restore with the mariadb CLI into a fresh dpsql"
q $pb root ci-root "CREATE USER analyst IDENTIFIED BY 'analyst'; GRANT SELECT, EXECUTE ON demo.* TO analyst"

tables=$(q $pa root ci-root "SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'" | cut -f1)
for t in $tables; do
  ca=$(q $pa root ci-root "SELECT * FROM \`$t\`" | sort | md5sum); cb=$(q $pb root ci-root "SELECT * FROM \`$t\`" | sort | md5sum)
  na=$(q $pa root ci-root "SELECT COUNT(*) FROM \`$t\`"); nb=$(q $pb root ci-root "SELECT COUNT(*) FROM \`$t\`")
  [ "$ca" = "$cb" ] && [ "$na" = "$nb" ] || fail "table $t differs after restore ($na vs $nb rows)"
done
check "data identical: $(echo $tables | wc -w) tables, row counts and checksums"

for t in $protected; do
  if q $pb analyst analyst "SELECT * FROM \`$t\` LIMIT 1" >/dev/null 2>"$work/err"; then fail "analyst read restored $t"; fi
  grep -q "is protected" "$work/err" || fail "analyst error on $t: $(cat "$work/err")"
done
check "every protected table still protected: $(echo $protected | wc -w) raw SELECTs refused"

same() { [ "$(q $pa root ci-root "$1")" = "$(q $pb root ci-root "$1")" ] || fail "$2 differs: $(q $pa root ci-root "$1" | head -3) vs $(q $pb root ci-root "$1" | head -3)"; }
same "SELECT * FROM dp_columns ORDER BY table_name, column_name" "dp_columns (bounds and domains)"
check "bounds and domains identical ($(q $pb root ci-root "SELECT COUNT(*) FROM dp_columns") dp_columns rows)"
same "SELECT table_name, accounting, epsilon_total, epsilon_spent, delta_total, delta_spent FROM dp_budget ORDER BY 1" "dp_budget"
[ "$(q $pb root ci-root "SELECT GROUP_CONCAT(epsilon_spent) FROM dp_budget WHERE table_name IN ('demo.customers', 'demo.orders')")" = "0.5,0.5" ] || fail "the unit demo.customer's account was not restored"
check "budgets identical (iris spent ε = $(q $pb root ci-root "SELECT epsilon_spent FROM dp_budget WHERE table_name = 'demo.iris'"), the unit demo.customer 0.5 on both tables)"
same "SELECT name, kind, epsilon, n, table_name, creator FROM dp_models ORDER BY 1" "dp_models"
[ "$(q $pb analyst analyst "SELECT DP_MODEL_JSON('wine_ci')" | md5sum)" = "$(q $pa analyst analyst "SELECT DP_MODEL_JSON('wine_ci')" | md5sum)" ] || fail "model wine_ci differs"
check "released models restored ($(q $pb root ci-root "SELECT COUNT(*) FROM dp_models") in dp_models, wine_ci identical)"
same "SELECT time, user, table_name, function_name, epsilon, delta, epsilon_requested, delta_requested, status FROM dp_ledger ORDER BY time" "dp_ledger"
check "ledger identical ($(q $pb root ci-root "SELECT COUNT(*) FROM dp_ledger") rows)"
same "SELECT table_name, user, epsilon_quota, delta_quota, epsilon_spent, delta_spent FROM dp_quotas ORDER BY 1, 2" "dp_quotas"
check "quotas and each account's share restored ($(q $pb root ci-root "SELECT COUNT(*) FROM dp_quotas") quotas; analyst spent ε = $(q $pb root ci-root "SELECT epsilon_spent FROM dp_quotas WHERE table_name = 'demo.iris' AND user = 'analyst'") on iris)"

left=$(q $pb analyst analyst "SELECT epsilon_remaining FROM dp_budget WHERE table_name = 'demo.iris'")
over=$(awk -v l="$left" 'BEGIN { printf "%.4f", l + 0.05 }')
if q $pb analyst analyst "SELECT DP_MEAN('iris', 'petal_length_cm', $over)" >/dev/null 2>"$work/err"; then fail "restored budget not enforced"; fi
grep -q "privacy budget exceeded" "$work/err" || fail "overspend error: $(cat "$work/err")"
check "restored budget enforced (ε $over > remaining $left refused)"

q $pb analyst analyst "SELECT DP_MEAN('iris', 'petal_length_cm', 0.125)" >/dev/null
before=$(q $pb root ci-root "SELECT table_name, epsilon_spent, delta_spent FROM dp_budget ORDER BY 1")
mariadb --protocol=tcp -h127.0.0.1 -P$pb -uroot -pci-root <"$work/demo.sql" || fail "second restore"
[ "$(q $pb root ci-root "SELECT table_name, epsilon_spent, delta_spent FROM dp_budget ORDER BY 1")" = "$before" ] || fail "restoring an older dump changed a budget"
check "restoring the older dump again lowers no spent budget and counts nothing twice"

# A non-owner with ALL: refused loudly on protected tables, fine elsewhere.
q $pa root ci-root "CREATE USER bob IDENTIFIED BY 'bob'; GRANT ALL ON *.* TO bob; CREATE DATABASE pub; CREATE TABLE pub.t (id INT PRIMARY KEY, v DOUBLE); INSERT INTO pub.t VALUES (1, 2.5)"
if mariadb-dump --protocol=tcp -h127.0.0.1 -P$pa -ubob -pbob --databases demo >/dev/null 2>"$work/bob.err"; then fail "non-owner dumped protected tables"; fi
grep -q "is protected" "$work/bob.err" || fail "non-owner dump error: $(cat "$work/bob.err")"
mariadb-dump --protocol=tcp -h127.0.0.1 -P$pa -ubob -pbob --databases pub >"$work/pub.sql" 2>"$work/err" || fail "non-owner dump of a public database: $(cat "$work/err")"
check "non-owner with ALL: dump of protected tables refused ($(grep -o 'table demo[.a-z_]* is protected' "$work/bob.err" | head -1)), public database dumped"

mariadb-dump --protocol=tcp -h127.0.0.1 -P$pa -uroot -pci-root --all-databases >"$work/all.sql" 2>"$work/err" || fail "--all-databases: $(cat "$work/err")"
check "mariadb-dump --all-databases succeeds ($(grep -c '^CREATE DATABASE' "$work/all.sql") databases)"
echo "$pass passed, 0 failed"
