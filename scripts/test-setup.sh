#!/usr/bin/env bash
# The README's test command: installs what the tests need on a fresh Debian
# machine, then runs every Go test. Without MariaDB, Spider, scikit-learn and
# the client libraries some tests would skip (the scale-out and comparison
# tests, the live LIBLINEAR comparison) and the client conformance scripts
# (.ci/clients.sh) could not run; this script makes them run.
#
#   bash scripts/test-setup.sh            install (if missing) + go test ./...
#   bash scripts/test-setup.sh --deps     install only (used by .ci/run)
#   bash scripts/test-setup.sh -- -run X ./engine/   install + go test with these args
#
# Needs root (apt-get) on Debian 12 or a derivative; on other systems install
# the packages below by hand. First run: about 110 Debian packages
# (MariaDB, a JDK, PHP, Perl and Python drivers, scikit-learn) in 2–5 minutes,
# and Go downloads the module dependencies and builds the packages in the
# module cache / build cache (≈ 3–6 minutes on 2 cores); go test ./... itself
# then takes ≈ 10–20 minutes on 2 cores. Later runs skip the installs.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

# What each package is for:
#   mariadb-server mariadb-plugin-spider  reference MariaDB + scale-out backend tests (engine/, .ci/scaleout.sh)
#   mariadb-client                        CLI smoke tests, mariadb-dump round trips
#   python3-sklearn                       live LIBLINEAR comparison of the SVM solver
#   python3-pymysql python3-mysqldb python3-sqlalchemy  Python client conformance (.ci/clients.sh, .ci/bi_smoke.sh)
#   php-cli php-mysql                     PHP PDO and mysqli conformance
#   libdbd-mariadb-perl                   Perl DBI conformance
#   libmariadb-java default-jdk-headless  Connector/J conformance (javac + java)
#   bsdutils                              `script`, a pseudo-terminal for the interactive CLI test
PACKAGES=(mariadb-server mariadb-plugin-spider mariadb-client python3-sklearn python3-pymysql python3-mysqldb
  python3-sqlalchemy php-cli php-mysql libdbd-mariadb-perl libmariadb-java default-jdk-headless bsdutils)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "test-setup: missing Debian packages: ${missing[*]}; run as root or: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "== installing ${missing[*]} (first run: a few minutes)"
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null || { echo "test-setup: Go is not installed (see go.mod for the version)" >&2; exit 1; }

if [ "${1:-}" = --deps ]; then exit 0; fi
[ "${1:-}" = -- ] && shift
if [ $# -eq 0 ]; then set -- ./...; fi
echo "== go test $*"
go test "$@"
