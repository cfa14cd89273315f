#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# vfioctl in the test VM against the real kernel and our modules: builds
# a static vfioctl and runs tests/vfioctl/guest.sh through the core's
# VM harness (tests/vm/run-suite.sh --run).  Prints the guest's ok/not ok
# lines and a transcript ("# " lines) of list, check, apply and doctor.
# A second boot, on the nointremap machine, runs only doctor's interrupt
# remapping case; given options, run.sh boots once with them.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
work=$(mktemp -d "${TMPDIR:-/tmp}/vfio-vmctl.XXXXXX")
trap 'rm -rf "$work"' EXIT

# glibc 2.34+ has the files NSS backend built in, so getpwnam() in a
# static binary reads the guest's /etc/passwd; the link-time warning
# about it is expected.
# Every source of tools/vfioctl is vfioctl's (its Makefile's OBJS).
gcc -static -O2 -Wall -Wextra -Werror -o "$work/vfioctl" \
	tools/vfioctl/*.c \
	2> >(grep -v -e 'statically linked applications requires' \
		-e 'in function' >&2)
vm() {
	tests/vm/run-suite.sh --no-bind --add "$work/vfioctl" \
		--add tests/vfioctl/guest.sh --add etc/vfio/devices.conf \
		--add etc/modprobe.d/vfio-dkms.conf --add lib/intree-guard \
		--run "sh /opt/guest.sh" "$@"
}
# Options (another machine, kernel, ...): that one run only.
if [ $# -gt 0 ]; then
	vm "$@"
	exit
fi
rc=0
vm || rc=$?
vm --machine nointremap --no-programs || rc=$?
exit "$rc"
