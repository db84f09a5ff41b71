#!/usr/bin/env bash
# The run command (README): installs Docker (Debian docker.io) and starts dockerd when it does not
# answer, builds the local example images, installs the npm dependencies, builds, and starts a
# single-node cluster (`persys up`: control plane on loopback with the embedded stores, and a node
# agent on this machine's Docker). Extra arguments go to `persys up`
# (e.g. --etcd http://127.0.0.1:2379 --redis redis://127.0.0.1:6379).
# PERSYS_NO_DOCKER=1 skips Docker: the control plane runs with no node.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/packages.sh

if [ -z "${PERSYS_NO_DOCKER:-}" ]; then
  persys_install_packages
  if ! docker version >/dev/null 2>&1; then
    echo "[up] starting dockerd (log: /var/log/persys-dockerd.log)"
    setsid dockerd >/var/log/persys-dockerd.log 2>&1 </dev/null &
    for _ in $(seq 60); do docker version >/dev/null 2>&1 && break; sleep 1; done
  fi
  docker version >/dev/null 2>&1 && test/fixtures/build-images.sh
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[up] npm ci"
  npm ci --no-fund --no-audit --loglevel=error
fi
echo "[up] build"
npm run --silent build
exec node --max-semi-space-size=64 controlplane/dist/cli/persys.js up "$@"
