#!/usr/bin/env bash
# Builds the Pulumi CLI (`pulumi`) from the Go module proxy into a cache outside the clone, once per
# version; later runs find it and return at once. No prebuilt CLI can be downloaded on these
# machines, but Pulumi's Go modules can be built. `go install` refuses modules with replace
# directives, so the build runs inside our wrapper module provider/pulumi-build/, which pins
# github.com/pulumi/pulumi/{pkg,sdk}/v3 and repeats their non-local replace directives.
#
#   scripts/build-pulumi-cli.sh            # build if needed; prints the bin dir on stdout
#   PERSYS_CACHE_DIR=/somewhere scripts/build-pulumi-cli.sh
#   PERSYS_PULUMI_REBUILD=1 scripts/build-pulumi-cli.sh   # ignore the cache (CLI and language host)
#
# Cache: $(persys_cache_dir)/pulumi/<version>/bin (see scripts/lib/pulumi.sh), keyed by the version;
# a stamp beside the binaries (hash of go.mod, go.sum and the Go version) turns a change of the
# wrapper module into a rebuild. Cold build (empty Go caches): 20.5 min wall measured on 2 busy
# cores (785 CPU-seconds, so about 7 min on 2 idle ones); with a warm Go build cache 39 s;
# a cache hit 1 s (docs/pulumi.md). The Go caches need about 3 GB.
#
# Then the Node.js language host `pulumi-language-nodejs`, which `pulumi up` of a `runtime: nodejs`
# project needs. Pulumi's current host module (sdk/nodejs/cmd/pulumi-language-nodejs/v3) is not
# served by the module proxy reachable here (403), so it is built from the newest served module that
# contains it, github.com/pulumi/pulumi/sdk/v3 v3.68.0, in a second wrapper module,
# provider/pulumi-langhost-build/. Cached under $(persys_cache_dir)/pulumi/language-nodejs/<its
# version>/bin with its own stamp, and linked into the CLI's bin dir: the CLI looks for its bundled
# language hosts next to its own executable, also with PULUMI_IGNORE_AMBIENT_PLUGINS set. Cold build
# 4.7 min on 2 busy cores; a cache hit costs nothing. What this 2023 host lacks: docs/pulumi.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/pulumi.sh
source "$ROOT/scripts/lib/pulumi.sh"

MODDIR=$ROOT/provider/pulumi-build
VERSION=$(persys_pulumi_version)
SDK_VERSION=$(awk '$1 == "github.com/pulumi/pulumi/sdk/v3" { print $2; exit }' "$MODDIR/go.mod")
NPM_VERSION=$(sed -n 's/.*"@pulumi\/pulumi": *"\([^"]*\)".*/\1/p' "$ROOT/provider/package.json")
if [ -z "$VERSION" ] || [ "$VERSION" != "$SDK_VERSION" ] || [ "$VERSION" != "v$NPM_VERSION" ]; then
  echo "[pulumi] FAIL: versions disagree: pkg/v3 $VERSION, sdk/v3 $SDK_VERSION in $MODDIR/go.mod," \
    "@pulumi/pulumi $NPM_VERSION in provider/package.json; pin all three to one version" >&2
  exit 1
fi

GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { echo "[pulumi] FAIL: no Go toolchain (looked for go on PATH and /usr/local/go/bin/go)" >&2; exit 1; }
# Pulumi v3.248.0 needs go >= 1.25.11; the machine's own Go (1.26) is new enough, so never fetch one.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
GO_VERSION=$("$GO" env GOVERSION)
# Both builds: go.mod/go.sum as committed, and 2 parallel jobs (the 2 cores are shared).
BUILD_GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly -p=${PERSYS_GO_BUILD_JOBS:-2}"

CACHE=$(persys_cache_dir)/pulumi/$VERSION
BIN=$CACHE/bin
STAMP="$VERSION $GO_VERSION $(cat "$MODDIR/go.mod" "$MODDIR/go.sum" | sha256sum | cut -c1-16)"

cached() {
  [ -x "$BIN/pulumi" ] && [ "$(cat "$BIN/.stamp" 2>/dev/null)" = "$STAMP" ] &&
    [ "$("$BIN/pulumi" version 2>/dev/null)" = "$VERSION" ]
}

