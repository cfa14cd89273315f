# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the autopkgtest scripts in debian/tests.  Every check prints
# one "check: ..." line saying what it looked at and what it found, so
# the log reads as a transcript; the first failed check prints "FAIL:"
# with the evidence and ends the test with a non-zero status.
#
# The testbed is the QEMU machine of tests/autopkgtest/qemu-tcg.sh: two
# edu devices (1234:11e8), a pci-serial (1b36:0002, driver "serial") and
# an e1000 (8086:100e, driver "e1000").  Devices are found by their IDs,
# never by slot, so the tests also run on another machine with them.

set -euo pipefail

EDU_ID=1234:11e8
SERIAL_ID=1b36:0002
E1000_ID=8086:100e
TEST_USER=vfiotest	# owns the first edu device
OTHER_USER=vfioother	# owns the second one; must not reach the first
CONF=/etc/vfio/devices.conf
# Where the tests remember what they saw before vfio took the devices:
# it must survive the reboot of the boot-binding test.
STATE=/var/lib/vfio-autopkgtest

say() { echo "check: $*"; }
fail() {
	echo "FAIL: $*"
	echo "FAIL: $*" >&2
	exit 1
}
note() { echo "note: $*"; }
indent() { sed 's/^/    /'; }

# A step that must succeed: show the command, its output, and stop on
# failure with its status.
run() {
	local rc=0
	echo "+ $*"
	"$@" || rc=$?
	[ "$rc" -eq 0 ] || fail "'$*' exited $rc"
}

pci_id() {
	local d=/sys/bus/pci/devices/$1
	printf '%s:%s\n' "$(sed 's/^0x//' "$d/vendor")" \
		"$(sed 's/^0x//' "$d/device")"
}

# Addresses of the devices with vendor:device $1, sorted.
devices_with_id() {
	local d
	for d in /sys/bus/pci/devices/*; do
		[ "$(pci_id "${d##*/}")" = "$1" ] && echo "${d##*/}"
	done | sort
	return 0
}

driver_of() {
	local l=/sys/bus/pci/devices/$1/driver
	if [ -L "$l" ]; then
		basename "$(readlink "$l")"
	else
		echo none
	fi
}

group_of() {
	local l=/sys/bus/pci/devices/$1/iommu_group
	[ -L "$l" ] || fail "$1 has no IOMMU group: is intel_iommu=on?"
	basename "$(readlink "$l")"
}

# A testbed without the devices (another CI's machine) cannot run the
# device tests: they are "skippable" and exit 77 with the reason.
skip_test() {
	echo "skip: $*"
	echo "skip: $*" >&2
	exit 77
}

# Our modules exist only where DKMS found the running kernel's headers.
# A generic CI testbed (ci.debian.net) may boot a kernel without them:
# the tests that need the modules skip there, and the build itself is
# autodep8's autopkgtest-pkg-dkms (Testsuite in debian/control), which
# installs headers first.
need_headers() {
	local build
	build=/lib/modules/$(uname -r)/build
	[ -e "$build" ] ||
		skip_test "no headers for the running kernel $(uname -r) ($build): DKMS built nothing to test"
}

