#!/usr/bin/env bash
# The code-shape checks (docs/explanation/architecture.md, "Checks"): formatting, lint, types, import
# contracts. Run by .ci/run before the tests and by the pre-commit hook. Uses .venv when it exists.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
[ -x "$BIN/ruff" ] || BIN=$(dirname "$(command -v ruff)")

"$BIN/ruff" format --check .
"$BIN/ruff" check .
"$BIN/mypy"
"$BIN/lint-imports"

bash scripts/module_sizes.sh
