#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of `make bench` (busybox sh, run by tests/bench/run.sh through
# tests/vm/run-suite.sh --no-bind --run).  In one boot it runs
# /opt/vfio-bench against the kernel's own VFIO (the modules in
# /opt/intree-vfio/, vfio-pci): through the container ABI and type1
# (backend "intree") and, when the kernel has iommufd and the vfio cdev,
# through /dev/iommu and /dev/vfio/devices/vfioN (backend "iommufd"); and,
# after unloading those,
# against ours (vfio.ko + vfio_pci.ko) twice: through the seed group ABI
# (backend "ours", driver "vfio", /dev/vfio/pci:N) and through the
# container ABI (backend "container", driver alias "vfio-pci", /dev/vfio/N),
# with the same program code as the in-kernel run.  The container run tells
# our core's cost apart from the seed ABI's: it and the in-kernel run
# differ only in the modules below the ioctls.
#
#   sh guest.sh [--rounds N] [--reps R] [vfio-bench options...]
#
# With N rounds the backends alternate N times (in-kernel, iommufd, ours,
# container, in-kernel, ...), R repetitions each time: the host is shared, and
# alternating spreads its load changes over all backends instead of
# charging them to whichever ran last.
#
# Output: vfio-bench's BENCH/ERROR/INFO lines, plus
#   BENCH-PHASE <backend> <rc>      one run of a backend ended with rc
#   ERROR <backend> setup: <what>   a backend could not be set up
# No `set -e`: when one backend cannot be set up the other still runs, and
# the device is put back either way.  Exit status 0 only when every run
# was clean.  At the end ours is loaded and edu0 unbound, as /init left it.
set -u

DEV=0000:00:02.0		# edu0
PCI=/sys/bus/pci/devices
BENCH=/opt/vfio-bench
INTREE=/opt/intree-vfio
# The in-kernel type1 refuses more than 65535 mappings per container by
# default; row 3 makes 100000.
DMA_ENTRY_LIMIT=200000
TESTPMD_SECONDS=10
INTREE_MODS="vfio_pci vfio_pci_core vfio_iommu_type1 vfio_virqfd vfio iommufd irqbypass"

rounds=1
reps=5
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	*) break ;;
	esac
done

say() { echo "$*"; }
fail() { say "ERROR $1 setup: $2"; }

dev_driver() {
	d=$(readlink "$PCI/$1/driver" 2>/dev/null) || return 0
	basename "$d"
}

