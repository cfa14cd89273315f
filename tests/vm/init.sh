#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the test VM (busybox sh).  Kernel messages go to ttyS0; this
# script and the test programs write to ttyS1, so that a kernel message
# can never split a vt line.  The host side (tests/vm/vmrun.py) reads both.
#
# Markers for the host:
#   VT-BOOT <uptime>            init started
#   VT-PROG-START <name>        a test program starts
#   VT-PROG-END <name> <rc>     ... and ended with status rc
#   VT-RUN-END <rc>             --run mode: the command ended
#   VT-SUITE-END                everything done, powering off
#   VT-HOST <monitor command>   (from test programs) ask QEMU to act
#
# Settings come from /etc/vt.conf, written by tests/vm/run-suite.sh, and
# the --run command from /etc/vt-run.sh.
# Deliberately no `set -e`: a failing step is reported, not fatal.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/hugepages /dev/pts /tmp
mount -t hugetlbfs hugetlbfs /dev/hugepages
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

if [ -c /dev/ttyS1 ]; then
	stty -F /dev/ttyS1 raw -echo 115200 2>/dev/null
	exec >/dev/ttyS1 2>&1 </dev/null
fi

# shellcheck source=/dev/null
. /etc/vt.conf

echo "VT-BOOT $(cut -d' ' -f1 /proc/uptime)"

ok() { echo "ok - harness/$1"; }
not_ok() { echo "not ok - harness/$1: $2"; }
skip() { echo "skip - harness/$1: $2"; }

PCI=/sys/bus/pci/devices

dev_group() {
	g=$(readlink "$PCI/$1/iommu_group" 2>/dev/null) || return 1
	basename "$g"
}

group_size() {
	find "/sys/kernel/iommu_groups/$1/devices/" -mindepth 1 -maxdepth 1 \
		2>/dev/null | wc -l
}

dev_driver() {
	d=$(readlink "$PCI/$1/driver" 2>/dev/null) || return 0
	basename "$d"
}

