#!/usr/bin/env bash
# Scale-out (issue 14): a MariaDB Spider cluster (head + 2 shards, from
# testdata/spider/up.sh) holding a protected table, dpsql serving it with
# --backend mysql, walked with the real mariadb client. The Go tests of the
# backend (engine/scaleout_test.go) run in `go test ./...`.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mariadbd >/dev/null || { echo "scaleout: mariadbd not installed (apt-get install -y mariadb-server mariadb-plugin-spider)"; exit 1; }
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
cleanup() { kill "${pid:-0}" 2>/dev/null || true; bash testdata/spider/down.sh "$work/spider"; rm -rf "$work"; }
trap cleanup EXIT
ROWS=20000 bash testdata/spider/up.sh "$work/spider" 2
. "$work/spider/env"
go build -o "$work/dpsql" ./cmd/dpsql
DPSQL_ROOT_PASSWORD=ci-root DPSQL_BACKEND_DSN="$DSN" "$work/dpsql" serve --backend mysql --data-dir "$work/data" \
  --listen "127.0.0.1:$port" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -pci-root -e 'SELECT 1' >/dev/null 2>&1; then break; fi
  sleep 0.2
done
root() { mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -pci-root -N -B -e "$1"; }
ana() { mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uana -pana-pw -N -B dp -e "$1"; }
fail() { echo "scale-out smoke FAILED: $*"; tail -50 "$work/server.log"; exit 1; }
pass=0
check() { pass=$((pass + 1)); echo "ok $pass - $1"; }

root "CALL dp_attach('dp.points')" >/dev/null || fail "dp_attach"; check "owner attaches dp.points from the Spider head"
for c in x1 x2 x3 x4 x5 y; do root "CALL dp_bounds('dp.points', '$c', -1, 1)" >/dev/null || fail "dp_bounds $c"; done
root "CALL dp_protect('dp.points', 10, 1e-5)" >/dev/null || fail "dp_protect"
root "CREATE USER ana IDENTIFIED BY 'ana-pw'; GRANT SELECT, EXECUTE ON dp.* TO ana" || fail "analyst"
[ "$(root 'SELECT COUNT(*) FROM dp.points')" = 20000 ] || fail "owner count"; check "owner reads the sharded table through dpsql"
if ana 'SELECT * FROM points LIMIT 1' 2>"$work/err"; then fail "analyst read protected rows"; fi
grep -q "protected" "$work/err" || fail "analyst error: $(cat "$work/err")"; check "analyst refused raw rows"
m=$(ana "SELECT DP_MEAN('points', 'x1', 1)") || fail "DP_MEAN"
awk -v m="$m" 'BEGIN { exit !(m >= -1 && m <= 1) }' || fail "DP_MEAN out of bounds: $m"; check "DP_MEAN pushed down to the shards ($m)"
model=$(ana "SELECT DP_TRAIN('points', 1, 'linreg', 'label=y; features=x1,x2,x3,x4,x5')") || fail "DP_TRAIN"
check "DP_TRAIN linreg pushed down -> $model"
# [push2] DP_LSQ linear (default call: centred, pushed down)
model=$(ana "SELECT DP_LSQ('points', 1, 'linear', 'label=y; features=x1,x2,x3,x4,x5')") || fail "DP_LSQ"
check "DP_LSQ linear pushed down -> $model"
# [push3] the in-box split: rows with NULLs (written by the owner on the
# head) are summed by the clamped, grouped part, the others unclamped; the
# model's n is the sum of both parts' counts.
mariadb --protocol=tcp -h127.0.0.1 -P"$HEAD_PORT" -udpsql -pdpsql -e \
  "INSERT INTO dp.points (id, x1, x2, y) VALUES (20000, NULL, 0.5, 0.5), (20001, 0.5, 0.5, NULL), (20002, 0.25, NULL, 0.25)" || fail "owner insert on the head"
ana "SELECT DP_TRAIN('points', 1, 'linreg', 'label=y; features=x1,x2,x3,x4,x5; model=m_split')" >/dev/null || fail "DP_TRAIN (split)"
[ "$(root "SELECT n FROM dpsql.dp_models WHERE name = 'm_split'")" = 20003 ] || fail "split n: $(root "SELECT n FROM dpsql.dp_models WHERE name = 'm_split'")"
check "DP_TRAIN linreg on the in-box split counts every row (n = 20003)"
# [lsqfast] the DP_LSQ default call on the split: objective perturbation on
# the fast (DOUBLE) statements with the centred label and the DOUBLE label
# mean; every row counted, only aggregates leave the head (the 20 003 rows
# would be ≈ 7 MB).
headsent() { mariadb --protocol=tcp -h127.0.0.1 -P"$HEAD_PORT" -udpsql -pdpsql -N -B -e "SHOW GLOBAL STATUS LIKE 'Bytes_sent'" | cut -f2; }
b0=$(headsent)
ana "SELECT DP_LSQ('points', 1, 'linear', 'label=y; features=x1,x2,x3,x4,x5; model=m_lsq')" >/dev/null || fail "DP_LSQ default (split)"
b1=$(headsent)
[ "$(root "SELECT n FROM dpsql.dp_models WHERE name = 'm_lsq'")" = 20003 ] || fail "DP_LSQ split n: $(root "SELECT n FROM dpsql.dp_models WHERE name = 'm_lsq'")"
root "SELECT params FROM dpsql.dp_models WHERE name = 'm_lsq'" | grep -q "method=objective" || fail "DP_LSQ default method: $(root "SELECT params FROM dpsql.dp_models WHERE name = 'm_lsq'")"
[ $((b1 - b0)) -lt 300000 ] || fail "DP_LSQ default call moved $((b1 - b0)) bytes from the head"
check "DP_LSQ default call (objective, centred) pushed down on the split: n = 20003, $((b1 - b0)) bytes from the head"
s=$(ana "SELECT epsilon_spent FROM dp_budget WHERE table_name = 'dp.points'")
[ "$s" = 5 ] || fail "spent $s, want 5"; check "budget charged ($s)"
if grep -q "ana-pw\|dpsql:dpsql" "$work/err"; then fail "secret in an error"; fi
kill -TERM $pid; wait $pid || true
echo "$pass passed, 0 failed"
