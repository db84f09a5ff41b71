#!/usr/bin/env bash
# The run command (README): installs the npm dependencies, builds, and starts a single-node cluster
# (`persys up`) on loopback with the embedded stores. Extra arguments go to `persys up`
# (e.g. --etcd http://127.0.0.1:2379 --redis redis://127.0.0.1:6379).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[up] npm ci"
  npm ci --no-fund --no-audit --loglevel=error
fi
echo "[up] build"
npm run --silent build
exec node controlplane/dist/cli/persys.js up "$@"
