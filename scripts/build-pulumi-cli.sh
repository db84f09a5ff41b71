#!/usr/bin/env bash
# Builds the Pulumi CLI (`pulumi`) from the Go module proxy into a cache outside the clone, once per
# version; later runs find it and return at once. No prebuilt CLI can be downloaded on these
# machines, but Pulumi's Go modules can be built. `go install` refuses modules with replace
# directives, so the build runs inside our wrapper module provider/pulumi-build/, which pins
# github.com/pulumi/pulumi/{pkg,sdk}/v3 and repeats their non-local replace directives.
#
#   scripts/build-pulumi-cli.sh            # build if needed; prints the bin dir on stdout
#   PERSYS_CACHE_DIR=/somewhere scripts/build-pulumi-cli.sh
#   PERSYS_PULUMI_REBUILD=1 scripts/build-pulumi-cli.sh   # ignore the cache
#
# Cache: $(persys_cache_dir)/pulumi/<version>/bin (see scripts/lib/pulumi.sh), keyed by the version;
# a stamp beside the binaries (hash of go.mod, go.sum and the Go version) turns a change of the
# wrapper module into a rebuild. Cold build (empty Go caches): 20.5 min wall measured on 2 busy
# cores (785 CPU-seconds, so about 7 min on 2 idle ones); with a warm Go build cache 39 s;
# a cache hit 1 s (docs/pulumi.md). The Go caches need about 3 GB.
#
# Not built: the Node.js language host (pulumi-language-nodejs). Its module
# github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 is not served by the module
# proxy reachable here (403 "This module version is not available"), so tests run Node.js programs
# through the Automation API's inline programs, which need no language host (docs/pulumi.md).
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

CACHE=$(persys_cache_dir)/pulumi/$VERSION
BIN=$CACHE/bin
STAMP="$VERSION $GO_VERSION $(cat "$MODDIR/go.mod" "$MODDIR/go.sum" | sha256sum | cut -c1-16)"

cached() {
  [ -x "$BIN/pulumi" ] && [ "$(cat "$BIN/.stamp" 2>/dev/null)" = "$STAMP" ] &&
    [ "$("$BIN/pulumi" version 2>/dev/null)" = "$VERSION" ]
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one build at a time; a second caller waits and then finds the cache filled
if [ -z "${PERSYS_PULUMI_REBUILD:-}" ] && cached; then
  echo "[pulumi] cached: pulumi $VERSION in $BIN" >&2
  echo "$BIN"
  exit 0
fi

echo "[pulumi] building pulumi $VERSION with $GO_VERSION from $MODDIR into $BIN (cold: 7-20 min on 2 cores)" >&2
OUT=$(mktemp -d "$CACHE/bin.tmp.XXXXXX")
chmod 755 "$OUT"
trap 'rm -rf "$OUT"' EXIT
start=$(date +%s)
# The flags of Pulumi's release build (.goreleaser.yml): -trimpath, stripped, version stamped,
# pure-Go os/user and gRPC without x/net/trace. CGO off: a static binary, no C compiler needed.
(
  cd "$MODDIR"
  export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly -p=${PERSYS_GO_BUILD_JOBS:-2}"
  nice -n 10 "$GO" build -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-w -s -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$VERSION" \
    -o "$OUT/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
)
got=$("$OUT/pulumi" version)
[ "$got" = "$VERSION" ] || { echo "[pulumi] FAIL: built binary reports '$got', expected $VERSION" >&2; exit 1; }
echo "$STAMP" >"$OUT/.stamp"
rm -rf "$BIN"
mv "$OUT" "$BIN"
trap - EXIT
echo "[pulumi] built pulumi $VERSION in $(($(date +%s) - start)) s: $BIN" >&2
echo "$BIN"
