#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Extract the original 2011 ABI header (include/linux/vfio.h of seed 003)
# into OUTDIR/uapi/vfio.h, byte for byte as the patch adds it, so that
# programs can be built against it with -IOUTDIR (they include
# "uapi/vfio.h").  It is extracted at test time and never committed.
# Exit status 3 (and the reason on stdout) when the seed is not there.
set -euo pipefail

out=${1:?usage: seed-header.sh OUTDIR}
top=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
name=003-patch-vfio-vfio-core-header.patch

# The seeds live beside the team's checkout, not in the repository:
# $VFIO_SEEDS_DIR, else ../shared/seeds of this tree, else that of the
# checkout this one was cloned from (a clean clone in /tmp still finds
# them).
dirs=()
[ -n "${VFIO_SEEDS_DIR:-}" ] && dirs+=("$VFIO_SEEDS_DIR")
dirs+=("$top/../shared/seeds")
origin=$(git -C "$top" config --get remote.origin.url 2>/dev/null || true)
[ -n "$origin" ] && [ -d "$origin" ] && dirs+=("$origin/../shared/seeds")
seed=
for d in "${dirs[@]}"; do
	if [ -f "$d/$name" ]; then
		seed=$d/$name
		break
	fi
done
if [ -z "$seed" ]; then
	echo "seed header patch $name is absent (looked in ${dirs[*]};" \
		"set VFIO_SEEDS_DIR)"
	exit 3
fi
mkdir -p "$out/uapi"
# The file's hunk: from its "+++ b/include/linux/vfio.h" to the next
# "diff --git" (or the end), the "+" lines without their "+".
awk '
	/^diff --git / { infile = 0 }
	/^\+\+\+ b\/include\/linux\/vfio\.h$/ { infile = 1; next }
	infile && /^@@/ { inhunk = 1; next }
	infile && inhunk && /^\+/ { print substr($0, 2) }
' "$seed" >"$out/uapi/vfio.h.tmp"
if ! grep -q 'VFIO_DEVICE_RESET' "$out/uapi/vfio.h.tmp"; then
	echo "could not extract include/linux/vfio.h from $seed"
	rm -f "$out/uapi/vfio.h.tmp"
	exit 1
fi
mv "$out/uapi/vfio.h.tmp" "$out/uapi/vfio.h"
