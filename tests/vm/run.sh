#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The vm stage of `make check`: the watcher's own test (test_vmrun.py,
# against a stand-in QEMU), the guest suite on the std machine, then
# t-device-msix on the msix machine (none of std's devices has an MSI-X
# table, so that program skips every case there), then t-kill,
# t-device-close and t-device-reset on the slow machine (a 512 MiB BAR, a
# device with FLR), t-hot-reset on the hotreset machine (two functions on
# one bus).
# Prints every run's vt lines and summaries; exit status 0 only when all
# passed.  The std run's log is kept as build/vm/console-std.log.  One
# run of either:
#   tests/vm/run-suite.sh --machine msix --only '^t-device-msix$|^t-device-power$'
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
rc=0
python3 "$top/tests/vm/test_vmrun.py" || rc=1
"$top/tests/vm/run-suite.sh" || rc=1
cp "$top/build/vm/console.log" "$top/build/vm/console-std.log" || true
"$top/tests/vm/run-suite.sh" --machine msix --only '^t-device-msix$|^t-device-power$' || rc=1
"$top/tests/vm/run-suite.sh" --machine hotreset --only '^t-hot-reset$' || rc=1
"$top/tests/vm/run-suite.sh" --machine slow \
	--only '^t-kill$|^t-device-close$|^t-device-reset$' || rc=1
"$top/tests/vm/run-suite.sh" --machine sriov --intree nvme \
	--only '^t-device-sriov$|^t-container-sriov$' || rc=1
exit "$rc"
