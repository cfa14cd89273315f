#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the bench guest kernel: the newest linux-source of trixie-backports
# with Debian's own amd64 configuration, tests/bench/kernel.config merged
# over it (iommufd and the vfio cdev, which Debian leaves out) and every
# module but those of tests/bench/kernel.modules turned off, so that the
# in-kernel type1, the in-kernel iommufd and our modules run in one boot
# of the same kernel.  Source and configuration come from the archive with
# scripts/fetch-debs.sh (nothing is installed, no apt source is added);
# the host's compiler builds it.
#
# The tree is kept under $VFIO_CACHE/bench-kernel/<hash>, the hash covering
# the fragment, the module list, this script (less its comments) and the
# package name, so the kernel is built once and our modules can be built
# against the tree.
#
# stdout: shell assignments for eval (VFIO_BENCH_KERNEL, VFIO_BENCH_KDIR,
# VFIO_BENCH_KVER, VFIO_BENCH_MODULES, VFIO_BENCH_BUILD_SECONDS, and
# VFIO_BENCH_UAPI: a directory with this kernel's <linux/vfio.h> and
# <linux/iommufd.h>); progress goes to stderr.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
frag=$top/tests/bench/kernel.config
mods=$top/tests/bench/kernel.modules
cache=${VFIO_CACHE:-/var/cache/vfio-dkms}/bench-kernel
suite=trixie-backports
jobs=${VFIO_JOBS:-2}

log() { echo "bench-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

want build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils kmod
install_wanted || die "apt-get install failed"

src=$("$top/scripts/fetch-debs.sh" "$suite" --search '^linux-source-[0-9]+\.[0-9]+$' |
	tail -n 1)
[ -n "$src" ] || die "no linux-source package in $suite"
series=${src#linux-source-}
# Comments do not change the kernel: editing them keeps the cache.
hash=$( { cat "$frag" "$mods"; grep -v '^[[:space:]]*#' "${BASH_SOURCE[0]}"
	  echo "$src"; } | sha256sum | cut -c1-16)
dir=$cache/$hash
tree=$dir/linux
mkdir -p "$cache"

# One build at a time; a second caller waits and then finds it cached.
exec 8>"$cache/lock"
flock -w 7200 8 || die "gave up waiting for $cache/lock"

emit() {
	kernel_emit VFIO_BENCH "$dir"
	echo "VFIO_BENCH_UAPI=$dir/uapi"
}

# vfio-bench's iommufd backend is built against this kernel's uapi, which
# the host's linux-libc-dev may predate: the two headers as `make headers`
# exports them (without __user), so that everything else comes from the
# host's own.
uapi() {
	[ -f "$dir/uapi/linux/iommufd.h" ] && return 0
	make -s -C "$tree" ARCH=x86_64 headers >>"$dir/config.log" 2>&1 ||
		die "make headers failed, see $dir/config.log"
	mkdir -p "$dir/uapi/linux"
	cp "$tree/usr/include/linux/vfio.h" \
		"$tree/usr/include/linux/iommufd.h" "$dir/uapi/linux/"
}

if [ -f "$dir/done" ]; then
	log "cached: $dir ($(cat "$dir/source"), built in $(cat "$dir/build-seconds") s)"
	uapi
	emit
	exit 0
fi

SECONDS=0
if [ ! -f "$tree/.config" ]; then
	rm -rf "$dir"
	mkdir -p "$tree"
	log "fetching $src and linux-config-$series from $suite"
	"$top/scripts/fetch-debs.sh" "$suite" "$dir/debs" "$src" \
		"linux-config-$series"
	log "extracting the source"
	tar -xaf "$dir/debs/usr/src/linux-source-$series.tar."* -C "$tree" \
		--strip-components=1
	xz -dc "$dir/debs/usr/src/linux-config-$series/config.amd64_none_amd64.xz" \
		>"$tree/.config"
	rm -rf "$dir/debs/usr/src"
	echo "$src $(make -s -C "$tree" kernelversion)" >"$dir/source"
	log "configuring: Debian's amd64 config + $frag, modules of $mods"
	grep -v '^#' "$mods" >"$dir/lsmod"
	(cd "$tree" &&
	 scripts/kconfig/merge_config.sh -m .config "$frag" &&
	 make ARCH=x86_64 olddefconfig &&
	 make ARCH=x86_64 LSMOD="$dir/lsmod" localmodconfig </dev/null) \
		>"$dir/config.log" 2>&1 ||
		die "configuration failed, see $dir/config.log"
fi
kconfig_check "$frag" "$tree/.config" ||
	die "the configuration lacks required options (see above)"

uapi
log "building bzImage and modules with -j$jobs (log: $dir/build.log)"
kernel_build "$dir" "$jobs" || die "no bench kernel"
log "built $(cat "$tree/include/config/kernel.release") in $(cat "$dir/build-seconds") s: $dir"
emit
