#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the guest programs that must run unchanged against the original
# 2011 header: t-docexample (Documentation/vfio.txt's usage example) and
# the example driver, wrapped as t-seed-edu-dma.  Everything for the
# guest's /tests goes to OUTDIR/tests.  Exit status 3 (reason on stdout)
# when the seed is absent, 1 when something does not build.
set -euo pipefail

out=${1:?usage: build-guest.sh OUTDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
CFLAGS=(-static -O2 -Wall -Wextra -Werror)

rm -rf "$out/tests" "$out/seed"
mkdir -p "$out/tests"
"$here/seed-header.sh" "$out/seed"

# Only the seed header and vt.h: no -Isrc/include, no vtlib.
gcc "${CFLAGS[@]}" -I"$out/seed" -I"$top/tests/guest" \
	-o "$out/tests/t-docexample" "$here/t-docexample.c"
gcc "${CFLAGS[@]}" -I"$out/seed/uapi" \
	-o "$out/tests/edu-dma-seed" "$top/examples/edu-dma/edu-dma.c"
install -m 0755 "$here/t-seed-edu-dma.sh" "$out/tests/t-seed-edu-dma"
