#!/usr/bin/env bash
# up.sh DIR [SHARDS] — a MariaDB Spider cluster on loopback ports, for tests
# and benchmarks of dpsql's MariaDB backend (docs/scale-out.md):
#   DIR/head      the Spider head node (the server dpsql talks to)
#   DIR/s1..sN    the shard servers (SHARDS, default 2)
# Every server listens on 127.0.0.1 only; ports are picked from BASE_PORT
# (default: a free block found at random) and written to DIR/env:
#   HEAD_PORT=…  SHARD_PORTS="…"  DSN='dpsql:dpsql@tcp(127.0.0.1:…)/'
# The head holds database dp with the Spider table dp.points (id, x1..x20,
# y), hash-partitioned on id across the shards; each shard holds the
# InnoDB table dp.points with its part of the rows. ROWS=n (default 0)
# fills it with n deterministic rows (x_j, y in [−1, 1]).
# Run again on an existing DIR (after down.sh -k DIR) it restarts the servers.
# Needs mariadbd and the Spider plugin (apt-get install -y mariadb-server
# mariadb-plugin-spider). Tear down with down.sh DIR.
set -euo pipefail
DIR=${1:?usage: up.sh DIR [SHARDS]}
SHARDS=${2:-2}
ROWS=${ROWS:-0}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
command -v mariadbd >/dev/null || { echo "mariadbd not installed (apt-get install -y mariadb-server mariadb-plugin-spider)" >&2; exit 2; }
PLUGIN_DIR=$(mariadbd --verbose --help 2>/dev/null | awk '$1=="plugin-dir"{print $2}')
[ -f "${PLUGIN_DIR:-/usr/lib/mysql/plugin}/ha_spider.so" ] || { echo "Spider plugin missing (apt-get install -y mariadb-plugin-spider)" >&2; exit 2; }

free_port() {
  python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

USER_OPT=()
[ "$(id -u)" = 0 ] && USER_OPT=(--user=root)

start() { # name port
  local name=$1 port=$2 d="$DIR/$1"
  mkdir -p "$d/tmp"
  if [ ! -d "$d/data/mysql" ]; then
    # One system-table install, copied for every server (it is the slow part).
    if [ ! -d "$DIR/.template/mysql" ]; then
      mariadb-install-db --no-defaults "${USER_OPT[@]}" --datadir="$DIR/.template" --auth-root-authentication-method=socket \
        --skip-test-db >"$DIR/install.log" 2>&1 || { cat "$DIR/install.log" >&2; exit 1; }
    fi
    cp -a "$DIR/.template" "$d/data"
  fi
  mariadbd --no-defaults "${USER_OPT[@]}" --datadir="$d/data" --socket="$d/sock" --port="$port" \
    --bind-address=127.0.0.1 --pid-file="$d/pid" --log-error="$d/error.log" --skip-name-resolve \
    --tmpdir="$d/tmp" --innodb-buffer-pool-size=${BUFFER_POOL:-256M} --innodb-flush-log-at-trx-commit=2 --max-connections=200 \
    --plugin-load-add=ha_spider --spider-direct-order-limit=1 --loose-spider-net-read-timeout=3600 --loose-spider-net-write-timeout=3600 >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    [ -S "$d/sock" ] && mariadb --no-defaults -uroot --socket="$d/sock" -e 'SELECT 1' >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  echo "$name did not start; see $d/error.log:" >&2; tail -20 "$d/error.log" >&2; exit 1
}

sqlc() { local name=$1; shift; mariadb --no-defaults -uroot --socket="$DIR/$name/sock" "$@"; }

# Restart of a cluster made earlier in DIR: same ports, same data.
if [ -f "$DIR/env" ]; then
  . "$DIR/env"
  start head "$HEAD_PORT"
  i=0
  for p in $SHARD_PORTS; do i=$((i + 1)); start "s$i" "$p"; done
  echo "spider cluster restarted in $DIR: head 127.0.0.1:$HEAD_PORT, shards $SHARD_PORTS"
  exit 0
fi

cols="id BIGINT NOT NULL PRIMARY KEY"
for j in $(seq 1 20); do cols="$cols, x$j DOUBLE"; done
cols="$cols, y DOUBLE"

HEAD_PORT=${BASE_PORT:+$BASE_PORT}
HEAD_PORT=${HEAD_PORT:-$(free_port)}
SHARD_PORTS=""
start head "$HEAD_PORT"
for i in $(seq 1 "$SHARDS"); do
  p=$([ -n "${BASE_PORT:-}" ] && echo $((BASE_PORT + i)) || free_port)
  start "s$i" "$p"
  SHARD_PORTS="$SHARD_PORTS $p"
  sqlc "s$i" <<SQL
CREATE USER IF NOT EXISTS 'spider'@'127.0.0.1' IDENTIFIED BY 'spider';
GRANT ALL ON *.* TO 'spider'@'127.0.0.1';
CREATE DATABASE IF NOT EXISTS dp;
CREATE TABLE IF NOT EXISTS dp.points ($cols) ENGINE=InnoDB;
SQL
done
SHARD_PORTS=${SHARD_PORTS# }

parts=""
i=0
for p in $SHARD_PORTS; do
  i=$((i + 1))
  sqlc head -e "CREATE SERVER IF NOT EXISTS s$i FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', DATABASE 'dp', USER 'spider', PASSWORD 'spider', PORT $p)"
  parts="$parts${parts:+, }PARTITION p$i COMMENT = 'srv \"s$i\"'"
done
sqlc head <<SQL
CREATE USER IF NOT EXISTS 'dpsql'@'127.0.0.1' IDENTIFIED BY 'dpsql';
GRANT ALL ON *.* TO 'dpsql'@'127.0.0.1';
CREATE DATABASE IF NOT EXISTS dp;
CREATE TABLE IF NOT EXISTS dp.points ($cols) ENGINE=SPIDER COMMENT='wrapper "mysql", table "points"'
  PARTITION BY HASH (id) ($parts);
SQL

if [ "$ROWS" -gt 0 ]; then
  # Deterministic rows, generated on each shard for its own ids (the same
  # hash as the Spider table: MOD(id, SHARDS)); x_j, y on a 2^-20 grid.
  i=0
  for p in $SHARD_PORTS; do
    i=$((i + 1))
    xs=""
    for j in $(seq 1 20); do xs="$xs, (MOD(seq * $((7919 * j + 13)) + $((j * 104729)), 2097153) - 1048576) / 1048576e0"; done
    sqlc "s$i" dp -e "INSERT INTO dp.points SELECT seq $xs, (MOD(seq * 6151 + 17, 2097153) - 1048576) / 1048576 FROM (SELECT CAST(seq AS SIGNED) AS seq FROM seq_0_to_$((ROWS - 1)) WHERE MOD(seq, $SHARDS) = $((i - 1))) s"
  done
fi

cat >"$DIR/env" <<ENV
HEAD_PORT=$HEAD_PORT
SHARD_PORTS="$SHARD_PORTS"
DSN='dpsql:dpsql@tcp(127.0.0.1:$HEAD_PORT)/'
ENV
echo "spider cluster up in $DIR: head 127.0.0.1:$HEAD_PORT, shards $SHARD_PORTS"
