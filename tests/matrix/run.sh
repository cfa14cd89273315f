#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel matrix beyond the host's own Debian 12 (which the kbuild and
# vm stages cover): for each distribution, build src/ with W=1 in that
# distribution's chroot, with its own compiler, against its newest
# kernel's headers, and where the matrix says so boot that kernel in the
# test VM with the modules just built and run the guest suite.
#   tests/matrix/run.sh [DIST...]      default: every row below
# One ok/not ok/skip line per build and per guest case, each build line
# naming the kernel it used.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

# distribution   boot the guest suite on its kernel?
matrix=(
	"trixie yes"
	"trixie-backports yes"
	"sid no"
)

B=${BUILD_DIR:-$top/build}/matrix
mkdir -p "$B"
log() { echo "matrix: $*" >&2; }

# build DIST: prints CHROOT/KVER assignments of the chroot on success.
# shellcheck disable=SC2153 # KVER comes from scripts/chroot.sh's eval
build() {
	local dist=$1 env work rc=0
	if ! env=$(scripts/chroot.sh "$dist" 2>"$B/$dist-chroot.log"); then
		echo "not ok - matrix/$dist/chroot: $(tail -n 1 "$B/$dist-chroot.log")"
		return 1
	fi
	eval "$env"
	work=$CHROOT/tmp/vfio-build
	rm -rf "$work"
	mkdir -p "$work"
	cp -a src/. "$work/"
	# The guest suite's test-only modules, built beside ours.
	mkdir -p "$work/test-kmod"
	cp -a tests/kmod/. "$work/test-kmod/"
	# objtool (7.x) reads /proc: mount one in a private namespace, so
	# that nothing stays mounted when the build ends however it ends.
	# shellcheck disable=SC2016 # expanded by the inner sh
	unshare --mount --propagation private -- sh -c \
		'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' \
		sh "$CHROOT" "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c 'make -C "$1" M=/tmp/vfio-build -j2 W=1 modules &&
		       make -C "$1" M=/tmp/vfio-build/test-kmod -j2 W=1 modules' \
		sh "$KTREE" >"$B/$dist-build.log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] || ! build_log_clean "$B/$dist-build.log"; then
		echo "not ok - matrix/$dist/W=1/$KVER: build output follows"
		sed 's/^/#   /' "$B/$dist-build.log" | head -n 40
		return 1
	fi
	rm -rf "${B:?}/$dist"
	mkdir -p "$B/$dist"
	cp "$work/vfio.ko" "$work/vfio_pci.ko" "$work"/test-kmod/vfio_test_*.ko \
		"$B/$dist/"
	rm -rf "$work"
	echo "ok - matrix/$dist/W=1/$KVER: $(chroot "$CHROOT" gcc --version | head -n 1)"
	echo "CHROOT=$CHROOT KVER=$KVER" >"$B/$dist/env"
}

# The chroots are independent: make and build them all at once, and
# boot each row's kernel as soon as its build is done, one VM at a time
# (the rows behind it go on building meanwhile).
want=("$@")
declare -A pid=()
for row in "${matrix[@]}"; do
	read -r dist _ <<<"$row"
	if [ ${#want[@]} -gt 0 ] && ! [[ " ${want[*]} " == *" $dist "* ]]; then
		continue
	fi
	build "$dist" >"$B/$dist.result" &
	pid[$dist]=$!
done

status=0
for row in "${matrix[@]}"; do
	read -r dist boot <<<"$row"
	[ -n "${pid[$dist]:-}" ] || continue
	wait "${pid[$dist]}" || true
	cat "$B/$dist.result"
	grep -q '^not ok' "$B/$dist.result" && { status=1; continue; }
	[ "$boot" = yes ] || continue
	# shellcheck disable=SC1090,SC1091
	. "$B/$dist/env"
	log "guest suite on $dist's $KVER"
	tests/vm/run-suite.sh --kernel "$CHROOT/boot/vmlinuz-$KVER" \
		--kver "$KVER" --modules "$CHROOT/lib/modules/$KVER" \
		--prebuilt "$B/$dist" 2>"$B/$dist-suite.err" |
		sed -E "s/^(ok|not ok|skip) - /\\1 - matrix\\/$dist\\//" |
		grep -Ev '^[0-9]+ passed, ' || status=1
	cp build/vm/console.log "$B/$dist-console.log" 2>/dev/null || true
done
exit $status
