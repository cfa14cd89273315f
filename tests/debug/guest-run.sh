#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/debug/run.sh (busybox sh, run by /init in --run
# mode from /opt): the whole guest suite, as /init runs it, with longer
# fuzzer bounds, then a kmemleak scan of what the suite left behind.
# Prints vt lines; exits 1 when any of its own checks failed.
# Deliberately no `set -e`: every step reports, none aborts the run.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH
KML=/sys/kernel/debug/kmemleak
PCI=/sys/bus/pci/devices
DEVS="0000:00:02.0 0000:00:03.0 0000:01:00.0 0000:00:04.0"
VT_TIMEOUT=600
# shellcheck source=/dev/null
[ -f /etc/vt.conf ] && . /etc/vt.conf	# run-suite.sh's --timeout
fail=0

# The debug kernel is slower; give the fuzzer more time than in the
# normal suite.
VT_FUZZ_SECS=${VT_FUZZ_SECS:-120}
VT_FUZZ_ITERS=${VT_FUZZ_ITERS:-1000000}
export VT_FUZZ_SECS VT_FUZZ_ITERS

not_ok() { echo "not ok - debug/$1: $2"; fail=1; }

driver_of() {
	d=$(readlink "$PCI/$1/driver" 2>/dev/null) && basename "$d"
}

# Boot-time objects kmemleak cannot tell from leaks are not ours: forget
# them, so that the scan after the suite shows only what the suite left.
if [ -w "$KML" ]; then
	echo scan >"$KML"
	echo clear >"$KML"
fi

for t in /tests/t-*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "VT-PROG-START $name"
	cd /tmp || exit 1
	timeout -s KILL "$VT_TIMEOUT" "$t"
	rc=$?
	cd /
	echo "VT-PROG-END $name $rc"
	# 1 means a case failed, which the program reported itself.
	case $rc in
	0|1) ;;
	*) not_ok "$name" "exit status $rc (crash, signal or timeout)" ;;
	esac
	for d in $DEVS; do
		[ "$(driver_of "$d")" = vfio ] && continue
		not_ok "state-after-$name" "$d is bound to '$(driver_of "$d")'"
		[ -e "$PCI/$d/driver" ] && echo "$d" >"$PCI/$d/driver/unbind"
		echo "$d" >/sys/bus/pci/drivers/vfio/bind
	done 2>/dev/null
done

echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
pinned=$(awk '/nr_foll_pin_acquired/ {a=$2} /nr_foll_pin_released/ {r=$2}
	END {print a-r}' /proc/vmstat)
if [ "$pinned" = 0 ]; then
	echo "ok - debug/pinned-after-suite: 0 pages pinned"
else
	not_ok pinned-after-suite "$pinned pages still pinned"
fi

# kmemleak reports an object only when two scans agree it is unreferenced
# and it is older than 5 s: scan, wait, scan again.
if [ ! -e "$KML" ]; then
	echo "skip - debug/kmemleak: no $KML (kernel without DEBUG_KMEMLEAK or debugfs)"
else
	echo scan >"$KML"
	sleep 6
	echo scan >"$KML"
	cat "$KML" >/tmp/kmemleak.txt
	n=$(grep -c '^unreferenced object' /tmp/kmemleak.txt)
	ours=$(awk '/^unreferenced object/ {o=0} /vfio/ {if (!o) {c++; o=1}}
		END {print c+0}' /tmp/kmemleak.txt)
	if [ "$n" -eq 0 ]; then
		echo "ok - debug/kmemleak: no unreferenced objects after the suite"
	else
		sed 's/^/# kmemleak: /' /tmp/kmemleak.txt | head -n 200
		not_ok kmemleak "$n unreferenced objects, $ours with vfio in their backtrace"
	fi
fi
exit "$fail"
