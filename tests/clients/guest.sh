#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The clients stage inside the test VM (busybox sh, as root, our modules
# loaded and edu bound to vfio by /init).  The Debian 12 tree of
# tests/clients/rootfs.sh is mounted read-only over 9p and its unchanged
# binaries run chrooted in it:
#   1. dpdk-devbind.py and driverctl bind the two e1000e to vfio-pci;
#   2. dpdk-testpmd forwards between them (a QEMU hub joins the two
#      ports): the log must say IOMMU type 1, both ports must count RX
#      and TX packets, and nothing may stay pinned, also after kill -9;
#   3. QEMU 7.2 assigns edu0 with -device vfio-pci (qemu-edu.py).
# Prints ok/not ok lines and a transcript ("# " lines).
C=/mnt/clients
E0=0000:00:06.0
E1=0000:00:07.0
EDU0=0000:00:02.0
PCI=/sys/bus/pci/devices
fails=0
ok() { echo "ok - clients/$1"; }
not_ok() { echo "not ok - clients/$1: $2"; fails=$((fails + 1)); }
show() { sed 's/^/# /' "$@"; }
driver_of() { basename "$(readlink "$PCI/$1/driver" 2>/dev/null)" 2>/dev/null; }
pinned() {
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	awk '/nr_foll_pin_acquired/ {a=$2} /nr_foll_pin_released/ {r=$2}
	     END {print a-r}' /proc/vmstat
}
in_c() {
	chroot "$C" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root "$@"
}
# Wait up to $2 seconds for process $1 to end; its status in $rc, or
# "hung" (then it is killed).
wait_pid() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$i" -lt "$(($2 * 2))" ]; do
		i=$((i + 1))
		sleep 0.5
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		wait "$1"
		rc=hung
	else
		wait "$1"
		rc=$?
	fi
}

# ---- the clients tree ------------------------------------------------
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe "$m" 2>/dev/null
done
mkdir -p "$C"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 \
	clients "$C"; then
	not_ok mount "no 9p share 'clients' (modules: $(lsmod | awk '/9p/ {printf "%s ", $1}'))"
	exit 1
fi
# /lib/modules: driverctl modprobes the driver it is given.
for d in proc sys dev dev/hugepages opt lib/modules; do
	mount -o bind "/$d" "$C/$d"
done
for d in tmp run; do
	mount -t tmpfs tmpfs "$C/$d"
done
# shellcheck disable=SC2016 # dpkg-query's field, not the shell's
ok "mount: Debian $(cat "$C/etc/debian_version") tree, DPDK $(in_c dpkg-query -W -f '${Version}' dpdk), $(in_c qemu-system-x86_64 --version | head -n 1)"

# ---- 1. binding tools ------------------------------------------------
in_c dpdk-devbind.py -b vfio-pci "$E0" >/tmp/devbind.log 2>&1
rc=$?
show /tmp/devbind.log
if [ "$rc" = 0 ] && [ "$(driver_of "$E0")" = vfio-pci ]; then
	ok "dpdk-devbind: $E0 bound to $(driver_of "$E0")"
else
	not_ok dpdk-devbind "exit $rc, $E0 driver '$(driver_of "$E0")'"
fi
in_c driverctl --nosave set-override "$E1" vfio-pci >/tmp/driverctl.log 2>&1
rc=$?
show /tmp/driverctl.log
if [ "$rc" = 0 ] && [ "$(driver_of "$E1")" = vfio-pci ]; then
	ok "driverctl: $E1 bound to $(driver_of "$E1"), override '$(cat "$PCI/$E1/driver_override")'"
else
	not_ok driverctl "exit $rc, $E1 driver '$(driver_of "$E1")'"
fi
in_c dpdk-devbind.py --status-dev net | show

# ---- 2. dpdk-testpmd -------------------------------------------------
# testpmd forwards until a line arrives on its stdin; a fifo holds the
# line back until forwarding has run for a while.  Its stdout is a file:
# stdbuf makes it line-buffered, so that "Press enter" shows when said.
testpmd_start() {	# log file
	rm -f /tmp/testpmd.in
	mkfifo /tmp/testpmd.in
	(exec chroot "$C" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		stdbuf -oL dpdk-testpmd -l 0-1 -n 1 --in-memory \
		-a "$E0" -a "$E1" -- --total-num-mbufs=4096 \
		--forward-mode=io --tx-first \
		</tmp/testpmd.in >"$1" 2>&1) &
	pid=$!
	exec 3>/tmp/testpmd.in
	i=0
	while ! grep -q 'Press enter to exit' "$1"; do
		i=$((i + 1))
		if [ "$i" -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.5
	done
}
port_stat() {	# log, port, RX|TX
	awk -v p="$2" -v k="$3-packets:" '
		/Forward statistics for port/ { cur = ($6 == p) }
		/Accumulated/ { cur = 0 }
		cur && $1 == k { print $2; exit }' "$1"
}
base=$(pinned)
if testpmd_start /tmp/testpmd.log; then
	sleep 10
	echo >&3
	wait_pid "$pid" 120
else
	kill -9 "$pid" 2>/dev/null
	wait "$pid"
	rc="no forwarding"
fi
exec 3>&-
show /tmp/testpmd.log
if grep -qi 'using IOMMU type 1' /tmp/testpmd.log; then
	ok "testpmd-iommu: $(grep -m1 -i 'using IOMMU type 1' /tmp/testpmd.log)"
else
	not_ok testpmd-iommu "the log does not say 'using IOMMU type 1'"
fi
stats=
bad=
for p in 0 1; do
	for k in RX TX; do
		n=$(port_stat /tmp/testpmd.log "$p" "$k")
		stats="$stats port $p $k ${n:-none};"
		[ "${n:-0}" -gt 0 ] || bad=1
	done
done
if [ "$rc" = 0 ] && [ -z "$bad" ]; then
	ok "testpmd-forward:$stats"
else
	not_ok testpmd-forward "exit $rc;$stats"
fi
now=$(pinned)
if [ "$now" = "$base" ]; then
	ok "testpmd-unpinned: $now pages pinned after exit, $base before"
else
	not_ok testpmd-unpinned "$now pages pinned after exit, $base before"
fi

if testpmd_start /tmp/testpmd-kill.log; then
	during=$(pinned)
	sleep 3
	kill -9 "$pid"
	wait_pid "$pid" 60
	exec 3>&-
	i=0
	while [ "$(pinned)" != "$base" ] && [ "$i" -lt 50 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	now=$(pinned)
	if [ "$now" = "$base" ] && [ "$during" -gt "$base" ]; then
		ok "testpmd-kill9: $during pages pinned while forwarding, $now after kill -9"
	else
		not_ok testpmd-kill9 "$during pages pinned while forwarding, $now after kill -9, $base before"
	fi
else
	kill -9 "$pid" 2>/dev/null
	exec 3>&-
	show /tmp/testpmd-kill.log
	not_ok testpmd-kill9 "the second testpmd did not start forwarding"
fi

# ---- 3. QEMU with -device vfio-pci -----------------------------------
base=$(pinned)
in_c python3 /opt/qemu-edu.py qemu-system-x86_64 "$EDU0" 2>&1 |
	sed '/^\(ok\|not ok\) - /!s/^\([^#]\)/# \1/'
now=$(pinned)
if [ "$now" = "$base" ]; then
	ok "qemu-unpinned: $now pages pinned after QEMU exited, $base before"
else
	not_ok qemu-unpinned "$now pages pinned after QEMU exited, $base before"
fi
[ "$fails" = 0 ]
