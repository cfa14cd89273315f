#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The clients and parity stage inside the test VM (busybox sh, as root,
# our modules loaded and edu bound to vfio by /init).  The Debian 12
# tree of tests/parity/rootfs.sh is mounted read-only over 9p and its
# unchanged binaries run chrooted in it.  Every scenario runs twice in
# this boot: first on the kernel's own VFIO (/opt/intree-vfio), then on
# ours:
#   bind      dpdk-devbind.py and driverctl bind the two e1000e to vfio-pci;
#   testpmd   dpdk-testpmd forwards between them (a QEMU hub joins the two
#             ports): the log must say IOMMU type 1, both ports must count
#             RX and TX packets, and nothing may stay pinned;
#   kill9     the same, ended by kill -9: every pin goes;
#   qemu      QEMU 7.2 assigns edu0 and edu1 with -device vfio-pci
#             (qemu-edu.py): config, BAR, DMA, peer-to-peer;
#   reset     QEMU assigns edu2 (behind a root port, no FLR), resets the
#             machine as a guest reboot does, and checks it again;
#   vga       QEMU assigns the VM's VGA with x-vga=on and reaches its
#             legacy registers and text memory;
#   idle      the power state of the bound devices while nobody uses them.
# Each run leaves a record of what the client saw: exit status, data,
# its error and warning lines with addresses and counts masked, pins
# balanced.  The ok/not ok lines of ours are the clients checks; the
# kernel's run prints them as "# kernel: " lines.  At the end each
# scenario gets a parity row: identical, or the first differing line.
C=/mnt/clients
E0=0000:00:06.0
E1=0000:00:07.0
EDU0=0000:00:02.0
EDU1=0000:00:03.0
EDU2=0000:01:00.0
VGA=0000:00:01.0
PCI=/sys/bus/pci/devices
INTREE=/opt/intree-vfio
INTREE_MODS="vfio_pci vfio_pci_core vfio_iommu_type1 vfio_virqfd vfio iommufd irqbypass"
SCENARIOS="bind testpmd kill9 qemu reset vga idle"
P=/tmp/parity
fails=0
stack=
sc=

ok() {
	if [ "$stack" = ours ]; then
		echo "ok - clients/$1"
	else
		echo "# kernel: ok - clients/$1"
	fi
}
not_ok() {
	if [ "$stack" = ours ]; then
		echo "not ok - clients/$1: $2"
		fails=$((fails + 1))
	else
		echo "# kernel: not ok - clients/$1: $2"
	fi
}
show() { sed 's/^/# /' "$@"; }
# What the parity rows compare, masked: hex and long numbers (addresses,
# PIDs, counts) differ from run to run; errno values and short codes not.
mask() { sed -E 's/0x[0-9a-fA-F]+/0x#/g; s/[0-9]{4,}/#/g'; }
record() { echo "$*" >>"$P/$stack/$sc"; }
# A log's error and warning lines, masked, into the record.
record_errors() {	# log, prefix
	grep -iE 'error|fail|warn|cannot|unable|invalid' "$1" | mask |
		sed "s/^/$2: /" >>"$P/$stack/$sc"
}
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

