#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build vfio.ko/vfio_pci.ko for the guest kernel, the guest test programs
# and a busybox initramfs, boot the test VM once (QEMU, TCG) and run the
# guest suite in it.  Prints every vt line and ends with
# "N passed, N failed, N skipped"; exit status 0 only when nothing failed.
# See tests/vm/README.md for the guest environment and the options.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tests/vm/run-suite.sh [options]
  --only REGEX        run only the guest programs whose name matches
                      (extended regex, e.g. 't-dma|t-irq')
  --programs "F..."   guest program sources instead of tests/guest/t-*.c
                      (and the seed-header programs of tests/abi/)
  --machine NAME      QEMU machine profile of tests/vm/machines.toml
                      (default std)
  --qemu-args "..."   extra QEMU arguments (shell words)
  --kernel PATH       guest kernel image (default: $VFIO_GUEST_KERNEL)
  --kver KVER         its release (default: read from the image)
  --kdir DIR          kernel build tree for our modules
                      (default: /lib/modules/KVER/build)
  --prebuilt DIR      take vfio.ko and vfio_pci.ko (and, when there,
                      the test-only vfio_test_*.ko) from DIR instead
                      of building them (a kernel built with another
                      distribution's compiler, tests/matrix)
  --modules DIR       the kernel's own modules (default: $VFIO_GUEST_MODULES
                      when KVER is the default guest kernel's)
  --intree NAME       also put in-tree module NAME (and its dependencies)
                      into the initramfs; repeatable
  --modparams "..."   arguments for `modprobe vfio_pci` in the guest
  --add PATH          copy PATH into the guest's /opt; a .c file is built
                      statically with vtlib; repeatable
  --run CMD           instead of the suite run the guest shell command CMD
                      (in /opt, as root, after the usual setup); every line
                      it prints is shown; exit status is CMD's
  --no-bind           do not bind the test devices to vfio in /init
  --no-programs       build no guest test programs (same as --programs "")
  --hugepages N       2 MiB huge pages for the guest (default 32)
  --timeout SECS      per-program time limit in the guest (default 120);
                      the host also kills a VM silent for that long + 60 s
  --total-timeout S   whole-VM time limit (default 1200)
  --verbose           also print the kernel console
EOF
}

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
only=
machine=std
programs=
programs_set=0
qemu_extra=
kernel=
kver=
kdir=
moddir=
prebuilt=
modparams=
run_cmd=
mode=suite
bind=1
hugepages=32
prog_timeout=120
total_timeout=1200
verbose=
intree=(pci-stub)
# Wanted when the kernel has them (i2c-i801: a host driver that does DMA;
# fuse: a file whose reads never end, for t-container).
optional_intree=(i2c-i801 fuse)
adds=()

while [ $# -gt 0 ]; do
	case $1 in
	--only) only=$2; shift ;;
	--programs) programs=$2; programs_set=1; shift ;;
	--machine) machine=$2; shift ;;
	--qemu-args) qemu_extra=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--kver) kver=$2; shift ;;
	--kdir) kdir=$2; shift ;;
	--modules) moddir=$2; shift ;;
	--prebuilt) prebuilt=$2; shift ;;
	--intree) intree+=("$2"); shift ;;
	--modparams) modparams=$2; shift ;;
	--add) adds+=("$2"); shift ;;
	--run) run_cmd=$2; mode=run; shift ;;
	--no-bind) bind=0 ;;
	--no-programs) programs=; programs_set=1 ;;
	--hugepages) hugepages=$2; shift ;;
	--timeout) prog_timeout=$2; shift ;;
	--total-timeout) total_timeout=$2; shift ;;
	--verbose) verbose=--verbose ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-suite: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

# A wrong machine name fails now, not after the build.
python3 "$top/tests/vm/vmrun.py" --print-args --machine "$machine" \
	--qemu-args="$qemu_extra" >/dev/null || exit 2

eval "$("$top/scripts/setup.sh")"

kernel=${kernel:-$VFIO_GUEST_KERNEL}
if [ -z "$kver" ]; then
	kver=$(file -b "$kernel" | sed -n 's/.*version \([^ ]*\).*/\1/p')
	[ -n "$kver" ] || { echo "run-suite: cannot read the release of $kernel; pass --kver" >&2; exit 2; }
fi
kdir=${kdir:-/lib/modules/$kver/build}
if [ -z "$moddir" ]; then
	if [ "$kver" = "$VFIO_GUEST_KVER" ]; then
		moddir=$VFIO_GUEST_MODULES
	else
		moddir=/lib/modules/$kver
	fi
