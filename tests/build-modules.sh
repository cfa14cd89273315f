#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build vfio.ko and vfio_pci.ko out of tree for one kernel (default: the
# guest kernel whose headers are installed), in a copy of src/ under
# build/, so the source tree stays clean for DKMS.
#   tests/build-modules.sh [KVER] [extra make args...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ] && [ -d "/lib/modules/$1/build" ]; then
	kver=$1
	shift
else
	eval "$("$top/tests/setup.sh")"
	kver=$VFIO_GUEST_KVER
fi
out=${BUILD_DIR:-$top/build}/modules/$kver
rm -rf "$out"
mkdir -p "$out"
cp -a "$top/src/." "$out/"
make -s -C "/lib/modules/$kver/build" M="$out" -j2 "$@" modules >&2
echo "$out"
