#!/usr/bin/env bash
# Bring the whole system up on this machine: virtualenv, database, demo data, an admin account,
# then a worker, the scheduler and the web console on http://127.0.0.1:5000 (Ctrl-C stops all).
# DATABASE_URL defaults to a SQLite file under instance/; REDIS_URL unset means the Redis on
# 127.0.0.1:6379 if one answers, otherwise an embedded Redis under instance/redis/.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
# The agent-side Python client (client/: httpx and pydantic only), for the README's tour.
.venv/bin/python -m pip install -q -e ./client

export FLASK_APP=wsgi
FLASK=.venv/bin/flask
mkdir -p instance

$FLASK db upgrade
$FLASK demo --skip-if-present

ADMIN_EMAIL=${ADMIN_EMAIL:-admin@example.com}
if [ ! -f instance/admin-password ]; then
  password=${ADMIN_PASSWORD:-$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(12))')}
  if printf '%s\n' "$password" | $FLASK admin create "$ADMIN_EMAIL" >/dev/null; then
    umask 077; printf '%s\n' "$password" > instance/admin-password
  fi
fi

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

$FLASK rq worker >instance/worker.log 2>&1 & pids+=($!)
$FLASK rq scheduler >instance/scheduler.log 2>&1 & pids+=($!)

echo
echo "  Console:  http://127.0.0.1:5000"
echo "  Sign in:  $ADMIN_EMAIL / $(cat instance/admin-password 2>/dev/null || echo '(your existing password)')"
echo "  Logs:     instance/worker.log, instance/scheduler.log"
echo "  CLI:      .venv/bin/memconsole --help   (or: source .venv/bin/activate, then memconsole --help)"
echo
$FLASK run --host 127.0.0.1 --port 5000
