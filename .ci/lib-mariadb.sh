# Sourced by CI scripts and engine tests: a private MariaDB on a free loopback port, the
# reference that dpsql is compared against (issue 29).
#   mariadb_up DIR ROOT_PW   starts it in DIR; sets MDB_PORT; root@127.0.0.1 has ROOT_PW
#   mariadb_down DIR         stops it and removes DIR
# Needs mariadb-server (scripts/test-setup.sh installs it).
mariadb_up() {
  local dir=$1 pw=$2 user_opt=()
  command -v mariadbd >/dev/null || { echo "mariadbd not installed (bash scripts/test-setup.sh --deps)" >&2; return 1; }
  [ "$(id -u)" = 0 ] && user_opt=(--user=root)
  mkdir -p "$dir/tmp"
  mariadb-install-db --no-defaults "${user_opt[@]}" --datadir="$dir/data" --auth-root-authentication-method=socket \
    --skip-test-db >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; return 1; }
  MDB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mariadbd --no-defaults "${user_opt[@]}" --datadir="$dir/data" --socket="$dir/sock" --port="$MDB_PORT" \
    --bind-address=127.0.0.1 --pid-file="$dir/pid" --log-error="$dir/error.log" --skip-name-resolve \
    --tmpdir="$dir/tmp" --innodb-buffer-pool-size=64M --local-infile=1 --max-connections=500 >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    if [ -S "$dir/sock" ] && mariadb --no-defaults -uroot --socket="$dir/sock" -e 'SELECT 1' >/dev/null 2>&1; then
      mariadb --no-defaults -uroot --socket="$dir/sock" -e "CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '$pw';
        GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;"
      return 0
    fi
    sleep 0.25
  done
  echo "MariaDB did not start; see $dir/error.log:" >&2
  tail -20 "$dir/error.log" >&2
  return 1
}

mariadb_down() {
  local dir=$1 pid
  [ -f "$dir/pid" ] && pid=$(cat "$dir/pid") && {
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true # usually gone by now: under set -e a failed kill would fail the script
  }
  rm -rf "$dir"
  return 0
}

# dpsql_up DIR ROOT_PW: builds dpsql and serves a fresh data directory in DIR
# on a free loopback port; sets DP_PORT and DP_PID (log: DIR/server.log).
dpsql_up() {
  local dir=$1 pw=$2
  go build -o "$dir/dpsql" ./cmd/dpsql
  DP_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  DPSQL_ROOT_PASSWORD=$pw "$dir/dpsql" serve --data-dir "$dir/data" --listen "127.0.0.1:$DP_PORT" >"$dir/server.log" 2>&1 &
  DP_PID=$!
  for _ in $(seq 1 100); do
    mariadb --protocol=tcp -h127.0.0.1 -P"$DP_PORT" -uroot -p"$pw" -e 'SELECT 1' >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "dpsql did not start; see $dir/server.log" >&2
  return 1
}
