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
frag=$top/tests/debug/debug.config
cache=${VFIO_CACHE:-/var/cache/vfio-dkms}/debug-kernel
tarball=/usr/src/linux-source-6.1.tar.xz
jobs=${VFIO_JOBS:-2}

log() { echo "build-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

need=(build-essential bc bison flex libelf-dev libssl-dev dwarves cpio
      xz-utils kmod linux-source-6.1)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	log "installing ${missing[*]}"
	# Other engineers' scripts may hold the dpkg lock for a while.
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 \
		install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get -o DPkg::Lock::Timeout=900 update -qq >&2 &&
		  DEBIAN_FRONTEND=noninteractive apt-get \
			-o DPkg::Lock::Timeout=900 install -y -qq \
			--no-install-recommends "${missing[@]}" >&2; } ||
		die "apt-get install ${missing[*]} failed"
fi
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

emit() {
	local kver
	kver=$(cat "$tree/include/config/kernel.release")
	echo "VFIO_DEBUG_KERNEL=$tree/arch/x86/boot/bzImage"
	echo "VFIO_DEBUG_KDIR=$tree"
	echo "VFIO_DEBUG_KVER=$kver"
	echo "VFIO_DEBUG_MODULES=$dir/modroot/lib/modules/$kver"
	echo "VFIO_DEBUG_BUILD_SECONDS=$(cat "$dir/build-seconds")"
}

if [ -f "$dir/done" ]; then
	log "cached: $dir (built in $(cat "$dir/build-seconds")s)"
	emit
	exit 0
fi

# Every option the fragment sets must be in the final .config as written:
# merge_config.sh only warns when Kconfig drops one for a missing
# dependency, and a silently missing KASAN would make the run meaningless.
verify_config() {
	local bad=0 line opt
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$tree/.config" || {
				log "config: want '$line', have '$(grep -E "^(# )?${line%%=*}[= ]" "$tree/.config" || echo unset)'"
				bad=1
			} ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -qE "^$opt=" "$tree/.config"; then
				log "config: want $opt unset, have '$(grep -E "^$opt=" "$tree/.config")'"
				bad=1
			fi ;;
		esac
	done <"$frag"
	return "$bad"
}

start=$(date +%s)
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
verify_config || die "the configuration lacks required options (see above)"

log "building bzImage and modules with -j$jobs (log: $dir/build.log)"
if ! (cd "$tree" && nice -n 10 make ARCH=x86_64 -j"$jobs" bzImage modules \
	>"$dir/build.log" 2>&1); then
	tail -n 20 "$dir/build.log" >&2
	die "kernel build failed, see $dir/build.log"
fi
rm -rf "$dir/modroot"
(cd "$tree" && make ARCH=x86_64 INSTALL_MOD_PATH="$dir/modroot" \
	modules_install >>"$dir/build.log" 2>&1) ||
	die "modules_install failed, see $dir/build.log"
echo "$(($(date +%s) - start))" >"$dir/build-seconds"
touch "$dir/done"
log "built $(cat "$tree/include/config/kernel.release") in $(cat "$dir/build-seconds")s: $dir"
emit