# All functions with vendor:device (hex, no 0x), one per line.
find_devs() {
	for d in "$PCI"/*; do
		[ "$(cat "$d/vendor")" = "0x$1" ] &&
			[ "$(cat "$d/device")" = "0x$2" ] &&
			basename "$d"
	done
}

# Wait up to $2 tenths of a second for command $1 to succeed.
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ "$i" -ge "$2" ] && return 1
		sleep 0.1
	done
	return 0
}

# ---- topology checks: the devices the tests rely on ------------------
EDU0=0000:00:02.0
EDU1=0000:00:03.0
TESTDEV0=0000:00:04.0
EDU2=
for d in $(find_devs 1234 11e8); do
	[ "$d" != $EDU0 ] && [ "$d" != $EDU1 ] && EDU2=$d
done

check_own_group() {
	g=$(dev_group "$1") || { echo "$1 has no IOMMU group"; return 1; }
	n=$(group_size "$g")
	[ "$n" -eq 1 ] || { echo "$1: group $g has $n devices"; return 1; }
	echo "$1=group $g"
}

why=
groups=
for d in $EDU0 $EDU1 $TESTDEV0; do
	if r=$(check_own_group "$d"); then
		groups="$groups $r"
	else
		why="$why $r"
	fi
done
if [ -z "$why" ]; then
	ok "iommu-groups:$groups"
else
	not_ok iommu-groups "$why"
fi

g0=$(dev_group 0000:00:1f.0)
g2=$(dev_group 0000:00:1f.2)
g3=$(dev_group 0000:00:1f.3)
if [ -n "$g0" ] && [ "$g0" = "$g2" ] && [ "$g0" = "$g3" ]; then
	ok "ich9-shared-group: 00:1f.0/2/3 in group $g0 ($(group_size "$g0") devices)"
else
	not_ok ich9-shared-group "groups '$g0' '$g2' '$g3'"
fi

if [ -z "$EDU2" ]; then
	not_ok hotplug-slot "no third edu (edu2) found"
else
	port=$(basename "$(dirname "$(readlink -f "$PCI/$EDU2")")")
	g=$(dev_group "$EDU2")
	members=$(cd "/sys/kernel/iommu_groups/$g/devices" && echo *)
	if [ -f "$PCI/$port/class" ] &&
	   [ "$(cut -c1-6 "$PCI/$port/class")" = 0x0604 ]; then
		ok "hotplug-slot: edu2 $EDU2 behind port $port, group $g: $members"
	else
		not_ok hotplug-slot "$EDU2 is not behind a PCI bridge ($port)"
	fi
fi

# ---- our modules -----------------------------------------------------
MODS_OK=0
KVER=$(uname -r)
# VT_MODPARAMS is a list of name=value words.
# shellcheck disable=SC2086
if [ ! -f "/lib/modules/$KVER/updates/vfio.ko" ] ||
   [ ! -f "/lib/modules/$KVER/updates/vfio_pci.ko" ]; then
	not_ok load-modules "vfio.ko/vfio_pci.ko not in the initramfs: the module build failed (see build/vm/modules-build.log)"
elif ! out=$(modprobe vfio_pci $VT_MODPARAMS 2>&1); then
	not_ok load-modules "modprobe vfio_pci: $out; dmesg: $(dmesg | tail -n 3 | tr '\n' ' ')"
elif [ ! -d /sys/bus/pci/drivers/vfio ]; then
	not_ok load-modules "loaded, but no PCI driver named vfio"
else
	ok "load-modules: $(lsmod | awk '$1 ~ /^vfio/ {printf "%s ", $1}')"
	MODS_OK=1
fi

# ---- bind the test devices as Documentation/vfio.txt does -------------
VFIO_DEVS="$EDU0 $EDU1 $EDU2 $TESTDEV0"
BIND_OK=0
check_bound() {
	for d in $VFIO_DEVS; do
		[ "$(dev_driver "$d")" = vfio ] || return 1
		[ -c "/dev/vfio/pci:$(dev_group "$d")" ] || return 1
	done
	return 0
}
bound_state() {
	for d in $VFIO_DEVS; do
		printf '%s:%s:%s ' "$d" "$(dev_driver "$d")" \
			"$(ls "/dev/vfio/pci:$(dev_group "$d")" 2>/dev/null)"
	done
}

if [ "$MODS_OK" = 1 ] && [ "$VT_BIND" = 1 ]; then
	for id in "1234 11e8" "1b36 0005"; do
		echo "$id" >/sys/bus/pci/drivers/vfio/new_id
	done
	if wait_for check_bound 50; then
		ok "bind-vfio: $(bound_state)"
		BIND_OK=1
	else
		not_ok bind-vfio "$(bound_state)"
	fi
fi

# Test programs (and benchmarks) run as uid 1000 need to be able to find
# the nodes; they are chowned per test, not here.
chmod 0755 /tests /opt 2>/dev/null

# ---- run -------------------------------------------------------------
if [ "$VT_MODE" = run ]; then
	echo "VT-PROG-START run"
	cd /opt || cd /
	sh /etc/vt-run.sh
	rc=$?
	echo "VT-PROG-END run $rc"
	echo "VT-RUN-END $rc"
else
	for t in /tests/t-*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		if [ "$MODS_OK" != 1 ] || { [ "$VT_BIND" = 1 ] &&
					    [ "$BIND_OK" != 1 ]; }; then
			echo "skip - $name: vfio modules not loaded or devices not bound (see harness/ lines)"
			continue
		fi
		echo "VT-PROG-START $name"
		cd /tmp || exit 1
		timeout -s KILL "$VT_TIMEOUT" "$t"
		rc=$?
		cd /
		echo "VT-PROG-END $name $rc"
		if [ "$VT_BIND" = 1 ] && ! check_bound; then
			not_ok "state-after-$name" "left the devices as: $(bound_state)"
			for d in $VFIO_DEVS; do
				[ "$(dev_driver "$d")" = vfio ] && continue
				[ -e "$PCI/$d/driver" ] &&
					echo "$d" >"$PCI/$d/driver/unbind"
				echo "$d" >/sys/bus/pci/drivers/vfio/bind
			done 2>/dev/null
		fi
	done
fi

# Not counted as a case: lets the host check that nothing stayed pinned.
echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
echo "VT-PINNED $(awk '/nr_foll_pin_acquired/ {a=$2} /nr_foll_pin_released/ {r=$2} END {print a-r}' /proc/vmstat)"
echo "VT-SUITE-END $(cut -d' ' -f1 /proc/uptime)"
sync
poweroff -f
