#!/usr/bin/env bash
# The whole test suite, twice: SQLite + embedded Redis, then PostgreSQL + Redis.
# Installs what it needs into .venv first. Extra arguments go to pytest (e.g. -k rollback).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'

bash scripts/services.sh

# Browser tests drive Debian's Chromium through Playwright; no test tool downloads a browser.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

echo "== suite 1/2: SQLite + embedded Redis"
TEST_DATABASE=sqlite TEST_REDIS=embedded .venv/bin/python -m pytest -p no:cacheprovider "$@"

echo "== suite 2/2: PostgreSQL + Redis (127.0.0.1, Redis DB 15)"
TEST_DATABASE=postgresql TEST_REDIS=redis://127.0.0.1:6379/15 .venv/bin/python -m pytest -p no:cacheprovider "$@"
