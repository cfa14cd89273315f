#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build checks of src/: a W=1 build against every header tree that
# scripts/setup.sh provides (installed or unpacked in the cache) must print
# no warning, sparse (C=1) must be silent on the guest kernel's
# tree, and checkpatch must be clean; the same for the guest suite's
# test-only modules in tests/kmod.  One ok/not ok line per check.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
eval "$("$top/scripts/setup.sh")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

check_build() {
	local name=$1 tree=$2
	shift 2
	if "$top/scripts/build-modules.sh" "$tree" "$@" >/dev/null 2>"$log" &&
		build_log_clean "$log"; then
		echo "ok - kbuild/$name"
	else
		echo "not ok - kbuild/$name: build output follows"
		sed 's/^/#   /' "$log" | head -n 40
	fi
}

# The guest suite's test-only modules (tests/kmod, never shipped) are
# held to the same standard: run-suite.sh builds them with W=1 too.
check_test_kmod() {
	local name=$1 tree=$2 dir
	shift 2
	dir=$(mktemp -d)
	cp -a "$top/tests/kmod/." "$dir/"
	if make -s -C "$tree" M="$dir" -j2 "$@" modules >/dev/null 2>"$log" &&
		build_log_clean "$log"; then
		echo "ok - kbuild/test-kmod/$name"
	else
		echo "not ok - kbuild/test-kmod/$name: build output follows"
		sed 's/^/#   /' "$log" | head -n 40
	fi
	rm -rf "$dir"
}

for tree in $VFIO_KERNEL_TREES; do
	kver=$(basename "$tree")
	check_build "W=1/${kver#linux-headers-}" "$tree" W=1
	check_test_kmod "W=1/${kver#linux-headers-}" "$tree" W=1
done
check_build "sparse/$VFIO_GUEST_KVER" "/usr/src/linux-headers-$VFIO_GUEST_KVER" C=1
check_test_kmod "sparse/$VFIO_GUEST_KVER" "/usr/src/linux-headers-$VFIO_GUEST_KVER" C=1

# compat.h exists to hold version checks; those two tests are moot there.
cd "$top"
status=0
while IFS= read -r f; do
	ignore=
	[ "$f" = src/compat.h ] && ignore=--ignore=LINUX_VERSION_CODE,CONSTANT_COMPARISON
	if "$VFIO_CHECKPATCH" --no-tree -q --show-types $ignore -f "$f" >"$log" 2>&1; then
		echo "ok - checkpatch/$f"
	else
		echo "not ok - checkpatch/$f"
		sed 's/^/#   /' "$log" | head -n 30
		status=1
	fi
done < <(git ls-files 'src/*.c' 'src/*.h' 'tests/kmod/*.c')
exit $status
