#!/usr/bin/env bash
# down.sh [-k] DIR — stop the servers started by up.sh DIR and remove DIR
# (-k: keep DIR, so that up.sh DIR restarts the same cluster).
set -uo pipefail
KEEP=0
if [ "${1:-}" = -k ]; then KEEP=1; shift; fi
DIR=${1:?usage: down.sh [-k] DIR}
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
[ "$KEEP" = 1 ] || rm -rf "$DIR"