# ---- the two VFIOs ---------------------------------------------------
unbind_all() {
	for d in "$PCI"/*; do
		case $(driver_of "${d##*/}") in
		vfio|vfio-pci) echo "${d##*/}" >"$d/driver/unbind" ;;
		esac
		[ -w "$d/driver_override" ] && echo >"$d/driver_override"
	done
}
# Bind $1 to vfio-pci as libvirt does, through driver_override.
bind_vfio_pci() {
	[ -e "$PCI/$1/driver" ] && echo "$1" >"$PCI/$1/driver/unbind"
	echo vfio-pci >"$PCI/$1/driver_override"
	echo "$1" >/sys/bus/pci/drivers_probe
	[ "$(driver_of "$1")" = vfio-pci ]
}
use_stack() {	# kernel | ours
	unbind_all
	for m in $INTREE_MODS; do
		grep -q "^$m " /proc/modules && rmmod "$m"
	done
	if [ "$1" = kernel ]; then
		for m in "$INTREE"/*.ko; do
			insmod "$m" || return 1
		done
	else
		modprobe vfio_pci || return 1
	fi
	stack=$1
	mkdir -p "$P/$stack"
}

# ---- the clients tree ------------------------------------------------
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe "$m" 2>/dev/null
done
mkdir -p "$C"
stack=ours
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

# ---- bind: the binding tools -----------------------------------------
sc_bind() {
	in_c dpdk-devbind.py -b vfio-pci "$E0" >/tmp/devbind.log 2>&1
	rc=$?
	show /tmp/devbind.log
	record "dpdk-devbind exit $rc, driver $(driver_of "$E0")"
	record_errors /tmp/devbind.log dpdk-devbind
	if [ "$rc" = 0 ] && [ "$(driver_of "$E0")" = vfio-pci ]; then
		ok "dpdk-devbind: $E0 bound to $(driver_of "$E0")"
	else
		not_ok dpdk-devbind "exit $rc, $E0 driver '$(driver_of "$E0")'"
	fi
	in_c driverctl --nosave set-override "$E1" vfio-pci >/tmp/driverctl.log 2>&1
	rc=$?
	show /tmp/driverctl.log
	record "driverctl exit $rc, driver $(driver_of "$E1"), override $(cat "$PCI/$E1/driver_override")"
	record_errors /tmp/driverctl.log driverctl
	if [ "$rc" = 0 ] && [ "$(driver_of "$E1")" = vfio-pci ]; then
		ok "driverctl: $E1 bound to $(driver_of "$E1"), override '$(cat "$PCI/$E1/driver_override")'"
	else
		not_ok driverctl "exit $rc, $E1 driver '$(driver_of "$E1")'"
	fi
	in_c dpdk-devbind.py --status-dev net | show
}

# ---- testpmd, kill9: dpdk-testpmd ------------------------------------
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
sc_testpmd() {
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
	iommu=$(grep -m1 -i 'using IOMMU type' /tmp/testpmd.log)
	record "exit $rc; $(echo "$iommu" | mask)"
	record_errors /tmp/testpmd.log testpmd
	if echo "$iommu" | grep -qi 'using IOMMU type 1'; then
		ok "testpmd-iommu: $iommu"
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
			record "port $p $k packets: $([ "${n:-0}" -gt 0 ] && echo some || echo none)"
		done
	done
	if [ "$rc" = 0 ] && [ -z "$bad" ]; then
		ok "testpmd-forward:$stats"
	else
		not_ok testpmd-forward "exit $rc;$stats"
	fi
	now=$(pinned)
	record "pins balanced after exit: $([ "$now" = "$base" ] && echo yes || echo no)"
	if [ "$now" = "$base" ]; then
		ok "testpmd-unpinned: $now pages pinned after exit, $base before"
	else
		not_ok testpmd-unpinned "$now pages pinned after exit, $base before"
	fi
}
sc_kill9() {
	base=$(pinned)
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
		record "forwarding; pinned while forwarding: $([ "$during" -gt "$base" ] && echo yes || echo no)"
		record "pins balanced after kill -9: $([ "$now" = "$base" ] && echo yes || echo no)"
		if [ "$now" = "$base" ] && [ "$during" -gt "$base" ]; then
			ok "testpmd-kill9: $during pages pinned while forwarding, $now after kill -9"
		else
			not_ok testpmd-kill9 "$during pages pinned while forwarding, $now after kill -9, $base before"
		fi
	else
		kill -9 "$pid" 2>/dev/null
		exec 3>&-
		show /tmp/testpmd-kill.log
		record "no forwarding"
		not_ok testpmd-kill9 "the second testpmd did not start forwarding"
	fi
}

# ---- qemu, reset: QEMU with -device vfio-pci -------------------------
# qemu-edu.py with the arguments given; its checks and QEMU's stderr
# into the record.
qemu_edu() {
	base=$(pinned)
	in_c python3 /opt/qemu-edu.py --name "$sc" qemu-system-x86_64 "$@" \
		>/tmp/qemu.log 2>&1
	record "qemu-edu.py exit $?"
	while read -r line; do
		case $line in
		"ok - "*|"not ok - "*)
			if [ "$stack" = ours ]; then
				echo "$line"
				case $line in not*) fails=$((fails + 1)) ;; esac
			else
				echo "# kernel: $line"
			fi
			echo "${line%%: *}" >>"$P/$stack/$sc" ;;
		"# qemu: "*) echo "$line" ;;
		*)	echo "# $line" ;;
		esac
	done </tmp/qemu.log
	# After the checks: the two streams interleave by timing.
	grep '^# qemu: ' /tmp/qemu.log | mask >>"$P/$stack/$sc"
	now=$(pinned)
	record "pins balanced after QEMU: $([ "$now" = "$base" ] && echo yes || echo no)"
	if [ "$now" = "$base" ]; then
		ok "$sc-unpinned: $now pages pinned after QEMU exited, $base before"
	else
		not_ok "$sc-unpinned" "$now pages pinned after QEMU exited, $base before"
	fi
}
# edu0 and edu1, peer-to-peer between them.
sc_qemu() {
	if ! bind_vfio_pci "$EDU0" || ! bind_vfio_pci "$EDU1"; then
		record "edu0/edu1 not bound to vfio-pci"
		not_ok qemu-bind "edu0 '$(driver_of "$EDU0")', edu1 '$(driver_of "$EDU1")'"
		return
	fi
	qemu_edu "$EDU0" --peer "$EDU1"
}
# edu2, alone behind a root port and without FLR, and a machine reset.
sc_reset() {
	if ! bind_vfio_pci "$EDU2"; then
		record "edu2 not bound to vfio-pci"
		not_ok reset-bind "edu2 '$(driver_of "$EDU2")'"
		return
	fi
	qemu_edu "$EDU2" --reset
}

# A VGA card with x-vga=on: its legacy ranges through region 8.
sc_vga() {
	if ! bind_vfio_pci "$VGA"; then
		record "the VGA not bound to vfio-pci"
		not_ok vga-bind "VGA '$(driver_of "$VGA")'"
		return
	fi
	qemu_edu "$VGA" --vga
	# Back to no driver, as the VM started.
	echo "$VGA" >"$PCI/$VGA/driver/unbind"
	echo >"$PCI/$VGA/driver_override"
}

# ---- idle: the bound devices' power while nobody uses them -----------
sc_idle() {
	sleep 3
	for d in "$E0" "$E1" "$EDU0"; do
		record "$d on $(driver_of "$d"): $(cat "$PCI/$d/power_state")"
	done
	ok "idle: $(tr '\n' ';' <"$P/$stack/$sc")"
}

run_all() {
	for sc in $SCENARIOS; do
		: >"$P/$stack/$sc"
		"sc_$sc"
	done
}

if use_stack kernel; then
	run_all
else
	echo "# the kernel's VFIO did not load from $INTREE"
fi
if ! use_stack ours; then
	not_ok load "modprobe vfio_pci after the kernel's VFIO"
	exit 1
fi
run_all

# ---- the parity rows -------------------------------------------------
for sc in $SCENARIOS; do
	if [ ! -s "$P/kernel/$sc" ]; then
		echo "not ok - parity/$sc: no record of the kernel's run"
		fails=$((fails + 1))
	elif cmp -s "$P/kernel/$sc" "$P/ours/$sc"; then
		echo "ok - parity/$sc: identical ($(wc -l <"$P/ours/$sc") lines)"
	else
		first=$(diff "$P/kernel/$sc" "$P/ours/$sc" |
			grep -m2 '^[-+][^-+]' | tr '\n' ' ')
		echo "not ok - parity/$sc: differs: $first"
		fails=$((fails + 1))
	fi
	sed "s/^/# kernel $sc: /" "$P/kernel/$sc"
	sed "s/^/# ours $sc: /" "$P/ours/$sc"
done
[ "$fails" = 0 ]
