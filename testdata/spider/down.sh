#!/usr/bin/env bash
# down.sh DIR — stop the servers started by up.sh DIR and remove DIR.
set -uo pipefail
DIR=${1:?usage: down.sh DIR}
[ -d "$DIR" ] || exit 0
pids=()
for pidf in "$DIR"/*/pid; do
  [ -f "$pidf" ] && pids+=("$(cat "$pidf")")
done
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
for pid in "${pids[@]}"; do
  for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null
done
rm -rf "$DIR"
