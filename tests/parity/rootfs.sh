#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The real clients' userland for the clients stage: a Debian 12 tree
# made once with mmdebstrap under the cache, holding the unchanged
# binaries an administrator would run against VFIO: DPDK 22.11's
# dpdk-testpmd and dpdk-devbind.py, QEMU 7.2, driverctl and lspci.
# The guest mounts it read-only over 9p and runs them chrooted.
#   tests/parity/rootfs.sh     prints the directory on stdout
# dpdk-testpmd comes with dpdk-dev, which depends on every PMD and the
# headers; DPDK's EAL also loads every PMD in its plugin directory.  So
# the binary is taken out of dpdk-dev's .deb (apt-get download), and
# the tree gets only the libraries it links plus the PMDs this test
# needs (the ring mempool and e1000), so that nothing else probes.
# /usr/lib/modules is there for the guest's modules to be bound onto:
# driverctl modprobes the driver it binds.
set -euo pipefail

CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
die() { echo "clients-rootfs: $*" >&2; exit 1; }
log() { echo "clients-rootfs: $*" >&2; }

pkgs=(dpdk python3 pciutils iproute2 driverctl kmod qemu-system-x86
	librte-mempool-ring23 librte-net-e1000-23)
dir=$CACHE/clients/bookworm
stamp="${pkgs[*]} | dpdk-testpmd, /usr/lib/modules"

[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap)"
command -v mmdebstrap >/dev/null || {
	log "installing mmdebstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends mmdebstrap >&2
}
mkdir -p "$CACHE/clients"
exec 7>"$CACHE/clients/bookworm.lock"
flock -w 3600 7 || die "gave up waiting for $dir.lock"
if [ "$(cat "$dir/.done" 2>/dev/null)" = "$stamp" ]; then
	echo "$dir"
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vfio-clients.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q -o APT::Sandbox::User=root dpdk-dev >&2) ||
	die "apt-get download dpdk-dev failed"
dpkg-deb -x "$work"/dpdk-dev_*.deb "$work/x"
testpmd=$work/x/usr/bin/dpdk-testpmd
[ -x "$testpmd" ] || die "no dpdk-testpmd in dpdk-dev"
# A DPDK library's package is named after its soname: librte_net_i40e.so.23
# is in librte-net-i40e23, librte_common_mlx5.so.23 in librte-common-mlx5-23.
for so in $(objdump -p "$testpmd" | awk '/NEEDED/ {print $2}'); do
	case $so in
	librte_*.so.*)
		p=${so%.so.*}
		p=${p//_/-}
		case $p in *[0-9]) p=$p-${so##*.so.} ;; *) p=$p${so##*.so.} ;; esac
		pkgs+=("$p") ;;
	esac
done
# The others it links come from dpdk-dev's own dependencies.
# shellcheck disable=SC2016 # apt-cache's field, not the shell's
for p in $(apt-cache show --no-all-versions dpdk-dev |
	   sed -n 's/^Depends: //p' | tr ',' '\n' | awk '{print $1}'); do
	case $p in librte-*|libdpdk-dev|python3*) ;; *) pkgs+=("$p") ;; esac
done

uri=$(host_debian_mirror)
[ -n "$uri" ] || die "no Debian entry in this machine's apt sources"
log "making the clients tree with mmdebstrap (a few minutes, once)"
rm -rf "$dir"
# shellcheck disable=SC2016 # $1 is mmdebstrap's
mmdebstrap --variant=apt --mode=root -q \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--include="$(IFS=,; echo "${pkgs[*]}")" \
	--customize-hook="copy-in $testpmd /usr/bin" \
	--customize-hook='mkdir -p "$1/usr/lib/modules"' \
	bookworm "$dir" "deb $uri bookworm main" >&2 ||
	{ rm -rf "$dir"; die "mmdebstrap failed"; }
if chroot "$dir" ldd /usr/bin/dpdk-testpmd | grep 'not found' >&2; then
	rm -rf "$dir"
	die "dpdk-testpmd misses libraries in the tree"
fi
log "DPDK plugins: $(find "$dir"/usr/lib/x86_64-linux-gnu/dpdk/pmds-*/ \
	-name '*.so.*.*' -printf '%f '); $(du -sh "$dir" | cut -f1) in all"
echo "$stamp" >"$dir/.done"
echo "$dir"
