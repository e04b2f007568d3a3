#!/usr/bin/env bash
# Security checks through the real mariadb CLI and the dpsql binary: TLS
# (--ssl, --require-secure-transport), login throttling, SET GLOBAL, file
# variables, KILL QUERY of a training, the memory limit, quotas and import
# validation. The Go tests (engine/*_test.go) cover the same ground through
# go-sql-driver; this script checks what an operator and an analyst see.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v openssl >/dev/null 2>&1 || { apt-get update -qq >/dev/null; apt-get install -y -qq openssl >/dev/null; }
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
go build -o "$work/dpsql" ./cmd/dpsql
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
pass=0
check() { pass=$((pass + 1)); echo "ok $pass - $1"; }
fail() { echo "security CLI FAILED: $*"; cat "$work/server.log" 2>/dev/null | tail -20; exit 1; }
start() { # start [extra flags…]
  DPSQL_ROOT_PASSWORD=ci-root "$work/dpsql" serve --demo --data-dir "$work/data" --listen "127.0.0.1:$port" "$@" >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 150); do
    grep -q "dpsql listening" "$work/server.log" && return 0
    sleep 0.2
  done
  fail "server did not start"
}
stop() { kill -TERM $pid; wait $pid || true; pid=; }
cli() { mariadb --protocol=tcp -h127.0.0.1 -P"$port" -N -B "$@"; }
root() { cli --ssl -uroot -pci-root demo -e "$1"; }
ana() { cli --ssl -uanalyst -panalyst demo -e "$1"; }

# TLS required: --ssl works, plain connections are refused.
start --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" --require-secure-transport
cli --ssl -uroot -pci-root -e 'status' | grep -q "Cipher in use" || fail "mariadb --ssl did not negotiate TLS"
check "mariadb --ssl connects over TLS"
if cli --skip-ssl -uroot -pci-root -e 'SELECT 1' >/dev/null 2>&1; then fail "plain connection accepted with --require-secure-transport"; fi
check "plain connection refused with --require-secure-transport"

# Analysts: no SET GLOBAL, no data directory.
if ana "SET GLOBAL sql_mode='ANSI_QUOTES'" 2>"$work/err"; then fail "analyst SET GLOBAL accepted"; fi
grep -q SUPER "$work/err" || fail "SET GLOBAL error: $(cat "$work/err")"
[ "$(root 'SELECT @@GLOBAL.sql_mode' | grep -c ANSI_QUOTES)" = 0 ] || fail "global sql_mode changed"
check "SET GLOBAL refused for analysts"
if ana "SELECT @@secure_file_priv" >/dev/null 2>&1; then fail "analyst read @@secure_file_priv"; fi
if ana "SHOW VARIABLES" | grep -q "$work"; then fail "SHOW VARIABLES shows the data directory"; fi
check "data directory hidden from analysts"

# Login throttling (issue 29): after wrong passwords the right one is
# refused with the locked-account answer (3955), and a name that does not
# exist, attacked the same way, gets the same answer (up to the name and the
# lock's length), so the lock does not reveal which accounts exist.
for i in $(seq 1 20); do cli --ssl -uanalyst -pwrong$i -e 'SELECT 1' >/dev/null 2>&1 || true; done
if cli --ssl -uanalyst -panalyst -e 'SELECT 1' 2>"$work/locked" >/dev/null; then fail "right password accepted right after 20 wrong ones"; fi
for i in $(seq 1 20); do cli --ssl -unobody_at_all -pwrong$i -e 'SELECT 1' >/dev/null 2>&1 || true; done
cli --ssl -unobody_at_all -pwhatever -e 'SELECT 1' 2>"$work/unknown" >/dev/null || true
norm() { sed -e "s/$1/U/g" -e 's/ for [0-9hms.]* after/ for D after/' "$2"; }
grep -q 3955 "$work/locked" || fail "locked account: $(cat "$work/locked")"
[ "$(norm analyst "$work/locked")" = "$(norm nobody_at_all "$work/unknown")" ] || fail "locked and unknown accounts answer differently: $(cat "$work/locked") / $(cat "$work/unknown")"
check "login throttled; unknown and locked accounts answer alike"
stop

# KILL QUERY stops a training within a second; the charge stays.
start --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
cli -uroot -pci-root demo -e "CREATE TABLE big (id INT PRIMARY KEY, a DOUBLE, b DOUBLE, c DOUBLE, y DOUBLE)"
python3 - "$work/big.sql" <<'EOF'
import sys
rows = ",".join(f"({i},{i%7},{i%11},{i%13},{i%29})" for i in range(3000))
open(sys.argv[1], "w").write(f"INSERT INTO big VALUES {rows};\n")
EOF
cli -uroot -pci-root demo <"$work/big.sql"
for c in a b c y; do cli -uroot -pci-root demo -e "CALL dp_bounds('big', '$c', 0, 30)"; done
cli -uroot -pci-root demo -e "CALL dp_protect('big', 100, 0); GRANT SELECT ON demo.big TO 'analyst'@'%'"
cli -uanalyst -panalyst demo -e "SELECT DP_LSQ('big', 1, 'rbf', 'dim=1024; label=y; model=to_kill')" >"$work/train.out" 2>&1 &
train=$!
for _ in $(seq 1 300); do
  [ "$(cli -uroot -pci-root demo -e "SELECT COUNT(*) FROM dp_ledger WHERE status='reserved'")" -ge 1 ] && break
  sleep 0.05