fi

B=$top/build/vm
mkdir -p "$B" "$VFIO_CACHE"

# One VM (and one build into build/vm) at a time on this machine: the
# engineers share two cores and this directory.
exec 9>"$VFIO_CACHE/vm.lock"
if ! flock -n 9; then
	echo "run-suite: another VM run holds $VFIO_CACHE/vm.lock; waiting" >&2
	waited=$SECONDS
	flock -w "${VFIO_VM_LOCK_WAIT:-3600}" 9 ||
		{ echo "run-suite: gave up waiting for the lock after ${VFIO_VM_LOCK_WAIT:-3600} s (VFIO_VM_LOCK_WAIT)" >&2; exit 1; }
	echo "run-suite: got the lock after $((SECONDS - waited)) s" >&2
fi

notes=()	# --note lines for vmrun.py: failures/skips found while building
note() { notes+=(--note "$1"); }

log() { echo "run-suite: $*" >&2; }

# content_key "PATH..." [WORD...]: a short hash of the files under the
# PATHs of the top directory (names and contents) and of the WORDs: what
# a build made of them is kept under that name in $B/cache and reused,
# since one make check runs the suite several times against the same
# kernel and sources.
content_key() {
	local paths=$1
	shift
	{
		# shellcheck disable=SC2086 # a list of paths
		(cd "$top" && find $paths -type f -print0 | sort -z |
			xargs -0 sha256sum)
		printf '%s\n' "$@"
	} | sha256sum | cut -c1-16
}
mkdir -p "$B/cache"

# ---- our modules -------------------------------------------------------
# Built once per kernel and content: a cached build stands in for
# --prebuilt.
modcache=
if [ -z "$prebuilt" ]; then
	modcache=$B/cache/modules-$(content_key "src tests/kmod" \
		"$(readlink -f "$kdir")" "$(cksum <"$kdir/.config" 2>/dev/null)" \
		"KCFLAGS=${KCFLAGS:-}" "KBUILD_EXTRA_SYMBOLS=${KBUILD_EXTRA_SYMBOLS:-}")
	if [ -f "$modcache/done" ]; then
		log "modules for $kver: unchanged, built before in $modcache"
		prebuilt=$modcache
		modcache=
	fi
fi
modsrc=$B/modsrc-$kver
rm -rf "$modsrc"
cp -a "$top/src" "$modsrc"
find "$modsrc" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o \
	-name '.*.cmd' -o -name 'modules.order' -o -name 'Module.symvers' \) \
	-delete
t_mod=$SECONDS
mods_built=0
if [ -n "$prebuilt" ]; then
	log "modules for $kver from $prebuilt"
	if cp "$prebuilt/vfio.ko" "$prebuilt/vfio_pci.ko" "$modsrc/"; then
		mods_built=1
	else
		note "not ok - harness/build-modules: no vfio.ko and vfio_pci.ko in $prebuilt"
	fi
elif log "building modules for $kver" &&
   make -C "$kdir" M="$modsrc" -j2 W=1 modules >"$B/modules-build.log" 2>&1 &&
   [ -f "$modsrc/vfio.ko" ] && [ -f "$modsrc/vfio_pci.ko" ]; then
	mods_built=1
else
	note "not ok - harness/build-modules: make M=src failed for $kver: $(grep -m1 -E 'error|Error|No rule' "$B/modules-build.log" || tail -n 1 "$B/modules-build.log")"
fi

# The test-only modules of tests/kmod (never shipped), for the kernel
# our modules are for: a guest program that wants one skips without it.
kmodsrc=$B/kmod-$kver
rm -rf "$kmodsrc"
cp -a "$top/tests/kmod" "$kmodsrc"
test_kmods_built=0
if [ -n "$prebuilt" ]; then
	cp "$prebuilt"/vfio_test_*.ko "$kmodsrc/" 2>/dev/null &&
		test_kmods_built=1
elif [ "$mods_built" = 1 ]; then
	if make -C "$kdir" M="$kmodsrc" -j2 W=1 modules >>"$B/modules-build.log" 2>&1 &&
	   [ -f "$kmodsrc/vfio_test_hold.ko" ] &&
	   [ -f "$kmodsrc/vfio_test_devlock.ko" ]; then
		test_kmods_built=1
	else
		note "not ok - harness/build-test-kmod: make M=tests/kmod failed for $kver: $(grep -m1 -E 'error|Error|No rule' "$B/modules-build.log" || tail -n 1 "$B/modules-build.log")"
	fi
