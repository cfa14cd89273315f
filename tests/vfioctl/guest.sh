#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# vfioctl against the real kernel with our modules, inside the test VM
# (busybox, root, run by tests/vfioctl/run.sh with --no-bind).  The
# edu devices start on pci-stub, a real host driver to take them from and
# give them back to.  Lines starting with "# " are the transcript.
# busybox ash has pipefail, POSIX sh does not.
# shellcheck disable=SC3040
set -euo pipefail

V=/opt/vfioctl
P=/sys/bus/pci/devices
CONF=/tmp/devices.conf
EDU0=0000:00:02.0
EDU1=0000:00:03.0
TESTDEV=0000:00:04.0
PORT=0000:00:05.0
EDU2=0000:01:00.0

ok() { echo "ok - vfioctl-vm/$1"; }
nok() { echo "not ok - vfioctl-vm/$1: $2"; }

# Show a command and its output in the transcript; its status is kept.
show() {
	r=0
	echo "# \$ $*"
	"$@" >/tmp/show.out 2>&1 || r=$?
	sed 's/^/#   /' /tmp/show.out
	echo "#   (exit $r)"
	return $r
}

drv() {
	if [ -L "$P/$1/driver" ]; then
		basename "$(readlink "$P/$1/driver")"
	else
		echo -
	fi
}
grp() { basename "$(readlink "$P/$1/iommu_group")"; }
ovr() { cat "$P/$1/driver_override"; }

# want NAME CONDITION-TEXT: report the last test's result.
check() {
	if [ "$2" = "" ]; then ok "$1"; else nok "$1" "$2"; fi
}

modprobe vfio_pci 2>/dev/null || true
modprobe pci-stub 2>/dev/null || true
echo "1234 11e8" >/sys/bus/pci/drivers/pci-stub/new_id 2>/dev/null || true
for d in $EDU0 $EDU1 $EDU2; do
	[ "$(drv "$d")" = pci-stub ] || echo "$d" >/sys/bus/pci/drivers/pci-stub/bind
done
G0=$(grp $EDU0)
GT=$(grp $TESTDEV)

# The nointremap machine (run.sh --machine nointremap): vfio_pci refuses
# every device there, so only doctor's finding about it is checked.
if ! grep -q ' IR-' /proc/interrupts; then
	rc=0
	show $V doctor $EDU0 || rc=$?
	why=
	[ $rc -eq 5 ] || why="exit $rc, want 5"
	grep -Eq '^fail +host +intremap +interrupt remapping is off' \
		/tmp/show.out || why="$why; no intremap fail"
	grep -q 'fix: enable interrupt remapping in the firmware' \
		/tmp/show.out || why="$why; no fix"
	check doctor-intremap-off "$why"
	exit 0
fi

why=
[ -d /sys/bus/pci/drivers/vfio ] || why="no vfio driver"
[ "$(drv $EDU0)" = pci-stub ] || why="$why; edu0 on $(drv $EDU0)"
[ "$(drv $PORT)" = pcieport ] || why="$why; root port on $(drv $PORT)"
check setup "$why"

show $V list || true
why=
# The last two columns: no network interface, no name (no pci.ids here).
grep -Eq "^$EDU0 +1234:11e8 +00ff00 +$G0 +pci-stub +no +no +- +-\$" /tmp/show.out ||
	why="edu0 line wrong"
grep -Eq "^$TESTDEV .* $GT +- +yes " /tmp/show.out || why="$why; testdev line"
check list "$why"

$V --json list >/tmp/list.json || true
n=$(find $P/ -mindepth 1 -maxdepth 1 | wc -l)
if [ "$(grep -o '"address"' /tmp/list.json | wc -l)" -eq "$n" ]; then
	ok list-json
else
	nok list-json "not $n devices"
fi

# bind and unbind through a real driver
rc=0
show $V bind $EDU0 || rc=$?
why=
[ $rc -eq 0 ] || why="exit $rc"
[ "$(drv $EDU0)" = vfio ] || why="$why; on $(drv $EDU0)"
[ "$(ovr $EDU0)" = vfio ] || why="$why; override $(ovr $EDU0)"
[ "$(cat /run/vfio/$EDU0.driver 2>/dev/null)" = pci-stub ] ||
	why="$why; state not pci-stub"
[ -c "/dev/vfio/pci:$G0" ] || why="$why; no /dev/vfio/pci:$G0"
check bind "$why"

rc=0
show $V unbind $EDU0 || rc=$?
why=
[ $rc -eq 0 ] || why="exit $rc"
[ "$(drv $EDU0)" = pci-stub ] || why="$why; on $(drv $EDU0)"
[ "$(ovr $EDU0)" = "(null)" ] || why="$why; override $(ovr $EDU0)"
[ ! -e "/run/vfio/$EDU0.driver" ] || why="$why; state left"
check unbind-restores "$why"