dev_group() {
	g=$(readlink "$PCI/$1/iommu_group" 2>/dev/null) || return 1
	basename "$g"
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

loaded() { grep -q "^$1 " /proc/modules; }

unbind() {
	if [ -e "$PCI/$1/driver" ]; then
		echo "$1" >"$PCI/$1/driver/unbind" || return 1
	fi
	# A lone newline clears driver_override.
	echo >"$PCI/$1/driver_override"
}

# Bind $1 to driver $2 through driver_override; wait for node $3.
bind() {
	unbind "$1" || return 1
	echo "$2" >"$PCI/$1/driver_override" || return 1
	echo "$1" >/sys/bus/pci/drivers_probe 2>/dev/null
	wait_for "[ \"\$(dev_driver $1)\" = $2 ] && [ -c $3 ]" 50
}

# Unload what is loaded of the modules named, in the order given.
unload() {
	for m in "$@"; do
		loaded "$m" || continue
		rmmod "$m" || return 1
	done
	return 0
}

vfio_nodes() { echo /dev/vfio/*; }

dmesg_tail() { dmesg | tail -n 5 | tr '\n' '|'; }

# One run of vfio-bench: backend, round; the remaining arguments of the
# script go to vfio-bench.  Repetitions are numbered across rounds.
run_bench() {
	b=$1
	r=$2
	shift 2
	"$BENCH" --backend "$b" --dev "$DEV" --reps "$reps" \
		--first-rep "$(( (r - 1) * reps + 1 ))" "$@"
}

# DPDK testpmd forwarding between the two e1000e through backend $1's
# vfio-pci (tests/bench/testpmd.sh), one repetition per round: the
# figure is a rate over seconds, not a count of operations, so more
# repetitions would only lengthen the run.  Without the NICs or the
# script (another machine profile) it is said once and skipped.
run_testpmd() {	# backend, round
	if ! [ -f /opt/testpmd.sh ] || ! [ -d "$PCI/0000:00:06.0" ]; then
		[ "$2" = 1 ] && say "INFO testpmd: no /opt/testpmd.sh or no e1000e at 00:06.0: no testpmd row"
		return 0
	fi
	sh /opt/testpmd.sh --backend "$1" --driver vfio-pci --rep "$2" \
		--seconds "$TESTPMD_SECONDS"
}

# The kernel's iommufd path, with the device still bound to its vfio-pci:
# the vfio cdev of the device, /dev/iommu, an IOAS.  A kernel without
# CONFIG_VFIO_DEVICE_CDEV (Debian's own) has no cdev: said once, and not
# a failure.  6.1 already has the vfio-dev/vfioN directory, but no "dev"
# in it: only a cdev has a device number.
phase_iommufd() {	# round, vfio-bench options...
	vdev=$(ls "$PCI/$DEV/vfio-dev" 2>/dev/null)
	if [ -z "$vdev" ] || ! [ -e "$PCI/$DEV/vfio-dev/$vdev/dev" ]; then
		[ "$1" = 1 ] && say "INFO iommufd: $(uname -r) has no vfio cdev (CONFIG_IOMMUFD, CONFIG_VFIO_DEVICE_CDEV): no iommufd rows"
		return 0
	fi
	cdev=/dev/vfio/devices/$vdev
	wait_for "[ -c /dev/iommu ] && [ -c $cdev ]" 50 ||
		{ fail iommufd "no /dev/iommu or no $cdev"; return 1; }
	run_bench iommufd "$@"
	rc_iommufd=$?
	say "BENCH-PHASE iommufd $rc_iommufd"
	return "$rc_iommufd"
}

# The distribution's VFIO: unload ours (both have a module named vfio),
# insmod its modules in their numbered order, bind, run, undo.  Returns 2
# when the modules could not be unloaded again (nothing else can run).
phase_intree() {	# round, vfio-bench options...
	r=$1
	shift
	ok=1
	if ! unload vfio_pci vfio; then
		fail intree "rmmod of our vfio_pci/vfio failed: $(dmesg_tail)"
		return 2
	fi
	for ko in "$INTREE"/*.ko; do
		[ -f "$ko" ] || { fail intree "no modules in $INTREE"; ok=0; break; }
		case $ko in
		*vfio_iommu_type1.ko) param=dma_entry_limit=$DMA_ENTRY_LIMIT ;;
		*) param= ;;
		esac
		# shellcheck disable=SC2086  # $param is empty or one word
		if ! out=$(insmod "$ko" $param 2>&1); then
			fail intree "insmod $ko $param: $out: $(dmesg_tail)"
			ok=0
			break
		fi
	done
	rc=1
	if [ "$ok" = 1 ]; then
		[ "$r" = 1 ] && say "INFO intree modules: $(awk '$1 ~ /vfio|irqbypass/ {printf "%s ", $1}' /proc/modules)"
		if bind "$DEV" vfio-pci "/dev/vfio/$GROUP"; then
			run_bench intree "$r" "$@"
			rc=$?
			say "BENCH-PHASE intree $rc"
			phase_iommufd "$r" "$@" || rc=1
			run_testpmd intree "$r" || rc=1
		else
			fail intree "$DEV not bound to vfio-pci (driver '$(dev_driver "$DEV")', nodes $(vfio_nodes)): $(dmesg_tail)"
		fi
		unbind "$DEV" || { fail intree "unbind $DEV from vfio-pci"; rc=1; }
	fi
	# shellcheck disable=SC2086  # a list of module names
	if ! unload $INTREE_MODS; then
		fail intree "rmmod of the in-kernel VFIO failed: $(dmesg_tail)"
		return 2
	fi
	return "$rc"
}

# Bind the device to our driver under name $2, wait for node $3, run
# backend $1 (round $4, then vfio-bench options), unbind.  Either name
# makes the group and with it both its nodes (src/vfio_group.c); the
# container run binds through "vfio-pci" because that is how its users bind.
run_ours() {
	b=$1
	drv=$2
	node=$3
	r=$4
	shift 4
	rc=1
	if bind "$DEV" "$drv" "$node"; then
		run_bench "$b" "$r" "$@"
		rc=$?
		say "BENCH-PHASE $b $rc"
	else
		fail "$b" "$DEV not bound to $drv (driver '$(dev_driver "$DEV")', nodes $(vfio_nodes)): $(dmesg_tail)"
	fi
	unbind "$DEV" || { fail "$b" "unbind $DEV from $drv"; rc=1; }
	return "$rc"
}

# Our modules, seed ABI then container ABI.  A failed seed run does not
# keep the container one from running: each says for itself what went wrong.
phase_ours() {	# round, vfio-bench options...
	if ! out=$(modprobe vfio_pci 2>&1); then
		fail ours "modprobe vfio_pci: $out: $(dmesg_tail)"
		fail container "modprobe vfio_pci: $out"
		return 1
	fi
	# Own names: sh has no locals, and run_ours sets $r, $rc and $b.
	ours_round=$1
	shift
	ours_rc=0
	run_ours ours vfio "/dev/vfio/pci:$GROUP" "$ours_round" "$@" ||
		ours_rc=1
	run_ours container vfio-pci "/dev/vfio/$GROUP" "$ours_round" "$@" ||
		ours_rc=1
	run_testpmd container "$ours_round" || ours_rc=1
	return "$ours_rc"
}

say "INFO guest $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, $(awk '/MemTotal/ {print $2 / 1024 " MiB"}' /proc/meminfo), $(cat /proc/sys/vm/nr_hugepages) huge pages, $rounds rounds of $reps repetitions"

GROUP=$(dev_group "$DEV") || { fail all "$DEV has no IOMMU group"; exit 1; }
status=0
round=1
while [ "$round" -le "$rounds" ]; do
	say "INFO round $round of $rounds"
	phase_intree "$round" "$@"
	case $? in
	0) ;;
	2) exit 1 ;;
	*) status=1 ;;
	esac
	phase_ours "$round" "$@" || status=1
	round=$((round + 1))
done
exit "$status"
