#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The MSI-X cases need a device with an MSI-X table; none of the standard
# VM's devices has one, so boot it once more with QEMU's e1000e NIC.
set -euo pipefail

exec "$(dirname "$0")/run-suite.sh" --only '^t-device-msix$' \
	--qemu-args "-device e1000e,addr=06.0" "$@"