# A process with the group open (as QEMU or DPDK keeps it): unbind names
# it and refuses, --force takes the device and says from whom.
$V bind $EDU0 >/dev/null 2>&1 || true
sh -c "exec 3<>/dev/vfio/pci:$G0; exec sleep 300" &
holder=$!
i=0
while [ "$(readlink /proc/$holder/fd/3 2>/dev/null)" != "/dev/vfio/pci:$G0" ] &&
      [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
rc=0
show $V unbind $EDU0 || rc=$?
why=
[ $rc -eq 6 ] || why="exit $rc, want 6"
grep -q "$EDU0: refused: in use by PID $holder (sleep)" /tmp/show.out ||
	why="$why; holder not named"
[ "$(drv $EDU0)" = vfio ] || why="$why; on $(drv $EDU0)"
check unbind-refuses-held "$why"
rc=0
show $V --force unbind $EDU0 || rc=$?
why=
[ $rc -eq 0 ] || why="exit $rc"
grep -q "$EDU0: taking it from PID $holder (sleep) (forced)" /tmp/show.out ||
	why="$why; not said"
[ "$(drv $EDU0)" = pci-stub ] || why="$why; on $(drv $EDU0)"
check unbind-force-takes-held "$why"
kill $holder 2>/dev/null || true
wait $holder 2>/dev/null || true

# A real probe failure (vfio refuses bridges): undone, back on pcieport.
rc=0
show $V bind $PORT || rc=$?
why=
[ $rc -eq 3 ] || why="exit $rc, want 3"
[ "$(drv $PORT)" = pcieport ] || why="$why; on $(drv $PORT)"
[ "$(ovr $PORT)" = "(null)" ] || why="$why; override $(ovr $PORT)"
[ ! -e "/run/vfio/$PORT.driver" ] || why="$why; state left"
check bind-failure-restores "$why"

# check with errors, line numbered
cat >$CONF <<EOC
# devices for the VM test
0000:00:1f.2 owner=0
$EDU0 owner=nobody-here mode=0886
EOC
rc=0
show $V -c $CONF check || rc=$?
why=
[ $rc -eq 1 ] || why="exit $rc"
grep -q "devices.conf:3: unknown user \"nobody-here\"" /tmp/show.out ||
	why="$why; no unknown user at line 3"
grep -q "devices.conf:3: bad mode \"0886\"" /tmp/show.out ||
	why="$why; no bad mode at line 3"
grep -q "devices.conf:2: IOMMU group .* of 0000:00:1f.2 also holds" \
	/tmp/show.out || why="$why; no unconfigured member at line 2"
check check-errors "$why"

# apply: one device by address with ownership, one by vendor:device
cat >$CONF <<EOC
$EDU0 owner=user group=user mode=0660
1b36:0005
EOC
if show $V -c $CONF check; then ok check-valid; else nok check-valid "failed"; fi
rc=0
show $V -c $CONF apply || rc=$?
why=
[ $rc -eq 0 ] || why="exit $rc"
[ "$(drv $EDU0)" = vfio ] || why="$why; edu0 on $(drv $EDU0)"
[ "$(drv $TESTDEV)" = vfio ] || why="$why; testdev on $(drv $TESTDEV)"
[ "$(drv $EDU1)" = pci-stub ] || why="$why; unconfigured edu1 moved"
check apply "$why"

# What the udev rule would import, applied the way udev does.
show $V -c $CONF udev-owner "pci:$G0" || true
why=
grep -qx "VFIO_OWNER=user" /tmp/show.out || why="no VFIO_OWNER=user"
grep -qx "VFIO_MODE=0660" /tmp/show.out || why="$why; no VFIO_MODE=0660"
check udev-owner "$why"
# An unconfigured group's node is root's alone, said in full: udev keeps
# no field of an earlier, wider configuration.
$V -c $CONF udev-owner "pci:$GT" >/tmp/owner-t || true
check udev-owner-unconfigured "$(printf 'VFIO_OWNER=root\nVFIO_GROUP=root\nVFIO_MODE=0600\n' |
	cmp -s - /tmp/owner-t || tr '\n' ' ' </tmp/owner-t)"
eval "$(sed -n 's/^\(VFIO_[A-Z]*\)=\([a-z0-9]*\)$/\1=\2/p' /tmp/show.out)"
chown "${VFIO_OWNER:-root}:${VFIO_GROUP:-root}" "/dev/vfio/pci:$G0"
chmod "${VFIO_MODE:-0600}" "/dev/vfio/pci:$G0"
if show $V -c $CONF status; then ok status; else nok status "differs"; fi

# The configured user opens its group, not the other one (root 0600).
if su -s /bin/sh user -c "exec 3<>/dev/vfio/pci:$G0" 2>/tmp/su.err; then
	ok user-opens-own-group
else
	nok user-opens-own-group "$(cat /tmp/su.err)"
fi
if su -s /bin/sh user -c "exec 3<>/dev/vfio/pci:$GT" 2>/tmp/su.err; then
	nok user-refused-other-group "opened /dev/vfio/pci:$GT"
else
	ok user-refused-other-group
fi

