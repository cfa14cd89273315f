#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot the test VM with interrupt remapping off (intel-iommu intremap=off)
# and the devices left unbound, and run t-hostile-intremap there: vfio_pci
# must refuse the devices unless allow_unsafe_interrupts=1.
#
# tests/vm/run-suite.sh always passes intremap=on, and a second
# intel-iommu would be a second IOMMU, so a qemu-system-x86_64 first in
# PATH rewrites that one option for this boot only.  Extra options go to
# run-suite.sh (e.g. --kernel for the debug kernel).  Prints vt lines and
# the run-suite summary; exit status is run-suite's.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
real=$(command -v qemu-system-x86_64) || {
	echo "not ok - intremap/qemu: qemu-system-x86_64 not installed (scripts/setup.sh installs it)"
	exit 1
}
wrap=$(mktemp -d /tmp/vfio-intremap.XXXXXX)
trap 'rm -rf "$wrap"' EXIT
cat >"$wrap/qemu-system-x86_64" <<WRAP
#!/bin/bash
args=()
for a in "\$@"; do
	args+=("\${a/intremap=on/intremap=off}")
done
exec "$real" "\${args[@]}"
WRAP
chmod +x "$wrap/qemu-system-x86_64"
PATH=$wrap:$PATH tests/vm/run-suite.sh --no-bind --only '^t-hostile-intremap$' \
	"$@"
