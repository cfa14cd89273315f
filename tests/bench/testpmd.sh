#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The testpmd row of `make bench`, inside the bench VM (busybox sh, as
# root).  The caller has loaded a VFIO (the in-kernel one from
# /opt/intree-vfio, or ours) and reserved huge pages; this script binds
# the two e1000e of the bench machine (00:06.0 and 00:07.0, joined by a
# QEMU hub) to the driver named, runs the Debian 12 dpdk-testpmd of the
# clients tree (tests/parity/rootfs.sh) chrooted, in io forward mode,
# starts it with tx_first (the packets then circulate across the hub),
# lets it warm up, reads the port statistics twice, S seconds apart,
# stops it and unbinds the NICs again.
#
#   sh testpmd.sh --backend NAME --driver DRV [--rep N] [--seconds S]
#                 [--warmup W] [--bursts B] [--clients DIR]
#
#   --backend NAME  the name in the output line (intree, container, ...)
#   --driver DRV    the PCI driver to bind the NICs to through
#                   driver_override (vfio-pci: the in-kernel driver or our
#                   alias of that name; the container ABI testpmd uses
#                   needs /dev/vfio/GROUP)
#   --rep N         repetition number in the output line (default 1)
#   --seconds S     the measured window (default 10)
#   --warmup W      seconds of forwarding before it (default 5)
#   --bursts B      bursts of 32 packets each port sends first (default 1)
#   --clients DIR   where the clients tree is (default /mnt/clients); when
#                   it is not mounted there, the 9p share "clients" is
#                   mounted (and unmounted at the end) as
#                   tests/parity/guest.sh does; that needs the modules
#                   virtio_pci, 9pnet_virtio and 9p in the initramfs
#
# Output on stdout, exactly one line:
#   BENCH <backend> testpmd pps <rep> <packets per second>
#       the packets both ports received in the window (testpmd forwards
#       every one of them in io mode) over its length
#   ERROR <backend> testpmd: <why>
# and on stderr "# " lines: the figures behind it, the log on failure.
# Exit status 0 with a BENCH line.  Either way the NICs are unbound,
# testpmd is not running and every huge page it took is free again (else
# ERROR).
#
# testpmd takes 12 huge pages of 2 MiB (--total-num-mbufs=4096,
# --in-memory); the script wants MIN_HUGEPAGES free before it starts.
set -u
# A write into the fifo after testpmd died must fail, not kill us.
trap '' PIPE

C=/mnt/clients
E0=0000:00:06.0
E1=0000:00:07.0
PCI=/sys/bus/pci/devices
LOG=/tmp/testpmd-bench.log
FIFO=/tmp/testpmd-bench.in
MIN_HUGEPAGES=16

backend=
driver=
rep=1
seconds=10
warmup=5
bursts=1

usage() {
	echo "usage: sh testpmd.sh --backend NAME --driver DRV [--rep N] [--seconds S] [--warmup W] [--bursts B] [--clients DIR]" >&2
}

while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { usage; exit 2; }
	case $1 in
	--backend) backend=$2 ;;
	--driver) driver=$2 ;;
	--rep) rep=$2 ;;
	--seconds) seconds=$2 ;;
	--warmup) warmup=$2 ;;
	--bursts) bursts=$2 ;;
	--clients) C=$2 ;;
	*) usage; exit 2 ;;
	esac
	shift 2
done
if [ -z "$backend" ] || [ -z "$driver" ]; then
	usage
	exit 2
fi
for n in "$rep" "$seconds" "$warmup" "$bursts"; do
	case $n in
	''|*[!0-9]*) echo "ERROR $backend testpmd: bad number '$n'"; exit 2 ;;
	esac
done

why=			# the first thing that went wrong
err() { [ -n "$why" ] || why=$*; }
note() { echo "# $*" >&2; }
show_log() { [ -f "$LOG" ] && sed 's/^/# | /' "$LOG" >&2; }

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

dev_driver() {
	d=$(readlink "$PCI/$1/driver" 2>/dev/null) || return 0
	basename "$d"
}

dev_group() {
	g=$(readlink "$PCI/$1/iommu_group" 2>/dev/null) || return 1
	basename "$g"
}

hp_free() { awk '/^HugePages_Free:/ {print $2}' /proc/meminfo; }