build_cli() {
  echo "[pulumi] building pulumi $VERSION with $GO_VERSION from $MODDIR into $BIN (cold: 7-20 min on 2 cores)" >&2
  OUT=$(mktemp -d "$CACHE/bin.tmp.XXXXXX")
  chmod 755 "$OUT"
  trap 'rm -rf "$OUT"' EXIT
  local start
  start=$(date +%s)
  # The flags of Pulumi's release build (.goreleaser.yml): -trimpath, stripped, version stamped,
  # pure-Go os/user and gRPC without x/net/trace. CGO off: a static binary, no C compiler needed.
  (
    cd "$MODDIR"
    CGO_ENABLED=0 GOFLAGS="$BUILD_GOFLAGS" nice -n 10 "$GO" build -trimpath -tags osusergo,grpcnotrace \
      -ldflags "-w -s -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$VERSION" \
      -o "$OUT/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  )
  local got
  got=$("$OUT/pulumi" version)
  [ "$got" = "$VERSION" ] || { echo "[pulumi] FAIL: built binary reports '$got', expected $VERSION" >&2; exit 1; }
  echo "$STAMP" >"$OUT/.stamp"
  rm -rf "$BIN"
  mv "$OUT" "$BIN"
  trap - EXIT
  echo "[pulumi] built pulumi $VERSION in $(($(date +%s) - start)) s: $BIN" >&2
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one build at a time; a second caller waits and then finds the cache filled
if [ -z "${PERSYS_PULUMI_REBUILD:-}" ] && cached; then
  echo "[pulumi] cached: pulumi $VERSION in $BIN" >&2
else
  build_cli
fi

# --- The Node.js language host (provider/pulumi-langhost-build), keyed by its own version. ---
LH_MODDIR=$ROOT/provider/pulumi-langhost-build
LH_VERSION=$(persys_pulumi_langhost_version)
[ -n "$LH_VERSION" ] || { echo "[pulumi] FAIL: $LH_MODDIR/go.mod requires no github.com/pulumi/pulumi/sdk/v3" >&2; exit 1; }
LH_CACHE=$(persys_cache_dir)/pulumi/language-nodejs/$LH_VERSION
LH_BIN=$LH_CACHE/bin
LH_EXE=$LH_BIN/pulumi-language-nodejs
LH_STAMP="$LH_VERSION $GO_VERSION $(cat "$LH_MODDIR/go.mod" "$LH_MODDIR/go.sum" | sha256sum | cut -c1-16)"

mkdir -p "$LH_CACHE"
exec 8>"$LH_CACHE/.lock"
flock 8
if [ -n "${PERSYS_PULUMI_REBUILD:-}" ] || [ ! -x "$LH_EXE" ] || [ "$(cat "$LH_BIN/.stamp" 2>/dev/null)" != "$LH_STAMP" ]; then
  echo "[pulumi] building pulumi-language-nodejs $LH_VERSION (sdk/v3) with $GO_VERSION from $LH_MODDIR into $LH_BIN (cold: about 5 min on 2 cores)" >&2
  LH_OUT=$(mktemp -d "$LH_CACHE/bin.tmp.XXXXXX")
  chmod 755 "$LH_OUT"
  trap 'rm -rf "$LH_OUT"' EXIT
  start=$(date +%s)
  # The same release flags as the CLI; the version stamp is what the host reports in GetPluginInfo.
  (
    cd "$LH_MODDIR"
    CGO_ENABLED=0 GOFLAGS="$BUILD_GOFLAGS" nice -n 10 "$GO" build -trimpath -tags osusergo,grpcnotrace \
      -ldflags "-w -s -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$LH_VERSION" \
      -o "$LH_OUT/pulumi-language-nodejs" github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs
  )
  # The host has no --version flag; check the module it was built from instead.
  "$GO" version -m "$LH_OUT/pulumi-language-nodejs" | grep -q "github.com/pulumi/pulumi/sdk/v3[[:space:]]*$LH_VERSION" ||
    { echo "[pulumi] FAIL: built pulumi-language-nodejs is not from sdk/v3 $LH_VERSION" >&2; exit 1; }
  echo "$LH_STAMP" >"$LH_OUT/.stamp"
  rm -rf "$LH_BIN"
  mv "$LH_OUT" "$LH_BIN"
  trap - EXIT
  echo "[pulumi] built pulumi-language-nodejs $LH_VERSION in $(($(date +%s) - start)) s: $LH_BIN" >&2
else
  echo "[pulumi] cached: pulumi-language-nodejs $LH_VERSION in $LH_BIN" >&2
fi
# Beside the CLI (a rebuilt CLI bin dir lacks the link, so it is made on every run, under both locks).
if [ "$(readlink "$BIN/pulumi-language-nodejs" 2>/dev/null)" != "$LH_EXE" ]; then
  ln -sfn "$LH_EXE" "$BIN/pulumi-language-nodejs"
fi
echo "$BIN"
