#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of `make bench` (busybox sh, run by tests/bench/run.sh through
# tests/vm/run-suite.sh --no-bind --run).  In one boot it runs
# /opt/vfio-bench first against the distribution's own VFIO (the modules
# in /opt/intree-vfio/, container ABI, vfio-pci), then, after unloading
# those, against ours (vfio.ko + vfio_pci.ko, group ABI, driver "vfio").
# Arguments are passed to both vfio-bench runs.
#
# Output: vfio-bench's BENCH/ERROR/INFO lines, plus
#   BENCH-PHASE <backend> <rc>      a backend's run ended with status rc
#   ERROR <backend> setup: <what>   the backend could not be set up
# No `set -e`: when one backend cannot be set up the other still runs, and
# the devices are put back either way.  Exit status 0 only when both ran
# cleanly.
set -u

DEV=0000:00:02.0		# edu0
PCI=/sys/bus/pci/devices
BENCH=/opt/vfio-bench
INTREE=/opt/intree-vfio
# The in-kernel type1 refuses more than 65535 mappings per container by
# default; row 3 makes 100000.
DMA_ENTRY_LIMIT=200000

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

run_bench() {	# backend, args...
	b=$1
	shift
	"$BENCH" --backend "$b" --dev "$DEV" "$@"
	rc=$?
	say "BENCH-PHASE $b $rc"
	return "$rc"
}

say "INFO guest $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, $(awk '/MemTotal/ {print $2 / 1024 " MiB"}' /proc/meminfo), $(cat /proc/sys/vm/nr_hugepages) huge pages"

status=0
g=$(dev_group "$DEV") || { fail all "$DEV has no IOMMU group"; exit 1; }

# ---- the distribution's VFIO ------------------------------------------
intree_ok=1
# /init loaded ours; both have a module named vfio.
if ! unload vfio_pci vfio; then
	fail intree "rmmod of our vfio_pci/vfio failed: $(dmesg_tail)"
	intree_ok=0
fi
if [ "$intree_ok" = 1 ]; then
	for ko in "$INTREE"/*.ko; do
		[ -f "$ko" ] || { fail intree "no modules in $INTREE"; intree_ok=0; break; }
		case $ko in
		*vfio_iommu_type1.ko) param=dma_entry_limit=$DMA_ENTRY_LIMIT ;;
		*) param= ;;
		esac
		# shellcheck disable=SC2086  # $param is empty or one word
		if ! out=$(insmod "$ko" $param 2>&1); then
			fail intree "insmod $ko $param: $out: $(dmesg_tail)"
			intree_ok=0
			break
		fi
	done
fi
if [ "$intree_ok" = 1 ]; then
	say "INFO intree modules: $(awk '$1 ~ /vfio|irqbypass/ {printf "%s ", $1}' /proc/modules)"
	if bind "$DEV" vfio-pci "/dev/vfio/$g"; then
		run_bench intree "$@" || status=1
	else
		fail intree "$DEV not bound to vfio-pci (driver '$(dev_driver "$DEV")', /dev/vfio: $(vfio_nodes)): $(dmesg_tail)"
		status=1
	fi
	unbind "$DEV" || { fail intree "unbind $DEV from vfio-pci"; status=1; }
else
	status=1
fi
if ! unload vfio_pci vfio_pci_core vfio_iommu_type1 vfio_virqfd vfio \
	    irqbypass; then
	fail ours "rmmod of the in-kernel VFIO failed: $(dmesg_tail)"
	exit 1
fi

# ---- ours ---------------------------------------------------------------
if ! out=$(modprobe vfio_pci 2>&1); then
	fail ours "modprobe vfio_pci: $out: $(dmesg_tail)"
	exit 1
fi
if bind "$DEV" vfio "/dev/vfio/pci:$g"; then
	run_bench ours "$@" || status=1
else
	fail ours "$DEV not bound to vfio (driver '$(dev_driver "$DEV")', /dev/vfio: $(vfio_nodes)): $(dmesg_tail)"
	status=1
fi
unbind "$DEV" || { fail ours "unbind $DEV from vfio"; status=1; }
exit "$status"
