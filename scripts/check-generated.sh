#!/usr/bin/env bash
# Regenerates code from schema/ and fails when the result differs from what is committed
# (including new or deleted generated files).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent gen
drift=$(git status --porcelain -- schema/src/gen sdk/src/spec-file/gen)
if [ -n "$drift" ]; then
  echo "generated code drifted from schema/ (run npm run gen and commit):" >&2
  echo "$drift" >&2
  git --no-pager diff --stat -- schema/src/gen sdk/src/spec-file/gen >&2
  exit 1
fi
