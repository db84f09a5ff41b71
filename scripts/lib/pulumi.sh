# shellcheck shell=bash
# The Pulumi CLI for tests: where scripts/build-pulumi-cli.sh caches it, and the environment every
# test that runs it uses (local file backend in a temp dir, no update checks, no plugin downloads).
#
#   source scripts/lib/pulumi.sh
#   persys_ensure_pulumi          # builds once (cached by version), then exports PATH, PULUMI_* ...
#
# Nothing here reaches a network: the CLI is built from the Go module proxy by the build script,
# and the exported environment keeps it from checking for updates or downloading plugins.

_persys_pulumi_root() { (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd); }

# The pinned Pulumi version (vX.Y.Z): the one provider/pulumi-build/go.mod requires.
persys_pulumi_version() {
  awk '$1 == "github.com/pulumi/pulumi/pkg/v3" { print $2; exit }' "$(_persys_pulumi_root)/provider/pulumi-build/go.mod"
}

# The version of the Node.js language host (pulumi-language-nodejs): the github.com/pulumi/pulumi/sdk/v3
# that provider/pulumi-langhost-build/go.mod requires (v3.68.0, the newest served sdk/v3 containing it).
persys_pulumi_langhost_version() {
  awk '$1 == "github.com/pulumi/pulumi/sdk/v3" { print $2; exit }' "$(_persys_pulumi_root)/provider/pulumi-langhost-build/go.mod"
}

# The cache root: $PERSYS_CACHE_DIR, else /var/cache/persys when writable (root, CI), else ~/.cache/persys.
persys_cache_dir() {
  if [ -n "${PERSYS_CACHE_DIR:-}" ]; then
    echo "$PERSYS_CACHE_DIR"
  elif mkdir -p /var/cache/persys 2>/dev/null && [ -w /var/cache/persys ]; then
    echo /var/cache/persys
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/persys"
  fi
}

# Where the binaries of the pinned version live (the cache key is the version). The build script
# links pulumi-language-nodejs into this dir from $(persys_cache_dir)/pulumi/language-nodejs/<version>/bin.
persys_pulumi_bin_dir() { echo "$(persys_cache_dir)/pulumi/$(persys_pulumi_version)/bin"; }

# Builds the CLI if the cache lacks it, then exports the test environment:
#   PATH                  the cached bin dir first
#   PULUMI_HOME           a fresh temp dir (plugins, credentials, workspace state never touch ~/.pulumi)
#   PULUMI_BACKEND_URL    file://<temp dir>, the local backend
#   PULUMI_CONFIG_PASSPHRASE   the passphrase secrets provider (a fixed test value unless already set)
#   PULUMI_SKIP_UPDATE_CHECK, PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION, PULUMI_IGNORE_AMBIENT_PLUGINS
# PERSYS_PULUMI_TMP names the temp dir; persys_cleanup_pulumi removes it.
persys_ensure_pulumi() {
  local root bin
  root=$(_persys_pulumi_root)
  bin=$(persys_pulumi_bin_dir)
  "$root/scripts/build-pulumi-cli.sh" >&2 || return 1
  PERSYS_PULUMI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/persys-pulumi.XXXXXX")
  mkdir -p "$PERSYS_PULUMI_TMP/home" "$PERSYS_PULUMI_TMP/state"
  export PERSYS_PULUMI_TMP
  export PATH="$bin:$PATH"
  export PULUMI_HOME="$PERSYS_PULUMI_TMP/home"
  export PULUMI_BACKEND_URL="file://$PERSYS_PULUMI_TMP/state"
  export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE:-persys-test-passphrase}"
  export PULUMI_SKIP_UPDATE_CHECK=true
  export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
  # Plugins come only from the project's plugins.providers paths, never from whatever is on PATH.
  export PULUMI_IGNORE_AMBIENT_PLUGINS=true
  export PULUMI_SKIP_CONFIRMATIONS=true
  export PULUMI_DIY_BACKEND_NO_LEGACY_WARNING=true
  echo "[pulumi] $(pulumi version) from $bin; PULUMI_HOME=$PULUMI_HOME; backend $PULUMI_BACKEND_URL" >&2
}

persys_cleanup_pulumi() {
  [ -n "${PERSYS_PULUMI_TMP:-}" ] && rm -rf "$PERSYS_PULUMI_TMP"
  unset PERSYS_PULUMI_TMP
}