done
conn=$(cli -uroot -pci-root demo -e "SELECT id FROM information_schema.processlist WHERE info LIKE '%model=to_kill%' AND info NOT LIKE '%processlist%'")
[ -n "$conn" ] || fail "training not found in the process list"
cli -uroot -pci-root -e "KILL QUERY $conn"
t0=$(date +%s%N) # the KILL has run when its client returns
wait $train && fail "killed training returned a model: $(cat "$work/train.out")"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 1000 ] || fail "the killed training's client returned ${ms} ms after KILL QUERY"
[ "$(cli -uroot -pci-root demo -e "SELECT COUNT(*) FROM dp_ledger WHERE status='killed'")" = 1 ] || fail "ledger has no killed entry"
[ "$(cli -uroot -pci-root demo -e "SELECT epsilon_spent FROM dp_budget WHERE table_name='demo.big'")" = 1 ] || fail "the charge of the killed training did not stay"
check "KILL QUERY returned to the client after ${ms} ms; ledger killed, charge kept"
stop
grep -q "release killed after charge" "$work/server.log" || fail "no kill in the log"

# The memory limit refuses before charging and names the flag.
start --max-release-memory 2GiB
before=$(cli -uroot -pci-root demo -e "SELECT epsilon_spent FROM dp_budget WHERE table_name='demo.diabetes'")
if cli -uanalyst -panalyst demo -e "SELECT DP_LSQ('diabetes', 0.1, 'rbf', 'dim=16384; label=progression')" 2>"$work/err"; then fail "dim=16384 accepted"; fi
grep -q -- "--max-release-memory" "$work/err" || fail "memory error: $(cat "$work/err")"
[ "$(cli -uroot -pci-root demo -e "SELECT epsilon_spent FROM dp_budget WHERE table_name='demo.diabetes'")" = "$before" ] || fail "refused release was charged"
check "DP_LSQ dim=16384 refused before charging ($(grep -o 'would need about [0-9.]* [KMGT]iB' "$work/err"))"

# Quotas.
cli -uroot -pci-root demo -e "CALL dp_quota('analyst', 'iris', 0.5, 0)"
cli -uanalyst -panalyst demo -e "SELECT DP_MEAN('iris', 'petal_length_cm', 0.4)" >/dev/null
if cli -uanalyst -panalyst demo -e "SELECT DP_MEAN('iris', 'petal_length_cm', 0.4)" 2>"$work/err"; then fail "quota overspent"; fi
grep -q "quota" "$work/err" || fail "quota error: $(cat "$work/err")"
[ "$(cli -uanalyst -panalyst demo -e "SELECT my_epsilon_remaining FROM dp_budget WHERE table_name='demo.iris'")" = 0.1 ] || fail "dp_budget does not show the analyst's remaining quota"
check "per-analyst quota enforced and shown in dp_budget"
stop

# dpsql import refuses bad names and numbers, with short errors.
printf 'x\n1\n' >"$work/ok.csv"
for t in demo.dp_budget 'demo.a;b' 'demo.a.b' "demo.$(printf 'a\tb')"; do
  if "$work/dpsql" import --data-dir "$work/data" --table "$t" --csv "$work/ok.csv" >/dev/null 2>&1; then fail "import into '$t' accepted"; fi
done
"$work/dpsql" import --data-dir "$work/data" --table demo.nums --csv "$work/ok.csv" >/dev/null
printf 'x\n1_000\n' >"$work/u.csv"
if "$work/dpsql" import --data-dir "$work/data" --table demo.nums --csv "$work/u.csv" >/dev/null 2>&1; then fail "1_000 imported as a number"; fi
python3 -c "import sys; open(sys.argv[1],'w').write('x\n' + 'z\"'*10_000_000 + '\n')" "$work/big.csv"
"$work/dpsql" import --data-dir "$work/data" --table demo.nums --csv "$work/big.csv" >/dev/null 2>"$work/err" && fail "20 MB field imported"
[ "$(wc -c <"$work/err")" -lt 2048 ] || fail "error for a 20 MB field is $(wc -c <"$work/err") bytes"
check "dpsql import refuses bad names and numbers; short error for a 20 MB field"
echo "$pass passed, 0 failed"