pinned() {
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	awk '/nr_foll_pin_acquired/ {a=$2} /nr_foll_pin_released/ {r=$2}
	     END {print a-r}' /proc/vmstat
}

now() { cut -d' ' -f1 /proc/uptime; }

# ---- the clients tree -------------------------------------------------
mounted_here=
mounts=
mount_tree() {
	grep -q " $C " /proc/mounts && return 0
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe "$m" 2>/dev/null
	done
	mkdir -p "$C"
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 \
		clients "$C" 2>/dev/null ||
		{ err "no 9p share 'clients' to mount on $C"; return 1; }
	mounted_here=1
	mounts=$C
	for d in proc sys dev dev/hugepages opt lib/modules; do
		mount -o bind "/$d" "$C/$d" ||
			{ err "bind mount of /$d on $C/$d failed"; return 1; }
		mounts="$C/$d $mounts"
	done
	for d in tmp run; do
		mount -t tmpfs tmpfs "$C/$d" ||
			{ err "tmpfs on $C/$d failed"; return 1; }
		mounts="$C/$d $mounts"
	done
}

umount_tree() {
	[ -n "$mounted_here" ] || return 0
	for m in $mounts; do
		umount "$m" || err "umount $m failed"
	done
}

# ---- the NICs ---------------------------------------------------------
unbind() {
	if [ -e "$PCI/$1/driver" ]; then
		echo "$1" >"$PCI/$1/driver/unbind" || return 1
	fi
	# A lone newline clears driver_override.
	echo >"$PCI/$1/driver_override"
}

bind() {	# device, driver
	unbind "$1" || return 1
	echo "$2" >"$PCI/$1/driver_override" || return 1
	echo "$1" >/sys/bus/pci/drivers_probe 2>/dev/null
	grp=$(dev_group "$1") || return 1
	wait_for "[ \"\$(dev_driver $1)\" = $2 ] && [ -c /dev/vfio/$grp ]" 50
}

bound=
bind_nics() {
	for d in $E0 $E1; do
		[ -d "$PCI/$d" ] ||
			{ err "no NIC $d (the bench machine's e1000e)"; return 1; }
		bound="$bound $d"
		if ! bind "$d" "$driver"; then
			err "$d not bound to $driver (driver '$(dev_driver "$d")', nodes $(echo /dev/vfio/*)): $(dmesg | tail -n 3 | tr '\n' '|')"
			return 1
		fi
	done
}

unbind_nics() {
	for d in $bound; do
		unbind "$d" || err "unbind $d from $driver failed"
	done
}

# ---- testpmd ----------------------------------------------------------
# Interactive, its commands written into a fifo held open on fd 3, its
# stdout in a file (stdbuf: line-buffered, so a statistics block is
# there when its last line is).  Interactive testpmd ignores --tx-first;
# its command "start tx_first" is the same.
pid=
start_testpmd() {
	rm -f "$FIFO" "$LOG"
	mkfifo "$FIFO" || { err "mkfifo $FIFO failed"; return 1; }
	(exec chroot "$C" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		stdbuf -oL dpdk-testpmd -l 0-1 -n 1 --in-memory \
		-a "$E0" -a "$E1" -- -i --total-num-mbufs=4096 \
		--forward-mode=io <"$FIFO" >"$LOG" 2>&1) &
	pid=$!
	exec 3>"$FIFO"
	# EAL and port start-up take a minute or more under TCG.
	if ! wait_for "grep -q 'testpmd> ' $LOG || ! kill -0 $pid 2>/dev/null" 3000 ||
	   ! kill -0 "$pid" 2>/dev/null; then
		err "testpmd did not come to its prompt: $(grep -m1 -iE 'error|fail|cannot' "$LOG")"
		return 1
	fi
	grep -qi 'using IOMMU type 1' "$LOG" ||
		note "the log does not say 'Using IOMMU type 1'"
}

# shellcheck disable=SC2317 # called through wait_for's eval
blocks() { grep -c 'NIC statistics for port 1' "$LOG"; }

