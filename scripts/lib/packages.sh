# shellcheck shell=bash
# Installs the Debian packages the tests (and scripts/up.sh) need, once. Needs root (CI and fresh machines run as root).

# binary -> Debian package
declare -A PERSYS_TEST_PACKAGES=(
  [etcd]=etcd-server
  [redis-server]=redis-server
  [dockerd]=docker.io
  [chromium]=chromium
  [curl]=curl
  [busybox]=busybox-static
  [docker-compose]=docker-compose
  [git]=git
)

persys_install_packages() {
  local missing=() bin
  for bin in "${!PERSYS_TEST_PACKAGES[@]}"; do
    command -v "$bin" >/dev/null 2>&1 || missing+=("${PERSYS_TEST_PACKAGES[$bin]}")
  done
  [ ${#missing[@]} -eq 0 ] && { echo "[packages] packages present: ${PERSYS_TEST_PACKAGES[*]}"; return 0; }
  if [ "$(id -u)" -ne 0 ]; then
    echo "[packages] FAIL: missing packages ${missing[*]} and not root; run as root or install them" >&2
    return 1
  fi
  echo "[packages] installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # policy-rc.d keeps the packages' own init scripts from starting daemons: we start ours on loopback.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}
