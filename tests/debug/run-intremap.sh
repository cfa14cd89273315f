#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot the nointremap machine (intel-iommu intremap=off) with the devices
# left unbound, and run t-hostile-intremap there: vfio_pci must refuse
# the devices unless allow_unsafe_interrupts=1.  Extra options go to
# run-suite.sh (e.g. --kernel for the debug kernel).  Prints vt lines and
# the run-suite summary; exit status is run-suite's.
set -euo pipefail

exec "$(dirname "$0")/../vm/run-suite.sh" --machine nointremap --no-bind \
	--only '^t-hostile-intremap$' "$@"