# hotplug helper with the driver loaded
echo "$EDU1" >>$CONF
show $V -c $CONF udev-claim $EDU1 || true
why=
grep -qx VFIO_CLAIMED=1 /tmp/show.out || why="no VFIO_CLAIMED=1"
[ "$(drv $EDU1)" = vfio ] || why="$why; on $(drv $EDU1)"
[ "$(cat /run/vfio/$EDU1.driver 2>/dev/null)" = pci-stub ] ||
	why="$why; state not pci-stub"
check udev-claim "$why"

# apply with a failing device: the others are still bound
printf '%s\n' "$EDU2" "$PORT" >$CONF
rc=0
show $V -c $CONF apply || rc=$?
why=
[ $rc -eq 2 ] || why="exit $rc, want 2"
[ "$(drv $EDU2)" = vfio ] || why="$why; edu2 on $(drv $EDU2)"
[ "$(drv $PORT)" = pcieport ] || why="$why; root port on $(drv $PORT)"
check apply-partial "$why"

rc=0
show $V unbind-all || rc=$?
why=
[ $rc -eq 0 ] || why="exit $rc"
for d in $EDU0 $EDU1 $EDU2; do
	[ "$(drv "$d")" = pci-stub ] || why="$why; $d on $(drv "$d")"
done
[ "$(drv $TESTDEV)" = - ] || why="$why; testdev on $(drv $TESTDEV)"
# Only the lock file that serializes vfioctl stays.
left=
for f in /run/vfio/*; do
	[ -e "$f" ] && [ "${f##*/}" != lock ] && left="$left ${f##*/}"
done
[ -z "$left" ] || why="$why; state left: $left"
check unbind-all "$why"

# doctor, with the in-tree block installed as the package does.
mkdir -p /lib/modprobe.d /usr/lib/vfio-dkms /etc/security
cp /opt/vfio-dkms.conf /lib/modprobe.d/
cp /opt/intree-guard /usr/lib/vfio-dkms/
chmod 0755 /usr/lib/vfio-dkms/intree-guard
: >/tmp/empty.conf

# A device alone in its group on a sane host: no finding fails.
rc=0
show $V -c /tmp/empty.conf doctor $TESTDEV || rc=$?
why=
[ $rc -eq 0 ] || why="exit $rc"
! grep -q '^fail' /tmp/show.out || why="$why; a finding fails"
for c in iommu intremap modules loaded intree secureboot config; do
	grep -Eq "^ok +host +$c " /tmp/show.out || why="$why; $c not ok"
done
grep -Eq "^ok +$TESTDEV +group +IOMMU group $GT: 1 device" /tmp/show.out ||
	why="$why; group not ok"
check doctor-normal "$why"

# The ICH9 functions share a group: every member with its driver, why.
# i2c-i801 (when the kernel has it) puts a host driver on 00:1f.3.
modprobe i2c_i801 2>/dev/null || true
show $V -c /tmp/empty.conf doctor 0000:00:1f.2 || true
why=
if [ "$(drv 0000:00:1f.3)" != - ]; then
	grep -Eq "^fail +0000:00:1f.2 +member +0000:00:1f.3 .* is on the host driver $(drv 0000:00:1f.3): it blocks the group" \
		/tmp/show.out || why="host driver of 00:1f.3 not blocking"
fi
for m in 0000:00:1f.0 0000:00:1f.3; do
	grep -Eq "^(ok|fail) +0000:00:1f.2 +member +$m \(8086:[0-9a-f]{4}\) of group [0-9]+ is on " \
		/tmp/show.out || why="$why; member $m not listed"
done
grep -Eq '^warn +0000:00:1f.2 +shape +.*multi-function device 0000:00:1f' \
	/tmp/show.out || why="$why; no explanation"
grep -q 'built into the chipset: assign the whole group' /tmp/show.out ||
	why="$why; no honest fix"
check doctor-ich9-group "$why"

# A device on a host driver (edu0 is back on pci-stub).
show $V -c /tmp/empty.conf doctor $EDU0 || true
why=
grep -Eq "^warn +$EDU0 +driver +bound to the host driver pci-stub; fix: vfioctl bind $EDU0" \
	/tmp/show.out || why="no driver warning"
grep -Eq "^ok +$EDU0 +irq +MSI" /tmp/show.out || why="$why; no MSI found"
check doctor-host-driver "$why"

# A non-root owner whose RLIMIT_MEMLOCK is far below what it will map.
printf '%s\n' "user soft memlock 64" "user hard memlock 128" \
	>/etc/security/limits.conf
echo "$EDU0 owner=user" >/tmp/doctor.conf
rc=0
show $V -c /tmp/doctor.conf --memlock-for 1G doctor $EDU0 || rc=$?
why=
[ $rc -eq 5 ] || why="exit $rc, want 5"
grep -Eq "^fail +$EDU0 +memlock +owner user: RLIMIT_MEMLOCK 64 KiB \(hard 128 KiB\) from /etc/security/limits.conf:1" \
	/tmp/show.out || why="$why; no memlock fail"
grep -q '"user - memlock 1048576"' /tmp/show.out || why="$why; no fix"
check doctor-memlock "$why"
rm -f /etc/security/limits.conf

if show $V -c /opt/devices.conf check; then
	ok default-config
else
	nok default-config "shipped devices.conf rejected"
fi
exit 0
