#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host side of the ABI contract: every ioctl number, structure layout and
# flag value of our header equals the original 2011 header (seed 003),
# and the example driver and the documentation's example build against
# that original header unchanged.  The guest side (the same programs run
# in the VM) is tests/abi/build-guest.sh, called by tests/vm/run-suite.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${BUILD_DIR:-$top/build}/abi-host
rm -rf "$out"
mkdir -p "$out"
CFLAGS=(-O2 -Wall -Wextra -Werror)

rc=0
why=$("$here/seed-header.sh" "$out/seed") || rc=$?
if [ "$rc" -eq 3 ]; then
	for c in ioctl-numbers flags struct-layout compare-detects-change \
		 example-builds-against-seed docexample-builds-against-seed; do
		echo "skip - abi/$c: $why"
	done
	exit 0
elif [ "$rc" -ne 0 ]; then
	echo "not ok - abi/seed-header: $why"
	exit 1
fi

status=0
cc_log() {	# name, gcc args...: compile, keep the log
	local name=$1
	shift
	gcc "$@" >"$out/$name.log" 2>&1
}

# (a) one table object per header, compared by one program.
build_cmp() {	# seed include dir, output
	cc_log seed-table "${CFLAGS[@]}" -I"$1" -I"$here" \
		-DABI_TABLE=abi_seed -DABI_TABLE_LEN=abi_seed_len \
		-c "$here/abi_table.c" -o "$2.seed.o" &&
	cc_log ours-table "${CFLAGS[@]}" -I"$top/src/include" -I"$here" \
		-DABI_TABLE=abi_ours -DABI_TABLE_LEN=abi_ours_len \
		-c "$here/abi_table.c" -o "$2.ours.o" &&
	cc_log compare "${CFLAGS[@]}" -I"$here" -o "$2" \
		"$here/abi_compare.c" "$2.seed.o" "$2.ours.o"
}
if build_cmp "$out/seed" "$out/abi-compare"; then
	"$out/abi-compare" || status=1
else
	echo "not ok - abi/table: does not build: $(grep -m1 error "$out"/*.log)"
	status=1
fi

# The comparison must be able to fail: a header with one number changed
# has to be caught.
mkdir -p "$out/altered/uapi"
sed 's/^#define VFIO_BASE\t100$/#define VFIO_BASE\t101/' \
	"$out/seed/uapi/vfio.h" >"$out/altered/uapi/vfio.h"
if cmp -s "$out/seed/uapi/vfio.h" "$out/altered/uapi/vfio.h"; then
	echo "not ok - abi/compare-detects-change: could not alter VFIO_BASE in the seed copy"
	status=1
elif build_cmp "$out/altered" "$out/abi-compare-altered" &&
     ! "$out/abi-compare-altered" >"$out/altered.txt" &&
     grep -q '^not ok - abi/ioctl-numbers: VFIO_BASE' "$out/altered.txt"; then
	echo "ok - abi/compare-detects-change: VFIO_BASE 101 is reported"
else
	echo "not ok - abi/compare-detects-change: a changed VFIO_BASE went unnoticed"
	status=1
fi

# (b) the programs that must work unchanged against the 2011 header.
if cc_log example "${CFLAGS[@]}" -I"$out/seed/uapi" -o "$out/edu-dma-seed" \
	"$top/examples/edu-dma/edu-dma.c"; then
	echo "ok - abi/example-builds-against-seed: examples/edu-dma/edu-dma.c"
else
	echo "not ok - abi/example-builds-against-seed: $(grep -m1 error "$out/example.log")"
	status=1
fi
if cc_log docexample "${CFLAGS[@]}" -I"$out/seed" -I"$top/tests/guest" \
	-o "$out/t-docexample" "$here/t-docexample.c"; then
	echo "ok - abi/docexample-builds-against-seed: tests/abi/t-docexample.c"
else
	echo "not ok - abi/docexample-builds-against-seed: $(grep -m1 error "$out/docexample.log")"
	status=1
fi
exit $status
