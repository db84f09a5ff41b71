#!/usr/bin/env bash
# The test command (README, .ci/run): on a fresh Debian machine as root it installs what the tests
# need, builds, checks generated code and lint, starts every service on loopback, runs every suite,
# stops what it started, and ends with one line "N passed, N failed".
#
#   ./scripts/test.sh                 # everything
#   ./scripts/test.sh test/conformance # only some files (passed to vitest)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
source scripts/lib/packages.sh
source scripts/lib/services.sh
source scripts/lib/pulumi.sh

persys_install_packages

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[test] npm ci"
  npm ci --no-fund --no-audit --loglevel=error
fi
echo "[test] build"
npm run --silent build
echo "[test] generated code is up to date"
npm run --silent gen:check
echo "[test] lint"
npm run --silent lint
echo "[test] Pulumi CLI (built from Go modules once, cached by version)"
persys_ensure_pulumi

PERSYS_TEST_RUN_DIR=$(mktemp -d /tmp/persys-test.XXXXXX)
export PERSYS_TEST_RUN_DIR
trap 'persys_stop_services; persys_cleanup_pulumi; rm -rf "$PERSYS_TEST_RUN_DIR"' EXIT
persys_start_etcd
persys_start_redis
persys_start_docker
source scripts/lib/libvirt.sh && persys_setup_libvirt

mkdir -p test-results
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@" || status=$?
node scripts/lib/summary.mjs test-results/vitest.json || status=1
exit "$status"
