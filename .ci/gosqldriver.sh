#!/usr/bin/env bash
# go-sql-driver/mysql's own integration suite (issue 29), the version in
# go.mod, from the module cache, configured by its MYSQL_TEST_* variables,
# run against dpsql and against a private MariaDB started here. Fails when a
# test fails on dpsql but passes on MariaDB, unless it is listed in
# docs/results/drivers.md (a table row "| `TestName` | reason |"); a listed
# test that now passes fails the run, so the list stays true.
# OUT=DIR keeps the two verbose logs.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib-mariadb.sh
work=$(mktemp -d)
ROOT_PW=ci-root
cleanup() { kill "${pid:-0}" 2>/dev/null || true; mariadb_down "$work/mariadb"; rm -rf "$work"; }
trap cleanup EXIT

version=$(go list -m -f '{{.Version}}' github.com/go-sql-driver/mysql)
go mod download github.com/go-sql-driver/mysql
src=$(go list -m -f '{{.Dir}}' github.com/go-sql-driver/mysql)
cp -r "$src" "$work/suite"
chmod -R u+w "$work/suite"
(cd "$work/suite" && go test -c -o "$work/suite.test" . ) # compiled once, run twice

dpsql_up "$work" "$ROOT_PW"
pid=$DP_PID port=$DP_PORT
mariadb_up "$work/mariadb" "$ROOT_PW"
for p in "$port" "$MDB_PORT"; do
  mariadb --protocol=tcp -h127.0.0.1 -P"$p" -uroot -p"$ROOT_PW" -e 'CREATE DATABASE gotest'
done

# TestConnectorReturnsTimeout dials 1.1.1.1 (no server involved); on a machine
# without a route out it gets another error and the suite panics.
SKIP='^TestConnectorReturnsTimeout$'
# One process per top-level test: a test that fails inside the suite's
# parallel helper panics the binary and would hide every later test.
suite() { # port log
  local t
  : >"$2"
  for t in $("$work/suite.test" -test.list '^Test' | grep '^Test'); do
    [[ $t =~ $SKIP ]] && continue
    (cd "$work/suite" && MYSQL_TEST_USER=root MYSQL_TEST_PASS=$ROOT_PW MYSQL_TEST_PROT=tcp \
      MYSQL_TEST_ADDR="127.0.0.1:$1" MYSQL_TEST_DBNAME=gotest MYSQL_TEST_CONCURRENT=1 \
      timeout 300 "$work/suite.test" -test.v -test.count=1 -test.timeout=4m -test.run "^$t\$" >>"$2" 2>&1) ||
      grep -q -- "^--- FAIL: $t " "$2" || echo "--- FAIL: $t (no result: panic or timeout)" >>"$2"
  done
}
echo "== go-sql-driver/mysql $version suite against MariaDB $(mariadb --protocol=tcp -h127.0.0.1 -P"$MDB_PORT" -uroot -p"$ROOT_PW" -N -B -e 'SELECT VERSION()')"
suite "$MDB_PORT" "$work/mariadb.log"
echo "== the same suite against dpsql"
suite "$port" "$work/dpsql.log"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$work/mariadb.log" "$work/dpsql.log" "$work/server.log" "$OUT/"; fi

python3 - "$work/mariadb.log" "$work/dpsql.log" docs/results/drivers.md <<'PY'
import re, sys
def results(path):
    res = {}
    for line in open(path, errors="replace"):
        m = re.match(r"\s*--- (PASS|FAIL|SKIP): (Test\w+)", line)  # top-level tests only
        if m and not line.startswith(" "):
            res[m[2]] = m[1]
    return res
mdb, dp = results(sys.argv[1]), results(sys.argv[2])
listed = set(re.findall(r"^\| `(Test\w+)` \|", open(sys.argv[3]).read(), re.M))
regress = sorted(t for t, s in mdb.items() if s == "PASS" and dp.get(t) != "PASS")
count = lambda r, s: sum(1 for v in r.values() if v == s)
print(f"MariaDB: {count(mdb,'PASS')} pass, {count(mdb,'FAIL')} fail, {count(mdb,'SKIP')} skip; "
      f"dpsql: {count(dp,'PASS')} pass, {count(dp,'FAIL')} fail, {count(dp,'SKIP')} skip")
failed = 0
for t in regress:
    tag = "listed in docs/results/drivers.md" if t in listed else "NOT LISTED"
    print(f"  fails on dpsql, passes on MariaDB: {t} ({dp.get(t, 'not run')}) — {tag}")
    failed += t not in listed
for t in sorted(listed - set(regress)):
    if dp.get(t) == "PASS":
        print(f"  {t} is listed in docs/results/drivers.md but passes on dpsql now: remove it")
        failed += 1
passed = sum(1 for t, s in mdb.items() if s == "PASS" and dp.get(t) == "PASS")
print(f"gosqldriver: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
