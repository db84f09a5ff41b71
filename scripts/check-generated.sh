#!/usr/bin/env bash
# Regenerates code from schema/ and the SDK's API reference (docs/sdk, typedoc) and fails when the
# result differs from what is committed (including new or deleted generated files).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent gen
npm run --silent docs:sdk >/dev/null
drift=$(git status --porcelain -- schema/src/gen sdk/src/spec-file/gen docs/sdk)
if [ -n "$drift" ]; then
  echo "generated code drifted from schema/ or sdk/ (run npm run gen and npm run docs:sdk, and commit):" >&2
  echo "$drift" >&2
  git --no-pager diff --stat -- schema/src/gen sdk/src/spec-file/gen docs/sdk >&2
  exit 1
fi
