# shellcheck shell=bash
# libvirt + QEMU for the VM tests: installs the Debian packages, starts virtlogd and libvirtd when no
# libvirtd answers (there is no systemd on CI machines), makes the Persys test network, builds the
# guest fixtures, and stops only what it started. Sourced by scripts/test.sh after packages.sh.
#
#   persys_install_libvirt      apt packages (once; root)
#   persys_start_libvirt        libvirtd answering at $PERSYS_LIBVIRT_URI + network $PERSYS_LIBVIRT_NETWORK
#   persys_build_vm_fixtures    fast + real guest images, cached under $PERSYS_CACHE_DIR/vm
#   persys_setup_libvirt        all of the above for scripts/test.sh; stops libvirt at EXIT
#   persys_stop_libvirt         removes leftover persys-test-* domains and stops what we started
#
# A daemon that does not come up fails the run with the tail of its log.

PERSYS_LIBVIRT_URI=${PERSYS_LIBVIRT_URI:-qemu:///system}
# An isolated libvirt network (no <forward>): DHCP and DNS from the host's dnsmasq, no route out, so
# a guest can reach this host and nothing else.
PERSYS_LIBVIRT_NETWORK=${PERSYS_LIBVIRT_NETWORK:-persys-test}
PERSYS_LIBVIRT_BRIDGE=${PERSYS_LIBVIRT_BRIDGE:-persysbr0}
PERSYS_LIBVIRT_SUBNET=${PERSYS_LIBVIRT_SUBNET:-10.213.57}
PERSYS_LIBVIRT_PIDS=()
PERSYS_LIBVIRT_CREATED_NETWORK=

# binary -> Debian package. linux-image-amd64 brings the kernel the guests boot (/boot/vmlinuz-*) and
# its modules; the host may run another kernel (CI machines run a microVM kernel without modules).
declare -A PERSYS_LIBVIRT_PACKAGES=(
  [libvirtd]=libvirt-daemon-system
  [virsh]=libvirt-clients
  [qemu-system-x86_64]=qemu-system-x86
  [qemu-img]=qemu-utils
  [genisoimage]=genisoimage
  [isoinfo]=genisoimage
  [xorriso]=xorriso
  [debootstrap]=debootstrap
  [cpio]=cpio
  [busybox]=busybox-static
  [dnsmasq]=dnsmasq-base
  [iptables]=iptables
  [mkfs.ext4]=e2fsprogs
  [depmod]=kmod
  [xz]=xz-utils
  [mkinitramfs]=initramfs-tools
)

persys__libvirt_log() { echo "[libvirt] $*"; }

persys__libvirt_missing_packages() {
  local bin
  for bin in "${!PERSYS_LIBVIRT_PACKAGES[@]}"; do
    command -v "$bin" >/dev/null 2>&1 || echo "${PERSYS_LIBVIRT_PACKAGES[$bin]}"
  done
  # Files rather than binaries: the QEMU driver, the headers @unraid/libvirt compiles against, a kernel.
  [ -e /usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so ] ||
    echo libvirt-daemon-driver-qemu
  compgen -G '/boot/vmlinuz-*' >/dev/null || echo linux-image-amd64
  return 0
}

persys_install_libvirt() {
  local missing
  mapfile -t missing < <(persys__libvirt_missing_packages | sort -u)
  if [ ${#missing[@]} -eq 0 ]; then
    persys__libvirt_log "packages present"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "[libvirt] FAIL: missing packages ${missing[*]} and not root; run as root or install them" >&2
    return 1
  fi
  persys__libvirt_log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # policy-rc.d keeps the packages' init scripts from starting daemons; we start libvirtd ourselves.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null || {
    rm -f /usr/sbin/policy-rc.d
    return 1
  }
  rm -f /usr/sbin/policy-rc.d
}

persys__libvirt_answers() {
  timeout 10 virsh -c "$PERSYS_LIBVIRT_URI" version >/dev/null 2>&1
}

persys__libvirt_log_dir() {
  local dir=${PERSYS_TEST_RUN_DIR:-/tmp}/libvirt
  mkdir -p "$dir"
  echo "$dir"
}

# Starts one daemon with -d (it forks and writes a pid file) unless the pid file names a live process.
persys__libvirt_daemon() { # name pidfile log
  local name=$1 pidfile=$2 log=$3 pid
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    persys__libvirt_log "$name already runs (pid $(cat "$pidfile"))"
    return 0
  fi
  rm -f "$pidfile"
  # LIBVIRT_LOG_OUTPUTS also catches what the daemon logs after it detached from our stderr.
  if ! LIBVIRT_LOG_OUTPUTS="3:file:$log" "$name" -d -p "$pidfile" >>"$log" 2>&1; then
    echo "[libvirt] FAIL: $name -d exited with $?; its log:" >&2
    tail -n 40 "$log" >&2 || true
    return 1
  fi
  for _ in $(seq 50); do [ -s "$pidfile" ] && break; sleep 0.1; done
  pid=$(cat "$pidfile" 2>/dev/null || true)
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "[libvirt] FAIL: $name did not stay up; its log:" >&2
    tail -n 40 "$log" >&2 || true
    return 1
  fi
  PERSYS_LIBVIRT_PIDS+=("$pid")
  persys__libvirt_log "started $name (pid $pid, log $log)"
}

persys_start_libvirt() {
  local logs i
  logs=$(persys__libvirt_log_dir)
  export PERSYS_LIBVIRT_URI PERSYS_LIBVIRT_NETWORK
  if persys__libvirt_answers; then
    persys__libvirt_log "libvirtd already answers at $PERSYS_LIBVIRT_URI"
  else
    mkdir -p /run/libvirt /var/log/libvirt/qemu
    persys__libvirt_daemon virtlogd /run/virtlogd.pid "$logs/virtlogd.log" || return 1
    persys__libvirt_daemon libvirtd /run/libvirtd.pid "$logs/libvirtd.log" || return 1
    for ((i = 0; i < 300; i++)); do
      persys__libvirt_answers && break
      sleep 0.1
    done
    if ! persys__libvirt_answers; then
      echo "[libvirt] FAIL: libvirtd does not answer at $PERSYS_LIBVIRT_URI within 30s; its log:" >&2
      tail -n 40 "$logs/libvirtd.log" >&2 || true
      virsh -c "$PERSYS_LIBVIRT_URI" version >&2 || true
      return 1
    fi
  fi
  persys__libvirt_log "$(virsh -c "$PERSYS_LIBVIRT_URI" version | grep -E 'library|hypervisor' | tr -s ' ' | paste -sd';')"
  persys__libvirt_network || return 1
}

# The test network, transient (net-create), so nothing is left in /etc/libvirt when it is destroyed.
persys__libvirt_network_active() {
  virsh -c "$PERSYS_LIBVIRT_URI" net-info "$PERSYS_LIBVIRT_NETWORK" 2>/dev/null | grep -Eq '^Active:\s+yes'
}

persys__libvirt_network() {
  local net=$PERSYS_LIBVIRT_NETWORK xml i
  if persys__libvirt_network_active; then
    persys__libvirt_log "network $net is active"
    return 0
  fi
  virsh -c "$PERSYS_LIBVIRT_URI" net-start "$net" >/dev/null 2>&1 && {
    persys__libvirt_log "network $net started"
    return 0
  }
  xml=$(mktemp)
  cat >"$xml" <<EOF
<network>
  <name>$net</name>
  <bridge name='$PERSYS_LIBVIRT_BRIDGE' stp='off' delay='0'/>
  <ip address='$PERSYS_LIBVIRT_SUBNET.1' netmask='255.255.255.0'>
    <dhcp><range start='$PERSYS_LIBVIRT_SUBNET.10' end='$PERSYS_LIBVIRT_SUBNET.250'/></dhcp>
  </ip>
</network>
EOF
  if ! virsh -c "$PERSYS_LIBVIRT_URI" net-create "$xml" >"$xml.out" 2>&1; then
    # Another caller (or a libvirtd still starting up) may have it: an active network is fine.
    for ((i = 0; i < 20; i++)); do
      if persys__libvirt_network_active; then
        rm -f "$xml" "$xml.out"
        persys__libvirt_log "network $net is active"
        return 0
      fi
      sleep 0.5
    done
    echo "[libvirt] FAIL: cannot create network $net:" >&2
    cat "$xml.out" >&2
    tail -n 20 "$(persys__libvirt_log_dir)/libvirtd.log" >&2 || true
    rm -f "$xml" "$xml.out"
    return 1
  fi
  rm -f "$xml" "$xml.out"
  PERSYS_LIBVIRT_CREATED_NETWORK=$net
  persys__libvirt_log "network $net created (isolated, $PERSYS_LIBVIRT_SUBNET.0/24 on $PERSYS_LIBVIRT_BRIDGE)"
}

# Builds (or finds in the cache) the guest fixtures and exports their folders for the tests.
persys_build_vm_fixtures() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  PERSYS_TEST_VM_FAST_GUEST=$("$root/test/fixtures/vm/build-fast-guest.sh") || return 1
  PERSYS_TEST_VM_REAL_GUEST=$("$root/test/fixtures/vm/build-real-guest.sh") || return 1
  export PERSYS_TEST_VM_FAST_GUEST PERSYS_TEST_VM_REAL_GUEST
  persys__libvirt_log "fast guest $PERSYS_TEST_VM_FAST_GUEST"
  persys__libvirt_log "real guest $PERSYS_TEST_VM_REAL_GUEST"
}

# The one call scripts/test.sh makes (after persys_start_docker): packages, daemons, network, guest
# fixtures (timed: the cold/warm figures in docs/vm.md come from these lines), and
# persys_stop_libvirt added to the EXIT trap.
persys_setup_libvirt() {
  local t0 prev
  persys_install_libvirt || return 1
  persys_start_libvirt || return 1
  prev=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
  # shellcheck disable=SC2064
  trap "persys_stop_libvirt; ${prev:-:}" EXIT
  t0=$SECONDS
  persys_build_vm_fixtures || return 1
  persys__libvirt_log "guest fixtures ready in $((SECONDS - t0)) s"
}

# Removes domains a test left behind (persys-test-*), the network we created, and the daemons we
# started. A libvirtd that answered before persys_start_libvirt is left running.
persys_stop_libvirt() {
  local dom pid i
  if persys__libvirt_answers; then
    for dom in $(virsh -c "$PERSYS_LIBVIRT_URI" list --all --name 2>/dev/null | grep '^persys-test-' || true); do
      persys__libvirt_log "removing leftover domain $dom"
      virsh -c "$PERSYS_LIBVIRT_URI" destroy "$dom" >/dev/null 2>&1 || true
      virsh -c "$PERSYS_LIBVIRT_URI" undefine "$dom" --nvram >/dev/null 2>&1 ||
        virsh -c "$PERSYS_LIBVIRT_URI" undefine "$dom" >/dev/null 2>&1 || true
    done
    if [ -n "$PERSYS_LIBVIRT_CREATED_NETWORK" ]; then
      virsh -c "$PERSYS_LIBVIRT_URI" net-destroy "$PERSYS_LIBVIRT_CREATED_NETWORK" >/dev/null 2>&1 || true
    fi
  fi
  PERSYS_LIBVIRT_CREATED_NETWORK=
  # Reverse order: libvirtd before virtlogd, which keeps the logs of running guests.
  for ((i = ${#PERSYS_LIBVIRT_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PERSYS_LIBVIRT_PIDS[$i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  PERSYS_LIBVIRT_PIDS=()
}