# The devices the tests configure, as shell variables: EDU1 EDU2 SERIAL
# E1000.
find_devices() {
	local edus why=
	mapfile -t edus < <(devices_with_id "$EDU_ID")
	[ ${#edus[@]} -ge 2 ] ||
		why="two edu devices ($EDU_ID), found ${#edus[@]}"
	EDU1=${edus[0]:-}
	EDU2=${edus[1]:-}
	SERIAL=$(devices_with_id "$SERIAL_ID" | head -n 1)
	E1000=$(devices_with_id "$E1000_ID" | head -n 1)
	[ -n "$SERIAL" ] || why="${why:+$why, }a pci-serial ($SERIAL_ID)"
	[ -n "$E1000" ] || why="${why:+$why, }an e1000 ($E1000_ID)"
	[ -z "$why" ] ||
		skip_test "this machine lacks $why: run it in the QEMU machine of tests/autopkgtest/qemu-tcg.sh"
	say "devices: edu $EDU1 and $EDU2, pci-serial $SERIAL, e1000 $E1000"
}

# Our packages are the binary packages built from this source tree.
our_source() {
	sed -n 's/^Source:[[:space:]]*//p' debian/control | head -n 1
}
our_packages() {
	local src
	src=$(our_source)
	dpkg-query -W -f '${db:Status-Status} ${Package} ${source:Package}\n' |
		awk -v s="$src" '$1 == "installed" && $3 == s { print $2 }'
}

# PACKAGE_NAME and PACKAGE_VERSION of the installed DKMS source.
dkms_module() {
	local conf pkg
	for pkg in $(our_packages); do
		conf=$(dpkg -L "$pkg" | grep -E '^/usr/src/[^/]+/dkms\.conf$' |
		       head -n 1) || true
		[ -n "$conf" ] && break
	done
	[ -n "${conf:-}" ] || fail "no /usr/src/*/dkms.conf in $(our_packages | xargs)"
	export DKMS_CONF=$conf
	DKMS_NAME=$(sed -n 's/^PACKAGE_NAME=["'\'']\{0,1\}\([^"'\'']*\).*/\1/p' "$conf")
	DKMS_VERSION=$(sed -n 's/^PACKAGE_VERSION=["'\'']\{0,1\}\([^"'\'']*\).*/\1/p' "$conf")
	[ -n "$DKMS_NAME" ] || fail "no PACKAGE_NAME in $conf"
	[ -n "$DKMS_VERSION" ] ||
		fail "cannot read PACKAGE_NAME/PACKAGE_VERSION from $conf"
}

# The config files and binaries the packaging ships.
find_tools() {
	VFIOCTL=$(command -v vfioctl) ||
		fail "vfioctl is not on PATH ($PATH)"
	UNIT=$(for p in $(our_packages); do dpkg -L "$p"; done |
	       grep -E '^/(usr/)?lib/systemd/system/[^/]+\.service$' |
	       head -n 1 | xargs -r basename) || true
	[ -n "$UNIT" ] || fail "our packages ship no systemd service"
}

# Is module file $1 in directory $2 (updates/dkms, kernel/drivers/vfio)
# of the running kernel's modules?  On a merged /usr (Debian 13)
# /lib/modules is a link to /usr/lib/modules and tools may name either.
in_moddir() {
	case ${1#/usr} in
	/lib/modules/"$(uname -r)"/"$2"/*) return 0 ;;
	esac
	return 1
}

# The file of in-tree module $1 (e.g. vfio, pci/vfio-pci) of the running
# kernel, compressed or not (Debian 13's are .ko.xz); nothing if the
# kernel has none.
intree_file() {
	local f
	for f in "/lib/modules/$(uname -r)/kernel/drivers/vfio/$1".ko*; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 0
}

# The kernel's own module $1 (vfio) wherever it is: in place, or set
# aside by dkms.  dkms 3.2 (Debian 13) moves an in-tree module that has
# the name of one it installs to /var/lib/dkms/<module>/original_module/
# <kernel>/<arch>/ and puts it back when it uninstalls ours; Debian's
# dkms 3.0 leaves it in place.
intree_or_archived() {
	local f
	f=$(intree_file "$1")
	if [ -z "$f" ]; then
		for f in /var/lib/dkms/*/original_module/"$(uname -r)"/*/"$1".ko*; do
			[ -e "$f" ] && break
			f=
		done
	fi
	[ -z "$f" ] || echo "$f"
}

# Whether the running kernel was built with an in-tree vfio module.
kernel_has_intree_vfio() {
	grep -q '^CONFIG_VFIO=m' "/boot/config-$(uname -r)" 2>/dev/null
}

# The dkms version, as a number: "3.2.2".
dkms_version() {
	dkms --version 2>/dev/null | sed -n 's/^dkms-\{0,1\}\([0-9][0-9.]*\).*/\1/p' | head -n 1
}

# No kernel warning, oops or lockup since boot: a test that passed while
# the kernel complained has not passed.
check_kernel_log() {
	local bad
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|soft lockup|hard LOCKUP|blocked for more than|Kernel panic' || true)
	[ -z "$bad" ] || fail "kernel log has: $bad"
	say "kernel log: no warning, BUG, oops or lockup since boot"
}

# Create the two unprivileged users (idempotent).
make_users() {
	local u
	for u in "$TEST_USER" "$OTHER_USER"; do
		id "$u" >/dev/null 2>&1 || useradd --create-home "$u"
	done
	say "users $TEST_USER ($(id -u "$TEST_USER")) and $OTHER_USER ($(id -u "$OTHER_USER")) exist"
}

# Remember each device's driver before vfio is involved, once.
record_drivers() {
	local d
	mkdir -p "$STATE"
	for d in "$EDU1" "$EDU2" "$SERIAL" "$E1000"; do
		[ -f "$STATE/$d.driver" ] && continue
		driver_of "$d" >"$STATE/$d.driver"
	done
	say "drivers before vfio: $EDU1=$(cat "$STATE/$EDU1.driver")" \
	    "$EDU2=$(cat "$STATE/$EDU2.driver")" \
	    "$SERIAL=$(cat "$STATE/$SERIAL.driver")" \
	    "$E1000=$(cat "$STATE/$E1000.driver")"
}

# The configuration every test after boot-binding relies on: the first
# edu by address for the test user, the second by address for the other
# user, the pci-serial by vendor:device (so it is taken away from its
# host driver); the e1000 is left out.
write_conf() {
	mkdir -p "${CONF%/*}"
	cat >"$CONF" <<EOF
# Written by the vfio-dkms autopkgtest.
$EDU1	owner=$TEST_USER group=$TEST_USER mode=0660
$EDU2	owner=$OTHER_USER mode=0600
$SERIAL_ID
EOF
	say "wrote $CONF:"
	indent <"$CONF"
}

# stat of the group node of device $1: "owner:group mode".
node_of() {
	echo "/dev/vfio/pci:$(group_of "$1")"
}
node_stat() {
	stat -c '%U:%G %a %F' "$(node_of "$1")"
}

# Make sure the devices are set up as boot-binding leaves them, for a test
# run on its own (autopkgtest --test-name).
ensure_bound() {
	local d
	for d in "$EDU1" "$EDU2" "$SERIAL"; do
		if [ "$(driver_of "$d")" != vfio ] || ! grep -q . "$CONF" 2>/dev/null; then
			note "$d is not on vfio (test run on its own?): configuring now"
			make_users
			record_drivers
			write_conf
			run "$VFIOCTL" apply
			run udevadm settle
			break
		fi
	done
	for d in "$EDU1" "$EDU2" "$SERIAL"; do
		[ "$(driver_of "$d")" = vfio ] ||
			fail "$d is on $(driver_of "$d"), not vfio"
	done
	say "$EDU1, $EDU2 and $SERIAL are bound to vfio"
}

# Where the boot spent its time: the three longest pauses in the kernel
# log, and the initramfs's fsck of the root file system, if it ran one.
boot_profile() {
	note "$(systemd-analyze time 2>/dev/null | head -n 1 || true)"
	dmesg | awk -F'[][]' '
		{ t = $2 + 0
		  if (NR > 1 && t - prev > 2) printf "%8.1f s before: %s\n", t - prev, $0
		  prev = t }' | sort -rn | head -n 3 | sed 's/^ */note: pause of /'
	if [ -s /run/initramfs/fsck.log ]; then
		sed 's/^/note: initramfs fsck: /' /run/initramfs/fsck.log | tail -n 3
	fi
}
