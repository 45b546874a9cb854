#!/usr/bin/env bash
# Modules stay under about 400 lines (docs/explanation/architecture.md, "Checks"); over 450 fails, naming the module.
# The agent API's declarative schemas (one model per endpoint) are the one exception.
set -euo pipefail
cd "$(dirname "$0")/.."
too_long=$(find console models jobs infra -name '*.py' ! -path console/api/schemas.py \
    -exec awk -v max=450 'END { if (NR > max) print FILENAME ": " NR " lines" }' {} \;)
if [ -n "$too_long" ]; then
    echo "modules over 450 lines (split them by responsibility; docs/explanation/architecture.md, \"Checks\"):" >&2
    echo "$too_long" >&2
    exit 1
fi
