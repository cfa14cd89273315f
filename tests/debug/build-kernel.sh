#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the debug guest kernel (KASAN, lockdep, kmemleak, UBSAN, fault
# injection) from Debian's linux-source-6.1 with the small configuration
# tests/debug/debug.config merged over allnoconfig.
#
# The tree is kept under $VFIO_CACHE/debug-kernel/<hash>, the hash covering
# the fragment, this script and the source package version, so the kernel
# is rebuilt only when one of them changes, and our modules can be built
# against the tree (make -C <tree> M=...).
#
# stdout: shell assignments for eval (VFIO_DEBUG_KERNEL, VFIO_DEBUG_KDIR,
# VFIO_DEBUG_KVER, VFIO_DEBUG_MODULES, VFIO_DEBUG_BUILD_SECONDS); progress
# and the build log location go to stderr.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
frag=$top/tests/debug/debug.config
cache=${VFIO_CACHE:-/var/cache/vfio-dkms}/debug-kernel
tarball=/usr/src/linux-source-6.1.tar.xz
jobs=${VFIO_JOBS:-2}

log() { echo "build-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

want build-essential bc bison flex libelf-dev libssl-dev dwarves cpio \
	xz-utils kmod linux-source-6.1
install_wanted || die "apt-get install failed"
[ -f "$tarball" ] || die "$tarball missing after installing linux-source-6.1"

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
hash=$( { cat "$frag" "${BASH_SOURCE[0]}"; echo "$srcver"; } |
	sha256sum | cut -c1-16)
dir=$cache/$hash
tree=$dir/linux
mkdir -p "$cache"

# One build at a time; a second caller waits and then finds it cached.
exec 8>"$cache/lock"
flock -w 7200 8 || die "gave up waiting for $cache/lock"

if [ -f "$dir/done" ]; then
	log "cached: $dir (built in $(cat "$dir/build-seconds")s)"
	kernel_emit VFIO_DEBUG "$dir"
	exit 0
fi

SECONDS=0
if [ ! -f "$tree/.config" ]; then
	log "extracting $tarball into $tree"
	rm -rf "$dir"
	mkdir -p "$tree"
	tar -xJf "$tarball" -C "$tree" --strip-components=1
	log "configuring: allnoconfig + $frag"
	(cd "$tree" && ARCH=x86_64 scripts/kconfig/merge_config.sh -n \
		"$frag" >"$dir/config.log" 2>&1) ||
		die "merge_config.sh failed, see $dir/config.log"
fi
kconfig_check "$frag" "$tree/.config" ||
	die "the configuration lacks required options (see above)"

log "building bzImage and modules with -j$jobs (log: $dir/build.log)"
kernel_build "$dir" "$jobs" || die "no debug kernel"
log "built $(cat "$tree/include/config/kernel.release") in $(cat "$dir/build-seconds")s: $dir"
kernel_emit VFIO_DEBUG "$dir"
