#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build vfio.ko and vfio_pci.ko out of tree for one kernel, in a copy of
# src/ under build/, so the source tree stays clean for DKMS, and print
# the directory that holds them:
#   scripts/build-modules.sh [KVER|HEADER-TREE] [extra make args...]
# Without an argument: the newest installed 6.1 header tree, the guest
# kernel's.  Needs no root; when no header tree is there, says which
# command installs one.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kdir=
if [ $# -gt 0 ] && [ -f "$1/Makefile" ]; then
	kdir=$1
	shift
elif [ $# -gt 0 ] && [ -d "/lib/modules/$1/build" ]; then
	kdir=/lib/modules/$1/build
	shift
else
	for d in /usr/src/linux-headers-6.1.*-amd64; do
		[ -f "$d/Makefile" ] && kdir=$d
	done
fi
if [ -z "$kdir" ]; then
	echo "build-modules: no kernel header tree; 'sudo scripts/setup.sh' (run by make check and make demo) installs linux-headers-amd64" >&2
	exit 1
fi
kver=$(basename "$kdir")
kver=${kver#linux-headers-}
[ "$kver" = build ] && kver=$(basename "$(dirname "$kdir")")
out=${BUILD_DIR:-$top/build}/modules/$kver
rm -rf "$out"
mkdir -p "$out"
cp -a "$top/src/." "$out/"
make -s -C "$kdir" M="$out" -j2 "$@" modules >&2
echo "$out"
