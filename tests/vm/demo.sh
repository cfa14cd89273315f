#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make demo`: install what is missing, build the modules and the example
# driver, boot the test VM, bind an edu device as Documentation/vfio.txt
# does, and run the example as an ordinary user.  Exit status 0 only when
# the DMA round trip and the MSI worked.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: run as root (it installs packages with apt-get); e.g. sudo make demo" >&2
	exit 1
fi
# Only what the demo needs; the test tools come with make check.
export VFIO_SETUP_PROFILE=demo
eval "$(scripts/setup.sh)"

out=build/demo
mkdir -p "$out"
echo "demo: building the example driver examples/edu-dma"
make -s -C examples/edu-dma VFIO_INCLUDE="$top/src/include/uapi" \
	LDFLAGS=-static edu-dma
mv examples/edu-dma/edu-dma "$out/edu-dma"
cp tests/vm/demo-guest.sh "$out/demo-guest.sh"

echo "demo: booting the VM (QEMU, TCG; about 30 s)"
rc=0
tests/vm/run-suite.sh --no-bind --no-programs --add "$out/edu-dma" \
	--add "$out/demo-guest.sh" --run "sh /opt/demo-guest.sh" |
	tee "$out/transcript.txt" || rc=$?
if [ "$rc" -eq 0 ] &&
   grep -q 'success: DMA round trip and MSI verified' "$out/transcript.txt"; then
	echo "demo: OK: a user-space driver did DMA through the IOMMU and got its MSI"
	exit 0
fi
echo "demo: FAILED (transcript $out/transcript.txt, VM log build/vm/console.log)" >&2
exit 1