fi

if [ -n "$modcache" ] && [ "$mods_built" = 1 ] && [ "$test_kmods_built" = 1 ]; then
	mkdir -p "$modcache"
	cp "$modsrc/vfio.ko" "$modsrc/vfio_pci.ko" "$kmodsrc"/vfio_test_*.ko \
		"$modcache/" && touch "$modcache/done"
fi
log "modules: $((SECONDS - t_mod)) s"

# ---- initramfs tree ----------------------------------------------------
root=$B/root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,tests,opt}
cp "$VFIO_BUSYBOX" "$root/bin/busybox"
while read -r applet; do
	[ "$applet" = bin/busybox ] && continue
	mkdir -p "$root/$(dirname "$applet")"
	ln -sf /bin/busybox "$root/$applet"
done < <("$VFIO_BUSYBOX" --list-full)

lib=$root/lib/modules/$kver
mkdir -p "$lib/updates" "$lib/kernel"
if [ "$mods_built" = 1 ]; then
	cp "$modsrc/vfio.ko" "$modsrc/vfio_pci.ko" "$lib/updates/"
fi
if [ "$test_kmods_built" = 1 ]; then
	cp "$kmodsrc"/vfio_test_*.ko "$lib/updates/"
fi

# Debian 13 ships its modules xz-compressed; the initramfs gets them
# plain, so that busybox's insmod needs no decompressor.
unpack_ko() {	# source, destination .ko
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# An in-tree module and, recursively, what it depends on.
copy_intree() {
	local name=$1 f dep
	f=$(find "$moddir/kernel" -name "$name.ko*" -print -quit)
	[ -z "$f" ] && f=$(find "$moddir/kernel" -name "${name//_/-}.ko*" -print -quit)
	if [ -z "$f" ]; then
		if grep -qE "/(${name}|${name//_/-})\.ko" "$moddir/modules.builtin" 2>/dev/null; then
			return 0
		fi
		note "not ok - harness/intree-$name: no module $name in $moddir"
		return 0
	fi
	local rel=${f#"$moddir"/}
	rel=${rel%.xz}
	rel=${rel%.zst}
	mkdir -p "$lib/$(dirname "$rel")"
	[ -e "$lib/$rel" ] && return 0
	unpack_ko "$f" "$lib/$rel"
	for dep in $(modinfo -F depends "$f" | tr ',' ' '); do
		copy_intree "$dep"
	done
}
for m in "${intree[@]}"; do
	copy_intree "$m"
done
for m in "${optional_intree[@]}"; do
	if [ -n "$(find "$moddir/kernel" -name "$m.ko*" -print -quit)" ]; then
		copy_intree "$m"
	fi
done
if [ "$mods_built" = 1 ]; then
	for dep in $(modinfo -F depends "$lib/updates/vfio.ko" "$lib/updates/vfio_pci.ko" | tr ',' ' '); do
		[ "$dep" = vfio ] || copy_intree "$dep"
	done
fi
cp "$moddir"/modules.order "$moddir"/modules.builtin "$lib/" 2>/dev/null || true
[ -f "$moddir/modules.builtin.modinfo" ] && cp "$moddir/modules.builtin.modinfo" "$lib/"
depmod -b "$root" "$kver"

# The distribution's own VFIO, outside the modprobe tree (its vfio.ko has
# our module's name), for side-by-side benchmarks: insmod in this order.
# iommufd is there only when the kernel was built with it as a module
# (tests/bench/build-kernel.sh); its vfio.ko then needs it first.
intree_vfio=$root/opt/intree-vfio
mkdir -p "$intree_vfio"
n=0
for m in virt/lib/irqbypass drivers/iommu/iommufd/iommufd \
	 drivers/vfio/vfio drivers/vfio/vfio_virqfd \
	 drivers/vfio/vfio_iommu_type1 drivers/vfio/pci/vfio-pci-core \
	 drivers/vfio/pci/vfio-pci; do
	for f in "$moddir/kernel/$m".ko{,.xz,.zst}; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		unpack_ko "$f" "$intree_vfio/$n-$(basename "$m").ko"
		break
	done
done

# ---- guest programs ----------------------------------------------------
CFLAGS=(-static -O2 -Wall -Wextra -Werror -Isrc/include -Itests/guest)
# Every program links all three helper files: vtsys (ABI-free), vtlib (seed
# ABI) and vtcontainer (today's ABI); each is its own translation unit, so a
# program may include either uapi header, and the linker drops nothing it
# needs.
VTLIBS=(vtsys vtlib vtcontainer)
cd "$top"
# --run scripts may run the suite themselves (tests/debug), so it is
# built there too unless --no-programs says it is not wanted.
if [ "$programs_set" = 0 ]; then
	programs=$(ls tests/guest/t-*.c 2>/dev/null || true)
fi
# The helpers are compiled once, and each program linked once, per
# content: make check runs the suite several times, and a later run
# copies what an earlier one built.
progcache=$B/cache/programs-$(content_key "tests/guest src/include" \
	"${CFLAGS[*]}")
mkdir -p "$progcache"
vtobjs=()
for lib in "${VTLIBS[@]}"; do
	obj=$progcache/$lib.o
	if [ ! -f "$obj" ]; then
		if ! gcc "${CFLAGS[@]:1}" -c -o "$obj.tmp" "tests/guest/$lib.c" \
			2>"$B/build-$lib.log"; then
			note "not ok - harness/build-$lib: $(grep -m1 error "$B/build-$lib.log")"
			continue
		fi
		mv "$obj.tmp" "$obj"
	fi
	vtobjs+=("$obj")
done
build_prog() {	# source, output
	local out cached
	# --add and --programs may name sources outside tests/guest.
	cached=$progcache/$(basename "$1" .c)-$(sha256sum "$1" | cut -c1-16)
	if [ ! -f "$cached" ]; then
		if ! out=$(gcc "${CFLAGS[@]}" -o "$cached.tmp" "$1" "${vtobjs[@]}" 2>&1); then
			note "not ok - harness/build-$(basename "$1" .c): $(echo "$out" | grep -m1 -E 'error' || echo "$out" | head -n 1)"
			echo "$out" >"$B/build-$(basename "$1" .c).log"
			return 1
		fi
		mv "$cached.tmp" "$cached"
	fi
	cp "$cached" "$2"
}
for src in $programs; do
	name=$(basename "$src" .c)
	[ -n "$only" ] && ! [[ $name =~ $only ]] && continue
	build_prog "$src" "$root/tests/$name" || true
done
# Programs built against the unmodified seed header (tests/abi/).
if [ "$programs_set" = 0 ] && [ -x tests/abi/build-guest.sh ]; then
	abi_out=$B/abi
	mkdir -p "$abi_out"
	rc=0
	out=$(tests/abi/build-guest.sh "$abi_out" 2>&1) || rc=$?
	case $rc in
	0) for f in "$abi_out"/tests/*; do
		name=$(basename "$f")
		[[ $name == t-* ]] && [ -n "$only" ] &&
			! [[ $name =~ $only ]] && continue
		cp "$f" "$root/tests/"
	   done ;;
	3) note "skip - harness/seed-programs: $out" ;;
	*) note "not ok - harness/seed-programs: $out" ;;
	esac
fi

for a in "${adds[@]}"; do
	case $a in
	*.c) build_prog "$a" "$root/opt/$(basename "$a" .c)" || true ;;
	*) cp -a "$a" "$root/opt/" ;;
	esac
done

# ---- configuration and users -------------------------------------------
cp tests/vm/init.sh "$root/init"
chmod 0755 "$root/init"
cat >"$root/etc/vt.conf" <<EOF
VT_MODE=$mode
VT_BIND=$bind
VT_TIMEOUT=$prog_timeout
VT_MODPARAMS="$modparams"
EOF
printf '%s\n' "$run_cmd" >"$root/etc/vt-run.sh"
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:test user:/tmp:/bin/sh
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
user:x:1000:
EOF
touch "$root/etc/shadow"

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) |
	gzip -1 >"$B/initrd.gz"
log "initramfs $(du -h "$B/initrd.gz" | cut -f1), $(find "$root/tests" -type f | wc -l) guest programs"

# ---- boot --------------------------------------------------------------
log "booting $kver on machine $machine (TCG)"
python3 tests/vm/vmrun.py --machine "$machine" --qemu-args="$qemu_extra" \
	--kernel "$kernel" --initrd "$B/initrd.gz" \
	--append "hugepages=$hugepages" \
	--workdir "$B" --log "$B/console.log" \
	--mode "$mode" --total-timeout "$total_timeout" \
	--prog-timeout "$((prog_timeout + 60))" \
	--idle-timeout "$((prog_timeout + 60))" $verbose "${notes[@]}"