# Ask for the statistics of both ports, the guest's uptime in $t just
# before (testpmd's main lcore sleeps in read() on the fifo, so the
# request is served at once, the same delay for both); wait for block $1
# to be complete.
snapshot() {
	t=$(now)
	echo "show port stats all" >&3 ||
		{ err "testpmd went away (request $1)"; return 1; }
	wait_for "[ \"\$(blocks)\" -ge $1 ] || ! kill -0 $pid 2>/dev/null" 600
	[ "$(blocks)" -ge "$1" ] ||
		{ err "no port statistics from testpmd (request $1): $(grep -m1 -iE 'error|fail|cannot' "$LOG")"; return 1; }
}

# Per port of statistics block $1: RX-packets, TX-packets, Rx-pps.
stats() {
	awk -v k="$1" '
		/NIC statistics for port/ {
			for (i = 1; i < NF; i++)
				if ($i == "port")
					p = $(i + 1)
			cur = (++n[p] == k)
			next
		}
		/########/ { cur = 0 }
		cur && $1 == "RX-packets:" { rx[p] = $2 }
		cur && $1 == "TX-packets:" { tx[p] = $2 }
		cur && $1 == "Rx-pps:" { pps[p] = $2 }
		END {
			for (q = 0; q < 2; q++)
				printf "%d %d %d ", rx[q], tx[q], pps[q]
			print ""
		}' "$LOG"
}

stop_testpmd() {
	[ -n "$pid" ] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		echo "stop" >&3 2>/dev/null
		echo "quit" >&3 2>/dev/null
	fi
	exec 3>&-
	i=0
	while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 600 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		err "testpmd did not exit on quit; killed"
	fi
	wait "$pid" 2>/dev/null
	pid=
	rm -f "$FIFO"
}

# ---- the run ----------------------------------------------------------
hp0=$(hp_free)
pin0=$(pinned)
pps=
if [ "${hp0:-0}" -lt "$MIN_HUGEPAGES" ]; then
	err "${hp0:-no} free huge pages, testpmd wants $MIN_HUGEPAGES (hugepages=N)"
elif mount_tree && bind_nics && start_testpmd; then
	echo "start tx_first $bursts" >&3 || err "testpmd went away (start)"
	sleep "$warmup"
	hp_used=$((hp0 - $(hp_free)))
	if snapshot 1; then
		t0=$t
		sleep "$seconds"
		if snapshot 2; then
			t1=$t
			s0=$(stats 1)
			s1=$(stats 2)
			# shellcheck disable=SC2086 # two lists of numbers
			set -- $s0 $s1
			rx0=$(($7 - $1))
			rx1=$((${10} - $4))
			tx0=$(($8 - $2))
			tx1=$((${11} - $5))
			tp_pps=$((${9} + ${12}))
			pps=$(awk -v n="$((rx0 + rx1))" -v a="$t0" -v b="$t1" \
				'BEGIN { if (b > a) printf "%.1f", n / (b - a) }')
			note "$backend: ${seconds} s window ($t0 .. $t1 s uptime): port 0 RX $rx0 TX $tx0, port 1 RX $rx1 TX $tx1; testpmd's own Rx-pps sum $tp_pps; $hp_used huge pages in use"
			if [ -z "$pps" ]; then
				err "no time passed between the two readings"
			elif [ "$rx0" -le 0 ] || [ "$rx1" -le 0 ]; then
				err "a port forwarded nothing in the window (port 0 RX $rx0, port 1 RX $rx1)"
			fi
		fi
	fi
fi
stop_testpmd
[ -f "$LOG" ] && ! grep -q 'Bye' "$LOG" && note "testpmd did not say Bye"
unbind_nics
pidof dpdk-testpmd >/dev/null && err "a dpdk-testpmd is still running: $(pidof dpdk-testpmd)"
# Huge pages come back when the process is gone, pins when VFIO's
# container is released: both may trail its exit a little.
wait_for "[ \"\$(hp_free)\" -ge $hp0 ]" 100 ||
	err "$((hp0 - $(hp_free))) huge pages still in use after testpmd exited"
wait_for "[ \"\$(pinned)\" -le $pin0 ]" 50 ||
	err "$(($(pinned) - pin0)) pages still pinned after testpmd exited"
umount_tree

if [ -n "$why" ]; then
	show_log
	echo "ERROR $backend testpmd: $why"
	exit 1
fi
echo "BENCH $backend testpmd pps $rep $pps"
exit 0
