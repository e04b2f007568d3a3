#!/usr/bin/env bash
# BI tools over the wire (issue 12): the interactive mariadb CLI under a
# pseudo-terminal, pymysql and SQLAlchemy as an analyst, the answer cache
# across a restart. Needs mariadb-client python3-pymysql python3-sqlalchemy.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mariadb >/dev/null 2>&1 || ! command -v script >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import pymysql, sqlalchemy' >/dev/null 2>&1; then
  echo "== installing mariadb-client bsdutils python3-pymysql python3-sqlalchemy"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-client bsdutils python3-pymysql python3-sqlalchemy >/dev/null
fi
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
go build -o "$work/dpsql" ./cmd/dpsql
start() {
  DPSQL_ROOT_PASSWORD=ci-root "$work/dpsql" serve "$@" --data-dir "$work/data" --listen "127.0.0.1:$port" >>"$work/server.log" 2>&1 &
  pid=$!
  for i in $(seq 1 100); do
    if mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -pci-root -e 'SELECT 1' >/dev/null 2>&1; then return; fi
    sleep 0.2
  done
}
start --demo
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "BI smoke FAILED: $*"; tail -20 "$work/server.log"; exit 1; }
pass=0
check() { pass=$((pass + 1)); echo "ok $pass - $1"; }

# Interactive CLI (it sends COM_FIELD_LIST for every table on connect).
cat >"$work/in.sql" <<'SQL'
select 9 as nine;
SET SESSION dp_epsilon = 0.3;
SELECT species, COUNT(*) AS n FROM iris GROUP BY species;
SELECT DP_MEAN('iris', 'petal_length_cm', 0.2) AS m;
select 7 as seven;
quit
SQL
script -qec "mariadb --protocol=tcp -h127.0.0.1 -P$port -uanalyst -panalyst demo" /dev/null <"$work/in.sql" >"$work/tty.out" 2>&1 || true
tr -d '\r' <"$work/tty.out" | sed 's/\x1b[^m]*m//g; s/\x1b(B//g' >"$work/tty.txt"
grep -q "Reading table information" "$work/tty.txt" || fail "the CLI did not read table information (not interactive?)"
grep -q "ERROR" "$work/tty.txt" && fail "interactive session shows an error: $(grep ERROR "$work/tty.txt")"
awk '/nine/{f=1} f&&/\| *9 *\|/{ok=1; exit} END{exit !ok}' "$work/tty.txt" || fail "select 9 did not display 9"
awk '/seven/{f=1} f&&/\| *7 *\|/{ok=1; exit} END{exit !ok}' "$work/tty.txt" || fail "select 7 did not display 7"
grep -q "| virginica" "$work/tty.txt" || fail "DP GROUP BY rows missing in the interactive CLI"
check "interactive mariadb CLI stays in sync (field lists, DP GROUP BY, DP_MEAN)"
st=$(mariadb --protocol=tcp -h127.0.0.1 -P"$port" -uroot -pci-root -N -B demo -e "SELECT GROUP_CONCAT(status) FROM dp_ledger WHERE table_name = 'demo.iris'")
[ "$st" = "ok,ok" ] || fail "ledger after the interactive session: $st"; check "two releases, both ok, in dp_ledger"

/usr/bin/python3 .ci/bi_clients.py "$port" first "$work/state.json" || fail "BI clients"
check "pymysql / SQLAlchemy as analyst"
kill -TERM $pid; wait $pid || true
start
/usr/bin/python3 .ci/bi_clients.py "$port" restart "$work/state.json" || fail "BI clients after restart"
check "answer cache after restart"
echo "$pass passed, 0 failed"
