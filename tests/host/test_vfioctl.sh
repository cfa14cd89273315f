#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# vfioctl against a fake sysfs tree: bind/unbind/restore, rollback on
# every failing step, viability, check, status, apply, the udev helpers
# and the JSON output.  $VFIOCTL is vfioctl linked with fake_kernel.c;
# $1 is a scratch directory.  One "ok - vfioctl/<case>" line per case.
set -euo pipefail

: "${VFIOCTL:?set VFIOCTL to the fake-kernel vfioctl}"
PYTHON=${PYTHON:-python3}
scratch=${1:?usage: test_vfioctl.sh SCRATCH-DIR}
uid=$(id -u)
gid=$(id -g)

# --- the fake tree ----------------------------------------------------

mkdrv() {
	local name=$1 id
	shift
	mkdir -p "$S/bus/pci/drivers/$name"
	: >"$S/bus/pci/drivers/$name/bind"
	: >"$S/bus/pci/drivers/$name/unbind"
	: >"$S/bus/pci/drivers/$name/ids"
	for id in "$@"; do
		echo "$id" >>"$S/bus/pci/drivers/$name/ids"
	done
}

# mkdev ADDR VENDOR:DEVICE CLASS GROUP|- DRIVER|-
mkdev() {
	local d=$S/bus/pci/devices/$1
	mkdir -p "$d"
	echo "0x${2%:*}" >"$d/vendor"
	echo "0x${2#*:}" >"$d/device"
	echo "0x$3" >"$d/class"
	echo "(null)" >"$d/driver_override"
	if [ "$4" != - ]; then
		mkdir -p "$S/kernel/iommu_groups/$4/devices"
		ln -s "$S/kernel/iommu_groups/$4" "$d/iommu_group"
		ln -s "$d" "$S/kernel/iommu_groups/$4/devices/$1"
	fi
	if [ "$5" != - ]; then
		ln -s "$S/bus/pci/drivers/$5" "$d/driver"
		ln -s "$d" "$S/bus/pci/drivers/$5/$1"
	fi
}

# mknet ADDR IF OPERSTATE FLAGS: a network interface of a PCI device.
mknet() {
	local n=$S/bus/pci/devices/$1/net/$2
	mkdir -p "$n" "$S/class/net"
	echo "$3" >"$n/operstate"
	echo "$4" >"$n/flags"
	ln -s "$S/bus/pci/devices/$1" "$n/device"
	ln -s "$n" "$S/class/net/$2"
}

# mkdisk ADDR NAME MAJ:MIN [PART MAJ:MIN]: a disk behind a PCI device.
mkdisk() {
	local h=$S/bus/pci/devices/$1/host0/target0:0:0/0:0:0:0
	local b=$h/block/$2
	mkdir -p "$b/holders" "$S/block"
	echo "$3" >"$b/dev"
	ln -s "$h" "$b/device"
	ln -s "$b" "$S/block/$2"
	if [ $# -gt 3 ]; then
		mkdir -p "$b/$4/holders"
		echo "$5" >"$b/$4/dev"
		echo 1 >"$b/$4/partition"
	fi
}

# Every case starts from the same tree, at the same path: the first
# call builds it and keeps a copy, the others restore that copy (its
# symlinks are absolute, into $scratch/case).  Building it costs some
# forty processes; a copy, two.
fresh_tree() {
	T=$scratch/case
	S=$T/sys
	CONF=$T/devices.conf
	STATE=$T/run
	DEV=$T/dev
	LOG=$T/log
	P=$T/proc
	rm -rf "$T"
	if [ -d "$scratch/template" ]; then
		cp -a "$scratch/template" "$T"
		return
	fi
	mkdir -p "$S/bus/pci/devices" "$DEV" "$P/net" "$P/self"
	printf 'Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n' \
		>"$P/net/route"
	: >"$P/net/ipv6_route"
	: >"$P/self/mountinfo"
	printf 'Filename\tType\tSize\tUsed\tPriority\n' >"$P/swaps"
	: >"$P/consoles"
	: >"$S/bus/pci/drivers_probe"
	: >"$LOG"
	mkdrv vfio
	mkdrv e1000e 8086:10d3
	mkdrv uio_edu 1234:11e8
	mkdrv lpc_ich 8086:2918
	mkdrv i801_smbus 8086:2930
	mkdev 0000:00:00.0 8086:29c0 060000 0 -
	mkdev 0000:00:02.0 8086:10d3 020000 1 e1000e
	mkdev 0000:00:03.0 1234:11e8 00ff00 2 uio_edu
	mkdev 0000:00:04.0 1234:11e8 00ff00 3 -
	mkdev 0000:00:1f.0 8086:2918 060100 4 lpc_ich
	mkdev 0000:00:1f.3 8086:2930 0c0500 4 i801_smbus
	mkdev 0000:00:05.0 1b36:0001 060400 5 -
	mkdev 0000:01:00.0 1234:11e8 00ff00 5 -
	mkdev 0000:00:06.0 8086:10d3 020000 - e1000e
	cp -a "$T" "$scratch/template"
}

vf() {
	FAKE_SYSFS=$S FAKE_LOG=$LOG "$VFIOCTL" --sysfs-root "$S" \
		--config "$CONF" --state-dir "$STATE" --dev-dir "$DEV" \
		--proc-root "$P" --pci-ids "$T/pci.ids" "$@"
}

# --- assertions: each prints why on stderr and fails --------------------

die() { echo "$*" >&2; exit 1; }

# rc WANT CMD...: run CMD with stdout/stderr in $T/out/$T/err, check rc.
rc() {
	local want=$1 got=0
	shift
	"$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" -eq "$want" ] ||
		die "\"$*\" exited $got, want $want: $(tr '\n' ' ' <"$T/err")"
}

driver_of() {
	local l=$S/bus/pci/devices/$1/driver
	if [ -L "$l" ]; then basename "$(readlink "$l")"; else echo -; fi
}

want_driver() {
	local got
	got=$(driver_of "$1")
	[ "$got" = "$2" ] || die "$1 is on $got, want $2"
}

want_override() {
	local got
	got=$(cat "$S/bus/pci/devices/$1/driver_override")
	[ "$got" = "$2" ] || die "$1 driver_override is \"$got\", want \"$2\""
}

want_state() {
	local f=$STATE/$1.driver
	if [ "$2" = absent ]; then
		[ ! -e "$f" ] || die "state file $f left behind: $(cat "$f")"
	else
		[ -f "$f" ] || die "no state file for $1"
		[ "$(cat "$f")" = "$2" ] ||
			die "state of $1 is \"$(cat "$f")\", want \"$2\""
	fi
}

want_in() {
	grep -qF -- "$2" "$1" || die "no \"$2\" in $1: $(tr '\n' ' ' <"$1")"
}

want_not_in() {
	! grep -qF -- "$2" "$1" || die "unexpected \"$2\" in $1"
}

want_no_writes() {
	[ ! -s "$LOG" ] || die "wrote to sysfs: $(tr '\n' ';' <"$LOG")"
}

conf() { printf '%s\n' "$@" >"$CONF"; }

# --- runner ---------------------------------------------------------------

run() {
	local name=$1 why
	if why=$( (fresh_tree && "case_$name") 2>&1 >/dev/null); then
		echo "ok - vfioctl/$name"
	else
		echo "not ok - vfioctl/$name: $(echo "$why" | tail -n 1)"
	fi
}

# --- cases ----------------------------------------------------------------

case_list_text() {
	rc 0 vf list
	grep -Eq '^0000:00:02\.0 +8086:10d3 +020000 +1 +e1000e +no +no +- +-$' \
		"$T/out" || die "00:02.0 line wrong: $(grep 00:02.0 "$T/out")"
	grep -Eq '^0000:00:04\.0 .* 3 +- +yes ' "$T/out" ||
		die "unbound device not viable"
	grep -Eq '^0000:01:00\.0 .* 5 +- +yes ' "$T/out" ||
		die "group with a bridge not viable"
	grep -Eq '^0000:00:1f\.3 .* 4 +i801_smbus +no ' "$T/out" ||
		die "host-driven group viable"
	grep -Eq '^0000:00:06\.0 .* - +e1000e +- ' "$T/out" ||
		die "groupless device wrong"
	[ "$(grep -c '^0000:' "$T/out")" -eq 9 ] || die "not 9 devices"
}

case_list_viable_after_bind() {
	rc 0 vf bind 0000:00:1f.0
	rc 0 vf list
	grep -Eq '^0000:00:1f\.0 .* vfio +no ' "$T/out" ||
		die "group 4 viable with 1f.3 still on a host driver"
	rc 0 vf bind 0000:00:1f.3
	rc 0 vf list
	grep -Eq '^0000:00:1f\.3 .* vfio +yes ' "$T/out" ||
		die "group 4 not viable with all members on vfio"
}

case_list_json() {
	conf "0000:00:04.0"
	rc 0 vf --json list
	"$PYTHON" - "$T/out" <<'PY' || die "json check failed"
import json, sys
d = {x["address"]: x for x in json.load(open(sys.argv[1]))}
assert len(d) == 9, len(d)
a = d["0000:00:04.0"]
assert a["iommu_group"] == 3 and a["driver"] is None and a["viable"] is True
assert a["configured"] is True and a["id"] == "1234:11e8", a
b = d["0000:00:02.0"]
assert b["driver"] == "e1000e" and b["viable"] is False
assert b["configured"] is False and b["class"] == "020000", b
c = d["0000:00:06.0"]
assert c["iommu_group"] is None and c["viable"] is None, c
assert d["0000:00:05.0"]["bridge"] is True
PY
}

case_json_escaping() {
	mkdrv 'we"ird\drv'
	rm "$S/bus/pci/devices/0000:00:04.0/driver" 2>/dev/null || true
	ln -s "$S/bus/pci/drivers/we\"ird\\drv" \
		"$S/bus/pci/devices/0000:00:04.0/driver"
	rc 0 vf --json list
	"$PYTHON" - "$T/out" <<'PY' || die "escaped json wrong"
import json, sys
d = {x["address"]: x for x in json.load(open(sys.argv[1]))}
assert d["0000:00:04.0"]["driver"] == 'we"ird\\drv'
PY
}

# Modes and classes are strings, as the text shows them; net is an array.
case_json_types() {
	conf "0000:00:02.0 mode=0640"
	mknet 0000:00:02.0 eth0 down 0x1002
	mknet 0000:00:02.0 'e,1' down 0x1002
	rc 0 vf bind 0000:00:02.0
	: >"$DEV/pci:1"
	chmod 0640 "$DEV/pci:1"
	: >"$DEV/pci:9"
	chmod 0604 "$DEV/pci:9"
	rc 0 vf list
	grep -Eq '^0000:00:02\.0 +8086:10d3 +020000 .* e,1,eth0 ' "$T/out" ||
		die "text: $(grep 00:02.0 "$T/out")"
	rc 0 vf --json list
	"$PYTHON" - "$T/out" <<'PY' || die "list json types wrong"
import json, sys
d = {x["address"]: x for x in json.load(open(sys.argv[1]))}
a = d["0000:00:02.0"]
assert a["class"] == "020000" and a["net"] == ["e,1", "eth0"], a
assert d["0000:00:00.0"]["class"] == "060000", d["0000:00:00.0"]
assert d["0000:00:04.0"]["net"] == [], d["0000:00:04.0"]
PY
	rc 5 vf --json status
	"$PYTHON" - "$T/out" <<'PY' || die "status json types wrong"
import json, sys
s = json.load(open(sys.argv[1]))
a = s["devices"][0]
assert a["want"]["mode"] == "0640" and a["node"]["mode"] == "0640", a
o = s["other_nodes"][0]
assert o["iommu_group"] == 9 and o["mode"] == "0604", o
PY
}

# want_json_utf8 FILE: FILE is strict UTF-8 JSON; prints what it holds.
want_json_utf8() {
	"$PYTHON" -c 'import json, sys
print(json.dumps(json.loads(open(sys.argv[1], "rb").read().decode())))' \
		"$1" >"$T/json" || die "not UTF-8 JSON: $(od -c "$1" | head -n 5)"
}

# pci.ids names longer than the buffers are cut between characters, and
# the JSON writer replaces what is not UTF-8 as a decoder would (U+FFFD
# for each maximal invalid sequence), leaving valid UTF-8 alone.
case_json_utf8() {
	local a b i addrs drvs
	a=$(printf '%094d' 0 | tr 0 a)
	b=$(printf '%0125d' 0 | tr 0 b)
	printf '%s\n' "1234  ${a}é" "	11e8  ${b}€ edu" >"$T/pci.ids"
	# Driver names are what sysfs holds: any bytes.
	addrs=(0000:00:00.0 0000:00:05.0 0000:00:1f.0 0000:00:1f.3)
	drvs=($'bad\xff\xc0\xaf' $'cut\xe2\x82' $'sur\xed\xa0\x80\xf4\x90\x80\x80'
		$'ok-\xc3\xa9\xe2\x82\xac\xf0\x9f\x90\xa7')
	for i in 0 1 2 3; do
		mkdrv "${drvs[i]}"
		ln -sfn "$S/bus/pci/drivers/${drvs[i]}" \
			"$S/bus/pci/devices/${addrs[i]}/driver"
	done
	rc 0 vf list
	grep -a "^0000:00:04\.0 " "$T/out" >"$T/line"
	"$PYTHON" -c 'import sys; open(sys.argv[1], "rb").read().decode()' \
		"$T/line" || die "text names not UTF-8: $(cat "$T/line")"
	grep -q "  $a $b\$" "$T/line" || die "names: $(cat "$T/line")"
	rc 0 vf --json list
	want_json_utf8 "$T/out"
	"$PYTHON" - "$T/json" "$a" "$b" <<'PY' || die "json names wrong"
import json, sys
d = {x["address"]: x for x in json.load(open(sys.argv[1]))}
a, b = sys.argv[2], sys.argv[3]
assert d["0000:00:04.0"]["vendor_name"] == a, d["0000:00:04.0"]
assert d["0000:00:04.0"]["device_name"] == b, d["0000:00:04.0"]
for addr, raw in (("0000:00:00.0", b"bad\xff\xc0\xaf"),
                  ("0000:00:05.0", b"cut\xe2\x82"),
                  ("0000:00:1f.0", b"sur\xed\xa0\x80\xf4\x90\x80\x80"),
                  ("0000:00:1f.3", b"ok-\xc3\xa9\xe2\x82\xac\xf0\x9f\x90\xa7")):
    want = raw.decode("utf-8", "replace")
    assert d[addr]["driver"] == want, (addr, d[addr]["driver"], want)
PY
	# Every writer of JSON goes through the same code: doctor too.
	rc 5 vf --json doctor 0000:00:00.0
	want_json_utf8 "$T/out"
}

case_bind_from_driver() {
	rc 0 vf bind 0000:00:02.0
	want_driver 0000:00:02.0 vfio
	want_override 0000:00:02.0 vfio
	want_state 0000:00:02.0 e1000e
	printf '%s\n' \
		"bus/pci/devices/0000:00:02.0/driver_override vfio" \
		"bus/pci/drivers/e1000e/unbind 0000:00:02.0" \
		"bus/pci/drivers/vfio/bind 0000:00:02.0" >"$T/want"
	cmp -s "$T/want" "$LOG" || die "writes: $(tr '\n' ';' <"$LOG")"
}

case_unbind_restores() {
	rc 0 vf bind 0000:00:02.0
	rc 0 vf unbind 0000:00:02.0
	want_driver 0000:00:02.0 e1000e
	want_override 0000:00:02.0 "(null)"
	want_state 0000:00:02.0 absent
}

case_bind_idempotent() {
	rc 0 vf bind 0000:00:02.0
	: >"$LOG"
	rc 0 vf bind 0000:00:02.0
	want_no_writes
	want_in "$T/out" "already bound"
}

case_bind_unbound_device() {
	rc 0 vf bind 0000:00:04.0
	want_driver 0000:00:04.0 vfio
	want_state 0000:00:04.0 "(none)"
	rc 0 vf unbind 0000:00:04.0
	want_driver 0000:00:04.0 -
	want_override 0000:00:04.0 "(null)"
	want_not_in "$LOG" drivers_probe
	want_state 0000:00:04.0 absent
}

# Each failing step of a bind: the device ends where it started.
restored_after() {
	rc 3 env FAKE_FAIL="$1" "$VFIOCTL_SELF" bind 0000:00:02.0
	want_driver 0000:00:02.0 e1000e
	want_override 0000:00:02.0 "(null)"
	want_state 0000:00:02.0 absent
	want_in "$T/err" "restored to e1000e"
}

case_bind_fail_override() {
	restored_after bus/pci/devices/0000:00:02.0/driver_override
	want_not_in "$LOG" unbind
}

case_bind_fail_unbind() {
	restored_after bus/pci/drivers/e1000e/unbind
}

case_bind_fail_bind() {
	restored_after bus/pci/drivers/vfio/bind
}

case_bind_silently_not_bound() {
	rc 3 env FAKE_NOOP=bus/pci/drivers/vfio/bind "$VFIOCTL_SELF" \
		bind 0000:00:02.0
	want_in "$T/err" "did not end up on vfio"
	want_driver 0000:00:02.0 e1000e
	want_override 0000:00:02.0 "(null)"
}

case_bind_restore_fails() {
	rc 4 env FAKE_FAIL=bus/pci/drivers/vfio/bind,bus/pci/drivers/e1000e/bind \
		"$VFIOCTL_SELF" bind 0000:00:02.0
	want_in "$T/err" "could not be restored"
	want_in "$T/err" "binding back to e1000e"
	# What it needs to be given back by hand is still recorded.
	want_state 0000:00:02.0 e1000e
}

case_bind_no_vfio_driver() {
	rm -rf "$S/bus/pci/drivers/vfio"
	rc 3 vf bind 0000:00:02.0
	want_in "$T/err" "modprobe vfio_pci"
	want_no_writes
	want_driver 0000:00:02.0 e1000e
}

case_bind_no_iommu_group() {
	rc 3 vf bind 0000:00:06.0
	want_in "$T/err" "no IOMMU group"
	want_no_writes
}

case_bind_bad_args() {
	rc 3 vf bind 0000:00:09.0
	want_in "$T/err" "no such PCI device"
	rc 1 vf bind zz
	rc 1 vf bind
	rc 1 vf frobnicate
	want_no_writes
}

# --- the command line -------------------------------------------------------

# want_usage MESSAGE ARGS...: ARGS is a usage error, told in one line on
# stderr that points to --help, nothing on stdout, exit 1 (2 would mean
# that some devices failed) and nothing written.
want_usage() {
	local msg=$1
	shift
	rc 1 vf "$@"
	[ ! -s "$T/out" ] || die "\"$*\" printed: $(head -n 3 "$T/out")"
	[ "$(wc -l <"$T/err")" -eq 1 ] ||
		die "\"$*\" took $(wc -l <"$T/err") lines: $(head -n 3 "$T/err")"
	[ "$(cat "$T/err")" = "vfioctl: $msg; see vfioctl --help" ] ||
		die "\"$*\" said: $(cat "$T/err")"
	want_no_writes
}

case_usage_one_line() {
	want_usage "unknown verb 'frobnicate'" frobnicate
	want_usage "missing verb"
	want_usage "unknown option '--frob'" --frob list
	want_usage "unknown option '--frob'" --frob=1 list
	want_usage "unknown option '-x'" -x list
	want_usage "ambiguous option '--d'" --d /tmp list
	want_usage "unknown option '-x'" -fx bind 0000:00:02.0
	want_usage "--config needs an argument" list --config
	want_usage "-c needs an argument" list -c
	want_usage "--force takes no argument" --force=yes bind 0000:00:02.0
	want_usage "list takes no arguments" list 0000:00:02.0
	want_usage "missing argument: udev-claim DEVICE" udev-claim
	want_usage "too many arguments: udev-owner pci:N" udev-owner pci:1 pci:2
	want_usage "missing argument: bind DEVICE... [owner= group= mode= force]" \
		bind
	want_usage "--wait 5s: not a number of seconds (0 to 3600)" \
		apply --wait 5s
	want_usage "--memlock-for 4X: not a size (like 4G or 512M)" \
		--memlock-for 4X doctor
	want_usage "--boot loads the vfio driver: not with --dry-run" \
		apply --boot --dry-run
	# The help itself goes to stdout, whole, and succeeds.
	rc 0 vf --help
	[ ! -s "$T/err" ] || die "--help wrote to stderr: $(cat "$T/err")"
	want_in "$T/out" "usage: vfioctl"
	want_in "$T/out" "udev-claim DEVICE"
	rc 0 vf list --help
	want_in "$T/out" "usage: vfioctl"
}

# Each verb takes the options its line of the verb table gives it and
# refuses the others, naming the verbs that do take them.
case_verb_options() {
	want_usage "--json only goes with list, status, check or doctor" \
		--json bind 0000:00:02.0
	want_usage "--class only goes with list" --class net status
	want_usage "--save only goes with bind or unbind" --save apply
	want_usage "--memlock-for only goes with doctor" --memlock-for 4G list
	want_usage "--force only goes with apply, bind, unbind, unbind-all or udev-claim" \
		-f status
	want_usage "--dry-run only goes with apply" -n bind 0000:00:02.0
	want_usage "--boot only goes with apply" --boot status
	want_usage "--wait only goes with apply" --wait 0 check
	want_driver 0000:00:02.0 e1000e
	# Where they belong, and the options every verb takes.
	rc 0 vf --json --class net list
	rc 0 vf --json status
	rc 0 vf -f --save bind 0000:00:04.0
	rc 0 vf --save unbind 0000:00:04.0
	rc 0 vf -n apply
	rc 0 vf --force udev-claim 0000:00:04.0
	rc 0 vf --udev-data "$T" --root / -c "$CONF" unbind-all
	want_driver 0000:00:04.0 -
}

# No function of the tool is longer than 80 lines, its signature
# included: kernel style, a "{" and a "}" alone at the start of a line.
case_function_length() {
	local f
	for f in "$here"/../../tools/*/*.[ch]; do
		awk -v file="${f##*/}" '
			/^[A-Za-z_]/ { head = FNR; name = $0 }
			/^\{$/ { start = head; what = name }
			/^\}$/ && start {
				if (FNR - start + 1 > 80) {
					sub(/\(.*/, "", what)
					sub(/.*[ *]/, "", what)
					printf "%s: %s is %d lines\n", file, what,
					       FNR - start + 1
					bad = 1
				}
				start = 0
			}
			END { exit bad }' "$f" >>"$T/long" || true
	done
	[ ! -s "$T/long" ] || die "$(tr '\n' ';' <"$T/long")"
}

case_bind_several_partial() {
	rc 2 vf bind 0000:00:02.0 0000:00:09.0
	want_driver 0000:00:02.0 vfio
}

case_unbind_not_bound() {
	rc 3 vf unbind 0000:00:02.0
	want_in "$T/err" "not bound to vfio"
	want_no_writes
}

case_unbind_falls_back_to_probe() {
	rc 0 vf bind 0000:00:02.0
	rc 0 env FAKE_FAIL=bus/pci/drivers/e1000e/bind "$VFIOCTL_SELF" \
		unbind 0000:00:02.0
	want_in "$LOG" "bus/pci/drivers_probe 0000:00:02.0"
	want_driver 0000:00:02.0 e1000e
	want_state 0000:00:02.0 absent
}

case_unbind_fail_keeps_vfio() {
	rc 0 vf bind 0000:00:02.0
	rc 3 env FAKE_FAIL=bus/pci/drivers/vfio/unbind "$VFIOCTL_SELF" \
		unbind 0000:00:02.0
	want_driver 0000:00:02.0 vfio
	want_state 0000:00:02.0 e1000e
}

case_unbind_all() {
	rc 0 vf bind 0000:00:02.0 0000:00:04.0 0000:00:03.0
	rc 0 vf unbind-all
	want_driver 0000:00:02.0 e1000e
	want_driver 0000:00:03.0 uio_edu
	want_driver 0000:00:04.0 -
	for a in 0000:00:02.0 0000:00:03.0 0000:00:04.0; do
		want_override "$a" "(null)"
		want_state "$a" absent
	done
	: >"$LOG"
	rc 0 vf unbind-all
	want_no_writes
}

# hold PID COMM NODE...: process PID (named COMM) has NODEs open.
hold() {
	local pid=$1 comm=$2 fd=3
	shift 2
	mkdir -p "$P/$pid/fd"
	echo "$comm" >"$P/$pid/comm"
	for node in "$@"; do
		ln -s "$node" "$P/$pid/fd/$fd"
		fd=$((fd + 1))
	done
}

case_unbind_refuses_held() {
	rc 0 vf bind 0000:00:02.0
	hold 4242 qemu-system-x86 /dev/null /dev/vfio/vfio /dev/vfio/pci:1
	: >"$LOG"
	rc 6 vf unbind 0000:00:02.0
	want_in "$T/err" "0000:00:02.0: refused: in use by PID 4242 (qemu-system-x86) (stop it first, or force to take it anyway)"
	want_no_writes
	want_driver 0000:00:02.0 vfio
	want_state 0000:00:02.0 e1000e
}

case_unbind_force_takes_held() {
	rc 0 vf bind 0000:00:02.0
	hold 4242 dpdk-testpmd /dev/vfio/1
	hold 4250 qemu-system-x86 /dev/vfio/pci:1
	rc 0 vf --force unbind 0000:00:02.0
	want_in "$T/err" "0000:00:02.0: taking it from PID 4242 (dpdk-testpmd), PID 4250 (qemu-system-x86) (forced)"
	want_driver 0000:00:02.0 e1000e
}

case_unbind_names_three_holders() {
	rc 0 vf bind 0000:00:02.0
	for pid in 900 31 2000 100; do
		hold "$pid" "worker$pid" /dev/vfio/pci:1
	done
	rc 6 vf unbind 0000:00:02.0
	want_in "$T/err" "in use by PID 31 (worker31), PID 100 (worker100), PID 900 (worker900) and 1 more (stop"
}

case_unbind_other_groups_not_held() {
	rc 0 vf bind 0000:00:02.0
	# Group 12's nodes and the container node say nothing of group 1.
	hold 4242 qemu-system-x86 /dev/vfio/pci:12 /dev/vfio/12 /dev/vfio/vfio
	rc 0 vf unbind 0000:00:02.0
	want_driver 0000:00:02.0 e1000e
}

case_unbind_all_leaves_held() {
	rc 0 vf bind 0000:00:02.0 0000:00:03.0
	hold 77 dpdk-testpmd /dev/vfio/pci:2
	: >"$LOG"
	rc 6 vf unbind-all
	want_in "$T/err" "0000:00:03.0: refused: in use by PID 77 (dpdk-testpmd)"
	# All or none: the package's removal stops here, nothing moved.
	want_no_writes
	want_driver 0000:00:02.0 vfio
	want_driver 0000:00:03.0 vfio
	want_state 0000:00:03.0 uio_edu
	rc 0 vf --force unbind-all
	want_in "$T/err" "0000:00:03.0: taking it from PID 77 (dpdk-testpmd) (forced)"
	want_driver 0000:00:02.0 e1000e
	want_driver 0000:00:03.0 uio_edu
}

case_unbind_all_forgets_unplugged() {
	rc 0 vf bind 0000:00:04.0
	rm -rf "$S/bus/pci/devices/0000:00:04.0"
	rc 0 vf unbind-all
	want_state 0000:00:04.0 absent
	want_in "$T/out" "0000:00:04.0: gone, forgot its state"
}

case_apply_binds_config() {
	conf "# test" "0000:00:02.0 owner=$uid mode=0600" "1234:11e8"
	rc 0 vf apply
	for a in 0000:00:02.0 0000:00:03.0 0000:00:04.0 0000:01:00.0; do
		want_driver "$a" vfio
	done
	want_driver 0000:00:05.0 -
	want_driver 0000:00:1f.0 lpc_ich
	want_in "$T/out" "0000:00:02.0: bound to vfio (was e1000e)"
	want_in "$T/out" "apply: 4 bound, 0 failed"
}

case_apply_partial() {
	conf "0000:00:02.0" "1234:11e8"
	rc 2 env FAKE_FAIL=bus/pci/drivers/uio_edu/unbind "$VFIOCTL_SELF" apply
	want_driver 0000:00:02.0 vfio
	want_driver 0000:00:03.0 uio_edu
	want_override 0000:00:03.0 "(null)"
	want_driver 0000:00:04.0 vfio
	want_driver 0000:01:00.0 vfio
	want_in "$T/out" "apply: 3 bound, 1 failed"
}

case_apply_absent_device() {
	conf "0000:00:09.0" "0000:00:02.0"
	rc 2 vf apply
	want_in "$T/err" "0000:00:09.0 is not present"
	want_driver 0000:00:02.0 vfio
}

case_apply_config_error_changes_nothing() {
	conf "0000:00:02.0" "0000:00:04.0 mode=0999"
	rc 1 vf apply
	want_in "$T/err" "devices.conf:2: bad mode"
	want_in "$T/err" "nothing changed"
	want_no_writes
}

case_apply_conflict_changes_nothing() {
	conf "0000:00:1f.0 owner=0" "0000:00:1f.3 owner=1"
	rc 1 vf apply
	want_no_writes
}

case_apply_missing_config() {
	rc 0 vf apply
	want_no_writes
}

case_apply_retriggers_node() {
	mkdir -p "$S/class/vfio/pci:3"
	: >"$S/class/vfio/pci:3/uevent"
	conf "0000:00:04.0 owner=$uid"
	rc 0 vf apply
	want_in "$LOG" "class/vfio/pci:3/uevent change"
}

# --- apply --boot (vfio-bind.service) ------------------------------------

# A modprobe that only records its calls in $T/modprobe.calls, named by
# VFIOCTL_MODPROBE and first in $PATH (so that a vfioctl that ignored the
# variable would still never load a module here), and a udev database
# in $U.
boot_tree() {
	U=$T/udev
	mkdir -p "$U" "$T/bin"
	printf '#!/bin/sh\necho "$*" >>"%s"\n' "$T/modprobe.calls" \
		>"$T/bin/modprobe"
	chmod +x "$T/bin/modprobe"
}

bvf() {
	PATH=$T/bin:$PATH VFIOCTL_MODPROBE=$T/bin/modprobe \
		vf --udev-data "$U" "$@"
}

udev_done() {
	local a
	for a in "$@"; do
		: >"$U/+pci:$a"
	done
}

want_modprobe_calls() {
	local n=0
	[ ! -e "$T/modprobe.calls" ] || n=$(wc -l <"$T/modprobe.calls")
	[ "$n" -eq "$1" ] || die "modprobe called $n times, want $1"
	[ "$1" -eq 0 ] || [ "$(sort -u "$T/modprobe.calls")" = "-q vfio_pci" ] ||
		die "modprobe called as: $(tr '\n' ';' <"$T/modprobe.calls")"
}

# Nothing configured: no module loaded (no taint), no lock, no write.
case_boot_nothing_configured() {
	boot_tree
	conf "# only comments" "" "   # and blank lines" "	"
	rc 0 bvf apply --boot
	want_in "$T/out" "no devices configured"
	want_modprobe_calls 0
	want_no_writes
	[ ! -e "$STATE" ] || die "state directory made: $(ls "$STATE")"
	rm "$CONF"
	rc 0 bvf apply --boot --wait 1
	want_modprobe_calls 0
	want_no_writes
}

case_boot_ready_device() {
	boot_tree
	conf "0000:00:02.0"
	udev_done 0000:00:02.0
	SECONDS=0
	rc 0 bvf apply --boot
	[ "$SECONDS" -le 5 ] || die "took $SECONDS s for a device udev had done"
	want_modprobe_calls 1
	want_not_in "$T/err" "not processed by udev"
	want_driver 0000:00:02.0 vfio
	want_in "$T/out" "apply: 1 bound, 0 failed"
}

case_boot_gives_up_on_unprocessed_device() {
	boot_tree
	conf "0000:00:02.0" "0000:00:04.0"
	udev_done 0000:00:02.0
	SECONDS=0
	rc 0 bvf apply --boot --wait 1
	[ "$SECONDS" -le 5 ] || die "took $SECONDS s with --wait 1"
	want_in "$T/err" "0000:00:04.0: not processed by udev after 1 s (no $U/+pci:0000:00:04.0)"
	want_not_in "$T/err" "0000:00:02.0"
	[ "$(grep -c 'not processed by udev' "$T/err")" -eq 1 ] ||
		die "more than one line: $(tr '\n' ' ' <"$T/err")"
	want_modprobe_calls 1
	# It goes on: both are applied, the one udev had not done too.
	want_driver 0000:00:02.0 vfio
	want_driver 0000:00:04.0 vfio
	want_in "$T/out" "apply: 2 bound, 0 failed"
}

# A vendor:device line waits for the devices it matches, an address line
# also for a device not there (yet); a line that selects nothing present
# loads nothing.
case_boot_waits_for_selected_devices() {
	boot_tree
	conf "1234:11e8" "0000:00:09.0"
	udev_done 0000:00:03.0 0000:01:00.0 0000:00:02.0
	rc 2 bvf apply --boot --wait 1
	want_in "$T/err" "0000:00:04.0: not processed by udev after 1 s"
	want_in "$T/err" "0000:00:09.0: not processed by udev after 1 s"
	[ "$(grep -c 'not processed by udev' "$T/err")" -eq 2 ] ||
		die "lines for other devices: $(tr '\n' ' ' <"$T/err")"
	want_modprobe_calls 1
	want_in "$T/err" "0000:00:09.0 is not present"
	want_in "$T/out" "apply: 3 bound, 1 failed"

	fresh_tree
	boot_tree
	conf "dead:beef"
	rc 0 bvf apply --boot
	want_modprobe_calls 0
	want_in "$T/out" "apply: 0 bound, 0 failed"
}

# The wait does not hold the state lock: udev's udev-claim needs it to
# finish processing the very devices waited for.
case_boot_waits_outside_the_lock() {
	local i
	boot_tree
	conf "0000:00:04.0"
	mkdir -p "$STATE"
	exec 9>"$STATE/lock"
	flock 9
	PATH=$T/bin:$PATH VFIOCTL_MODPROBE=$T/bin/modprobe "$VFIOCTL_SELF" \
		--udev-data "$U" apply --boot --wait 10 >"$T/p.out" 2>&1 9>&- &
	sleep 0.3
	udev_done 0000:00:04.0
	for i in $(seq 50); do
		[ ! -e "$T/modprobe.calls" ] || break
		sleep 0.1
	done
	want_modprobe_calls 1
	want_driver 0000:00:04.0 -
	exec 9>&-
	wait $! || die "apply --boot failed: $(cat "$T/p.out")"
	want_driver 0000:00:04.0 vfio
}

case_boot_bad_usage() {
	boot_tree
	conf "0000:00:02.0" "0000:00:04.0 mode=0999"
	rc 1 bvf apply --boot
	want_in "$T/err" "nothing changed"
	want_modprobe_calls 0
	want_no_writes
	conf "0000:00:02.0"
	rc 1 bvf --boot list
	want_in "$T/err" "--boot only goes with apply"
	rc 1 bvf --wait 5 status
	rc 1 bvf apply --wait 5s
	want_in "$T/err" "--wait 5s: not a number of seconds"
	rc 1 bvf apply --boot --dry-run
	rc 1 bvf apply --boot 0000:00:02.0
	want_in "$T/err" "apply takes no arguments"
	want_modprobe_calls 0
	want_no_writes
	# Plain apply is as it was: no modprobe, no wait.
	rc 0 bvf apply
	want_modprobe_calls 0
	want_driver 0000:00:02.0 vfio
}

# --- devices the host uses ---------------------------------------------

case_inuse_net_up() {
	mknet 0000:00:02.0 eth0 up 0x1003
	rc 3 vf bind 0000:00:02.0
	want_in "$T/err" "0000:00:02.0: refused: in use by the host: network interface eth0 is up"
	want_no_writes
	want_driver 0000:00:02.0 e1000e
	rc 0 vf --force bind 0000:00:02.0
	want_driver 0000:00:02.0 vfio
}

case_inuse_net_iff_up() {
	mknet 0000:00:02.0 eth0 down 0x1003
	rc 3 vf bind 0000:00:02.0
	want_in "$T/err" "network interface eth0 is up (IFF_UP)"
	want_no_writes
}

case_inuse_net_routes() {
	mknet 0000:00:02.0 eth0 down 0x1002
	printf 'eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n' \
		>>"$P/net/route"
	rc 3 vf bind 0000:00:02.0
	want_in "$T/err" "network interface eth0 carries routes"
	want_no_writes
	printf 'Iface\n' >"$P/net/route"
	echo "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0" \
		>"$P/net/ipv6_route"
	rc 3 vf bind 0000:00:02.0
	want_in "$T/err" "network interface eth0 carries routes"
	: >"$P/net/ipv6_route"
	# Down, no routes: free to take.
	rc 0 vf bind 0000:00:02.0
	want_driver 0000:00:02.0 vfio
}

case_inuse_block_mounted() {
	mkdisk 0000:00:03.0 sda 8:0 sda1 8:1
	echo "29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw" \
		>"$P/self/mountinfo"
	rc 3 vf bind 0000:00:03.0
	want_in "$T/err" "block device sda1 is mounted on /"
	want_no_writes
	# btrfs: an anonymous device number, the source names the disk.
	echo "36 35 0:33 /home /home rw,relatime shared:2 - btrfs /dev/sda1 rw,space_cache=v2" \
		>"$P/self/mountinfo"
	rc 3 vf bind 0000:00:03.0
	want_in "$T/err" "block device sda1 is mounted on /home"
	: >"$P/self/mountinfo"
	printf '/dev/sda1\tpartition\t1024\t0\t-2\n' >>"$P/swaps"
	rc 3 vf bind 0000:00:03.0
	want_in "$T/err" "block device sda1 is in use as swap"
	printf 'Filename\n' >"$P/swaps"
	rc 0 vf bind 0000:00:03.0
	want_driver 0000:00:03.0 vfio
}

case_inuse_block_holders() {
	mkdisk 0000:00:03.0 sdb 8:16
	mkdir "$S/block/sdb/holders/dm-0"
	rc 3 vf bind 0000:00:03.0
	want_in "$T/err" "block device sdb is held by dm-0"
	want_no_writes
	rc 0 vf -f bind 0000:00:03.0
	want_driver 0000:00:03.0 vfio
}

case_inuse_boot_vga() {
	echo 1 >"$S/bus/pci/devices/0000:00:03.0/boot_vga"
	echo 0 >"$S/bus/pci/devices/0000:00:04.0/boot_vga"
	rc 3 vf bind 0000:00:03.0
	want_in "$T/err" "it is the boot VGA device"
	rc 0 vf bind 0000:00:04.0
	want_driver 0000:00:04.0 vfio
}

case_inuse_console() {
	mkdir -p "$S/bus/pci/devices/0000:00:03.0/graphics/fb0" \
		"$S/class/graphics"
	ln -s "$S/bus/pci/devices/0000:00:03.0" \
		"$S/bus/pci/devices/0000:00:03.0/graphics/fb0/device"
	ln -s "$S/bus/pci/devices/0000:00:03.0/graphics/fb0" \
		"$S/class/graphics/fb0"
	rc 0 vf bind 0000:00:03.0
	rc 0 vf unbind 0000:00:03.0
	echo "tty0                 -WU (EC p  )    4:1" >"$P/consoles"
	rc 3 vf bind 0000:00:03.0
	want_in "$T/err" "framebuffer fb0 shows the console (tty0)"
	# A serial console on a PCI serial card.
	mkdir -p "$S/bus/pci/devices/0000:00:04.0/tty/ttyS4" "$S/class/tty"
	ln -s "$S/bus/pci/devices/0000:00:04.0" \
		"$S/bus/pci/devices/0000:00:04.0/tty/ttyS4/device"
	ln -s "$S/bus/pci/devices/0000:00:04.0/tty/ttyS4" "$S/class/tty/ttyS4"
	echo "ttyS4                -W- (E  p a)    4:68" >"$P/consoles"
	rc 3 vf bind 0000:00:04.0
	want_in "$T/err" "it is the console (ttyS4)"
}

# An ID line skips (and says why) what an address line would fail on.
case_inuse_apply_id_line_skips() {
	mknet 0000:00:03.0 eth1 up 0x1003
	conf "1234:11e8"
	rc 0 vf apply
	want_in "$T/err" "0000:00:03.0: skipped: in use by the host: network interface eth1 is up"
	want_driver 0000:00:03.0 uio_edu
	want_driver 0000:00:04.0 vfio
	want_driver 0000:01:00.0 vfio
	want_in "$T/out" "apply: 2 bound, 0 failed, 1 skipped (in use by the host)"
	conf "1234:11e8 force"
	rc 0 vf apply
	want_driver 0000:00:03.0 vfio
}

case_inuse_apply_address_line_fails() {
	mknet 0000:00:02.0 eth0 up 0x1003
	conf "0000:00:02.0" "0000:00:04.0"
	rc 2 vf apply
	want_in "$T/err" "0000:00:02.0: refused: in use by the host"
	want_driver 0000:00:02.0 e1000e
	want_driver 0000:00:04.0 vfio
	rc 0 vf --force apply
	want_driver 0000:00:02.0 vfio
}

case_inuse_udev_claim() {
	mknet 0000:00:02.0 eth0 up 0x1003
	conf "8086:10d3"
	rc 3 vf udev-claim 0000:00:02.0
	[ ! -s "$T/out" ] || die "printed: $(cat "$T/out")"
	want_in "$T/err" "skipped: in use by the host: network interface eth0 is up"
	want_no_writes
	conf "0000:00:02.0 force"
	rc 0 vf udev-claim 0000:00:02.0
	want_in "$T/out" "VFIO_CLAIMED=1"
	want_driver 0000:00:02.0 vfio
}

case_inuse_check_warns() {
	mknet 0000:00:02.0 eth0 up 0x1003
	conf "0000:00:02.0"
	rc 0 vf check
	want_in "$T/err" "devices.conf:1: warning: 0000:00:02.0 is in use by the host (network interface eth0 is up)"
	conf "0000:00:02.0 force"
	rc 0 vf check
	want_not_in "$T/err" "in use"
	conf "0000:00:02.0 force force"
	rc 1 vf check
	want_in "$T/err" "force given twice"
}

# --- driverctl / dpdk-devbind parity ----------------------------------------

case_bind_save() {
	conf "# keep me" "0000:00:02.0 mode=0600   # the NIC" "" "1234:1111"
	cp "$CONF" "$T/orig"
	rc 0 vf bind --save 0000:00:04.0 "owner=$uid" mode=0600
	want_driver 0000:00:04.0 vfio
	want_in "$T/out" "0000:00:04.0: saved in $CONF"
	printf '%s\n' "# keep me" "0000:00:02.0 mode=0600   # the NIC" "" \
		"1234:1111" "0000:00:04.0	owner=$uid mode=0600" >"$T/want"
	cmp -s "$T/want" "$CONF" || die "file: $(cat -A "$CONF")"
	# Again with other options: replaced in place, not added twice.
	rc 0 vf bind --save 00:04.0 "group=$gid" force
	[ "$(grep -c '^0000:00:04.0' "$CONF")" -eq 1 ] || die "$(cat "$CONF")"
	want_in "$CONF" "0000:00:04.0	group=$gid force"
	rc 0 vf check
	# unbind --save removes just that line.
	rc 0 vf unbind --save 0000:00:04.0
	want_driver 0000:00:04.0 -
	cmp -s "$T/orig" "$CONF" || die "after unbind: $(cat -A "$CONF")"
	# A vendor:device line is not the device's own: said, not removed.
	conf "1234:11e8"
	rc 0 vf bind 0000:00:04.0
	rc 0 vf unbind --save 0000:00:04.0
	want_in "$T/err" "still matched by 1234:11e8 at $CONF:1"
	want_in "$CONF" "1234:11e8"
}

case_bind_save_validates() {
	conf "# keep me"
	cp "$CONF" "$T/orig"
	rc 3 vf bind --save 0000:00:04.0 owner=no-such-user-vfio
	want_in "$T/err" "the edited file would be invalid"
	want_no_writes
	cmp -s "$T/orig" "$CONF" || die "file changed: $(cat "$CONF")"
	rc 3 vf bind --save 0000:00:04.0 mode=0999
	cmp -s "$T/orig" "$CONF" || die "file changed: $(cat "$CONF")"
	# Options need --save; a failed bind saves nothing.
	rc 1 vf bind 0000:00:04.0 mode=0600
	rc 3 env FAKE_FAIL=bus/pci/drivers/vfio/bind "$VFIOCTL_SELF" \
		bind --save 0000:00:04.0
	cmp -s "$T/orig" "$CONF" || die "saved a failed bind: $(cat "$CONF")"
	local left
	for left in "$T"/*devices.conf.vfioctl*; do
		if [ -e "$left" ]; then
			die "temporary file left: $(ls "$T")"
		fi
	done
}

case_list_net_and_class() {
	mknet 0000:00:02.0 eth0 up 0x1003
	mkdir -p "$S/bus/pci/devices/0000:00:06.0/virtio0/net/eth1"
	ln -s "$S/bus/pci/devices/0000:00:06.0/virtio0/net/eth1" \
		"$S/class/net/eth1"
	rc 0 vf list
	grep -Eq '^0000:00:02\.0 .* eth0 +-$' "$T/out" ||
		die "no eth0: $(grep 00:02.0 "$T/out")"
	grep -Eq '^0000:00:06\.0 .* eth1 +-$' "$T/out" ||
		die "nested interface: $(grep 00:06.0 "$T/out")"
	rc 0 vf list --class net
	[ "$(grep -c '^0000:' "$T/out")" -eq 2 ] ||
		die "net: $(cat "$T/out")"
	rc 0 vf list --class bridge
	[ "$(grep -c '^0000:' "$T/out")" -eq 3 ] ||
		die "bridge: $(cat "$T/out")"
	rc 0 vf list --class serial-bus
	[ "$(grep -c '^0000:' "$T/out")" -eq 1 ] ||
		die "serial-bus: $(cat "$T/out")"
	rc 0 vf --json list --class net
	"$PYTHON" - "$T/out" <<'PY' || die "json net wrong"
import json, sys
d = {x["address"]: x for x in json.load(open(sys.argv[1]))}
assert set(d) == {"0000:00:02.0", "0000:00:06.0"}, d
assert d["0000:00:02.0"]["net"] == ["eth0"], d
PY
	rc 1 vf list --class frobs
	want_in "$T/err" "--class frobs: unknown; one of storage, net, "
	[ "$(wc -l <"$T/err")" -eq 1 ] || die "not one line: $(cat "$T/err")"
}

case_apply_dry_run() {
	mkdir -p "$S/class/vfio/pci:3"
	: >"$S/class/vfio/pci:3/uevent"
	mknet 0000:00:03.0 eth1 up 0x1003
	conf "0000:00:02.0" "1234:11e8" "0000:00:09.0"
	rc 2 vf apply --dry-run
	want_no_writes
	[ ! -e "$STATE" ] || die "state directory made: $(ls "$STATE")"
	want_in "$T/out" "0000:00:02.0: would bind to vfio (was e1000e)"
	want_in "$T/out" "0000:00:03.0: would skip: in use by the host: network interface eth1 is up"
	want_in "$T/out" "0000:00:04.0: would bind to vfio (was no driver)"
	want_in "$T/out" "0000:00:09.0: would fail: not present"
	want_in "$T/out" "3 would be bound, 1 would fail, 1 would be skipped, 1 group node would be updated"
	want_driver 0000:00:02.0 e1000e
	rc 1 vf bind --dry-run 0000:00:02.0
	want_no_writes
}

# The completion script, with bash-completion's _init_completion stubbed.
case_bash_completion() {
	local script=$here/../../tools/vfioctl/bash-completion/vfioctl
	bash -c '
		compopt() { :; }
		_filedir() { :; }
		_init_completion() {
			words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
			cur=${words[cword]}; prev=${words[cword-1]}
		}
		. "$1"
		try() {
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			_vfioctl; echo "${COMPREPLY[*]}"
		}
		try vfioctl b
		try vfioctl --class n
		try vfioctl --json list --cl
		try vfioctl -c /x bind --save 0000:00:02.0 ow
		try vfioctl d
		try vfioctl --memlock-for 4G doctor --me
		try vfioctl check --syn
	' _ "$script" >"$T/compl" 2>&1 || die "script failed: $(cat "$T/compl")"
	printf '%s\n' bind net --class owner= doctor --memlock-for --syntax \
		>"$T/want"
	cmp -s "$T/want" "$T/compl" || die "completed: $(tr '\n' '|' <"$T/compl")"
}

case_list_names() {
	# As in the real file, comments also stand inside a vendor's list.
	printf '%s\n' "# pci.ids" "1234  QEMU" "	11e8  edu device" \
		"		1af4 1100  subsystem" "8086  Intel Corporation" \
		"	1000  82542 Gigabit Ethernet Controller (Fiber)" \
		"# and registers common to both SPs" "" \
		"	10d3  82574L Gigabit Network Connection" \
		"C 02  Network controller" "	00  Ethernet controller" \
		>"$T/pci.ids"
	rc 0 vf list
	grep -Eq '^0000:00:02\.0 .* - +Intel Corporation 82574L Gigabit Network Connection$' \
		"$T/out" || die "00:02.0: $(grep 00:02.0 "$T/out")"
	grep -Eq '^0000:00:04\.0 .* - +QEMU edu device$' "$T/out" ||
		die "00:04.0: $(grep 00:04.0 "$T/out")"
	# Vendor known, device not: the vendor alone.
	grep -Eq '^0000:00:1f\.0 .* - +Intel Corporation$' "$T/out" ||
		die "00:1f.0: $(grep 00:1f.0 "$T/out")"
	grep -Eq '^0000:00:05\.0 .* - +-$' "$T/out" ||
		die "00:05.0: $(grep 00:05.0 "$T/out")"
	rc 0 vf --json list
	"$PYTHON" - "$T/out" <<'PY' || die "json names wrong"
import json, sys
d = {x["address"]: x for x in json.load(open(sys.argv[1]))}
assert d["0000:00:03.0"]["vendor_name"] == "QEMU", d["0000:00:03.0"]
assert d["0000:00:03.0"]["device_name"] == "edu device"
assert d["0000:00:05.0"]["vendor_name"] is None
PY
}

case_check_world_mode() {
	conf "0000:00:04.0 mode=0666" "0000:00:03.0 mode=0660"
	rc 0 vf check
	want_in "$T/err" "devices.conf:1: warning: mode=0666 lets every user open the group"
	want_not_in "$T/err" "devices.conf:2:"
}

case_status_no_config() {
	rc 0 vf status
	want_in "$T/out" "$CONF: no devices configured"
	rc 0 vf --json status
	"$PYTHON" - "$T/out" <<'PY' || die "json wrong"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["entries"] == 0 and s["devices"] == [] and s["ok"] is True, s
PY
}

# Every entry, configured or bound by hand, has the same keys.
case_status_json_keys() {
	conf "0000:00:04.0 group=$gid mode=0660" "0000:00:02.0"
	rc 0 vf bind 0000:00:04.0 0000:00:03.0
	: >"$DEV/pci:3"
	rc 5 vf --json status
	"$PYTHON" - "$T/out" <<'PY' || die "json keys differ"
import json, sys
s = json.load(open(sys.argv[1]))
keys = None
for e in s["devices"]:
    k = set(e)
    assert keys is None or k == keys, (sorted(k), sorted(keys))
    keys = k
    assert set(e["want"]) == {"owner", "group", "uid", "gid", "mode", "agreed"}, e
assert len(s["devices"]) == 3, s
assert {"address", "line", "configured", "iommu_group", "driver", "bound",
        "viable", "want", "node", "wider", "state", "ok"} <= keys, keys
PY
}

case_bind_interface_name() {
	mknet 0000:00:04.0 eth1 down 0x1002
	rc 0 vf bind eth1
	want_driver 0000:00:04.0 vfio
	want_in "$T/out" "0000:00:04.0: bound to vfio"
	rc 0 vf unbind 0000:00:04.0
	rc 1 vf bind no-such-if0
	want_in "$T/err" "not a PCI address (like 0000:03:00.0) or a network interface"
	rc 1 vf bind ../../etc
}

# --- concurrency ------------------------------------------------------------

# want_consistent ADDR ORIG: on vfio with ORIG recorded, or back on ORIG
# ("-" for none) with nothing recorded; never in between.
want_consistent() {
	local drv orig=$2 rec=$2
	drv=$(driver_of "$1")
	[ "$orig" = - ] && rec="(none)"
	if [ "$drv" = vfio ]; then
		want_override "$1" vfio
		want_state "$1" "$rec"
	else
		[ "$drv" = "$orig" ] || die "$1 is on $drv, want vfio or $orig"
		want_override "$1" "(null)"
		want_state "$1" absent
	fi
}

case_parallel_bind_unbind() {
	local i a pids=()
	conf "0000:00:02.0" "0000:00:03.0" "0000:00:04.0"
	for i in $(seq 1 20); do
		case $((i % 4)) in
		0) set -- bind 0000:00:02.0 0000:00:03.0 0000:00:04.0 ;;
		1) set -- unbind 0000:00:04.0 0000:00:03.0 0000:00:02.0 ;;
		2) set -- apply ;;
		3) set -- unbind-all ;;
		esac
		"$VFIOCTL_SELF" "$@" >"$T/p$i.out" 2>"$T/p$i.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || true
	done
	# Nobody left a device half-moved: 3 and 4 mean exactly that.
	! grep -l "could not be restored\|restore:" "$T"/p*.err ||
		die "a call had to restore: $(cat "$T"/p*.err | head -n 3)"
	want_consistent 0000:00:02.0 e1000e
	want_consistent 0000:00:03.0 uio_edu
	want_consistent 0000:00:04.0 -
	local f
	for f in "$STATE"/*; do
		case ${f##*/} in
		lock | *.driver | '*') ;;
		*) die "stray files in the state directory: $(ls "$STATE")" ;;
		esac
	done
	rc 0 vf unbind-all
	want_driver 0000:00:02.0 e1000e
	want_driver 0000:00:03.0 uio_edu
	want_driver 0000:00:04.0 -
	[ "$(ls "$STATE")" = lock ] || die "state left: $(ls "$STATE")"
	rc 0 vf apply
	for a in 0000:00:02.0 0000:00:03.0 0000:00:04.0; do
		want_driver "$a" vfio
	done
}

case_lock_serializes() {
	# A holder of the lock keeps a bind waiting until it lets go.
	mkdir -p "$STATE"
	exec 9>"$STATE/lock"
	flock 9
	"$VFIOCTL_SELF" bind 0000:00:02.0 >"$T/p.out" 2>&1 9>&- &
	sleep 0.5
	want_driver 0000:00:02.0 e1000e
	exec 9>&-
	wait $! || die "bind failed after the lock was freed: $(cat "$T/p.out")"
	want_driver 0000:00:02.0 vfio
}

# A device behind Intel VMD: domain 10000, on the command line and in
# the file alike.
case_wide_domain() {
	mkdev 10000:e0:06.0 8086:10d3 020000 7 e1000e
	rc 0 vf bind 10000:E0:06.0
	want_driver 10000:e0:06.0 vfio
	want_in "$T/out" "10000:e0:06.0: bound to vfio (was e1000e)"
	rc 0 vf list
	grep -Eq '^10000:e0:06\.0 +8086:10d3 .* vfio ' "$T/out" ||
		die "not listed: $(grep 10000 "$T/out")"
	rc 0 vf unbind 10000:e0:06.0
	want_driver 10000:e0:06.0 e1000e
	conf "10000:e0:06.0 mode=0600"
	rc 0 vf check
	want_in "$T/out" "ok, 1 entry"
	rc 0 vf udev-claim 10000:e0:06.0
	want_in "$T/out" "VFIO_CLAIMED=1"
	want_driver 10000:e0:06.0 vfio
}

# The issue's file: a byte-order mark and names in comments, and the
# first line the device's own, which bind --save replaces.
case_check_utf8_comments() {
	printf '\357\273\2770000:00:04.0 mode=0600 # NIC f\303\274r M\303\274ller\n' \
		>"$CONF"
	rc 0 vf check
	want_in "$T/out" "ok, 1 entry"
	rc 0 vf bind --save 0000:00:04.0 mode=0660
	[ "$(grep -c '0000:00:04.0' "$CONF")" -eq 1 ] ||
		die "line added, not replaced: $(cat -A "$CONF")"
	want_in "$CONF" "0000:00:04.0	mode=0660"
	printf '0000:00:04.0 mode=0600 # M\374ller\n' >"$CONF"
	rc 1 vf check
	want_in "$T/err" "devices.conf:1: invalid UTF-8 (byte 0xfc"
}

# "owner = root": one error on the line, and how to write it.
case_check_spaces_around_equals() {
	conf "0000:00:04.0 owner = root"
	rc 1 vf check
	[ "$(grep -c 'devices.conf:1: ' "$T/err")" -eq 1 ] ||
		die "not one error: $(cat "$T/err")"
	want_in "$T/err" 'devices.conf:1: spaces around "=": write owner=root, with no spaces'
}

# Vendor and class wildcards are refused by line, and nothing is bound.
case_check_wildcards_refused() {
	conf "8086:*" "class=0x0200"
	rc 1 vf check
	want_in "$T/err" 'devices.conf:1: "8086:*": wildcards are not supported'
	want_in "$T/err" 'devices.conf:2: "class=0x0200": class matches are not supported'
	want_in "$T/err" "see devices.conf(5)"
	rc 1 vf apply
	want_no_writes
}

case_check_valid() {
	conf "# ok" "0000:00:02.0 owner=$uid group=$gid mode=0660" \
		"0000:00:1f.0 mode=0600" "0000:00:1f.3 mode=0600"
	rc 0 vf check
	want_in "$T/out" "ok, 3 entries"
}

case_check_group_conflict() {
	conf "0000:00:1f.0 owner=0" "" "0000:00:1f.3 owner=1 mode=0600"
	rc 5 vf check
	want_in "$T/err" "devices.conf:3: 0000:00:1f.3 has owner=1 but 0000:00:1f.0 (line 1) in the same IOMMU group 4 has owner=0"
}

case_check_unconfigured_member() {
	conf "0000:00:1f.0"
	rc 5 vf check
	want_in "$T/err" "devices.conf:1: IOMMU group 4 of 0000:00:1f.0 also holds 0000:00:1f.3 (8086:2930, i801_smbus)"
}

case_check_bridge_not_needed() {
	conf "0000:01:00.0"
	rc 0 vf check
}

case_check_double_match() {
	conf "1234:11e8" "0000:00:04.0"
	rc 5 vf check
	want_in "$T/err" "devices.conf:2: 0000:00:04.0 is also configured at line 1"
}

case_check_topology_errors() {
	conf "0000:00:09.0" "0000:00:06.0"
	rc 5 vf check
	want_in "$T/err" "devices.conf:1: 0000:00:09.0 is not present"
	want_in "$T/err" "devices.conf:2: 0000:00:06.0 has no IOMMU group"
}

case_check_syntax_and_users() {
	conf "0000:00:02.0 owner=no-such-user-vfio" "nonsense" \
		"0000:00:04.0 group=no-such-group-vfio mode=8"
	rc 1 vf check
	want_in "$T/err" "devices.conf:1: unknown user"
	want_in "$T/err" "devices.conf:2: bad device"
	want_in "$T/err" "devices.conf:3: unknown group"
	want_in "$T/err" "devices.conf:3: bad mode"
}

# Parse errors and topology errors interleave by line.
case_check_diagnostics_by_line() {
	conf "0000:00:1f.0" "" "nonsense"
	rc 1 vf check
	local topo bad
	topo=$(grep -n "devices.conf:1: IOMMU group 4" "$T/err" | cut -d: -f1)
	bad=$(grep -n "devices.conf:3: bad device" "$T/err" | cut -d: -f1)
	if [ -z "$topo" ] || [ -z "$bad" ]; then
		die "missing: $(cat "$T/err")"
	fi
	[ "$topo" -lt "$bad" ] || die "line 3 before line 1: $(cat "$T/err")"
}

# Thousands of lines that match nothing: 50 warnings and a count.
case_check_warnings_capped() {
	awk 'BEGIN { for (i = 0; i < 4000; i++) printf "abcd:%04x\n", i }' \
		>"$CONF"
	rc 0 vf check
	[ "$(grep -c 'devices.conf:[0-9]*: warning: ' "$T/err")" -eq 50 ] ||
		die "$(grep -c warning "$T/err") warnings printed, want 50"
	want_in "$T/err" "devices.conf:50: warning: no device abcd:0031 is present"
	want_in "$T/err" "$CONF: 3950 more warnings not shown"
	[ "$(wc -l <"$T/err")" -eq 51 ] || die "$(wc -l <"$T/err") lines"
}

# A valid file on a machine whose IOMMU is off: check says the machine
# cannot apply it (5), check --syntax that the file is fine (0).
case_check_syntax_iommu_off() {
	conf "# the NIC" "0000:00:06.0 mode=0600"
	rc 5 vf check
	want_in "$T/err" "devices.conf:2: 0000:00:06.0 has no IOMMU group"
	want_in "$T/err" "the file is valid, but this machine cannot apply it"
	rc 0 vf check --syntax
	want_in "$T/out" "syntax ok, 1 entry (this machine not checked)"
	[ ! -s "$T/err" ] || die "said: $(cat "$T/err")"
	rc 0 vf --syntax check
	# No devices to read at all: the same.
	rc 5 vf --sysfs-root "$T/nowhere" check
	want_in "$T/err" "the devices were not checked"
	rc 0 vf --sysfs-root "$T/nowhere" check --syntax
}

# Users and groups are this machine's: looked up by check, not --syntax.
case_check_syntax_users() {
	conf "0000:00:04.0 owner=no-such-user-vfio group=no-such-group-vfio"
	rc 5 vf check
	want_in "$T/err" 'devices.conf:1: unknown user "no-such-user-vfio"'
	want_in "$T/err" 'devices.conf:1: unknown group "no-such-group-vfio"'
	rc 0 vf check --syntax
	# A name that no machine has is still the file's error.
	conf "0000:00:04.0 owner=a\$b"
	rc 1 vf check --syntax
	want_in "$T/err" 'devices.conf:1: bad owner name'
}

# The file's own errors are 1 with or without --syntax, and win over
# the machine's; --syntax goes with check only.
case_check_syntax_file_errors() {
	conf "0000:00:06.0" "nonsense" "0000:00:04.0 0000:00:04.0"
	rc 1 vf check --syntax
	want_in "$T/err" "devices.conf:2: bad device"
	want_in "$T/err" "devices.conf:3: expected key=value"
	want_not_in "$T/err" "IOMMU group"
	rc 1 vf check
	want_in "$T/err" "devices.conf:1: 0000:00:06.0 has no IOMMU group"
	want_in "$T/err" "2 errors in the file, more on this machine"
	want_usage "--syntax only goes with check" --syntax list
	rc 1 vf check --syntax -c "$T/nonexistent"
	want_in "$T/err" "No such file or directory"
}

# check --json: one object, the problems by line, nothing on stderr.
case_check_json() {
	conf "0000:00:06.0 mode=0666" "nonsense"
	rc 1 vf --json check
	[ ! -s "$T/err" ] || die "stderr: $(cat "$T/err")"
	"$PYTHON" - "$T/out" <<'PY' || die "check json wrong: $(cat "$T/out")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["ok"] is False and c["exit"] == 1, c
assert c["file_errors"] == 1 and c["machine_errors"] == 1, c
assert c["warnings"] == 1 and c["entries"] == 1 and c["not_shown"] == 0, c
assert c["syntax_only"] is False and c["machine_checked"] is True, c
assert c["read_error"] is None, c
d = c["diagnostics"]
assert [x["line"] for x in d] == [1, 1, 2], d
assert all(set(x) == {"line", "severity", "about", "message"} for x in d), d
k = {(x["line"], x["severity"], x["about"]) for x in d}
assert k == {(1, "error", "machine"), (1, "warning", "file"),
             (2, "error", "file")}, k
assert any("no IOMMU group" in x["message"] for x in d), d
PY
	conf "0000:00:06.0 mode=0600"
	rc 0 vf --json check --syntax
	"$PYTHON" - "$T/out" <<'PY' || die "syntax json wrong: $(cat "$T/out")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["ok"] is True and c["exit"] == 0 and c["diagnostics"] == [], c
assert c["syntax_only"] is True and c["machine_checked"] is False, c
PY
	rc 5 vf --json check
	"$PYTHON" - "$T/out" <<'PY' || die "machine json wrong: $(cat "$T/out")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["ok"] is False and c["exit"] == 5 and c["machine_errors"] == 1, c
PY
	awk 'BEGIN { for (i = 0; i < 400; i++) printf "abcd:%04x\n", i }' \
		>"$CONF"
	rc 0 vf --json check
	"$PYTHON" - "$T/out" <<'PY' || die "capped json wrong: $(cat "$T/out")"
import json, sys
c = json.load(open(sys.argv[1]))
assert len(c["diagnostics"]) == 50 and c["not_shown"] == 350, c
assert c["warnings"] == 400 and c["ok"] is True, c
PY
	rc 1 vf --json check -c "$T/nonexistent"
	"$PYTHON" - "$T/out" <<'PY' || die "missing json wrong: $(cat "$T/out")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["read_error"] == "No such file or directory" and c["exit"] == 1, c
PY
}

case_check_hostile() {
	{
		echo "0000:00:02.0"
		printf '0000:00:04.0\0\0\0\n'
		head -c 5000 /dev/zero | tr '\0' a
		echo
		head -c 3000000 /dev/urandom
	} >"$CONF"
	rc 1 vf check
	want_in "$T/err" "devices.conf:2: NUL byte"
	want_in "$T/err" "devices.conf:3: line too long"
	want_in "$T/err" "file too large"
	rc 1 vf apply
	want_no_writes
	rc 1 vf check -c /nonexistent/devices.conf
}

case_status() {
	conf "0000:00:02.0 owner=$uid mode=0600" "0000:00:04.0"
	rc 0 vf bind 0000:00:02.0
	: >"$DEV/pci:1"
	chmod 0600 "$DEV/pci:1"
	rc 5 vf status
	grep -Eq '^0000:00:02\.0 +line 1 +group 1 +driver vfio +ok ' \
		"$T/out" || die "bound device line: $(cat "$T/out")"
	grep -Eq '^0000:00:04\.0 .*DIFFERS \(want vfio\)' "$T/out" ||
		die "unbound device not flagged: $(cat "$T/out")"
	rc 5 vf --json status
	"$PYTHON" - "$T/out" "$uid" <<'PY' || die "status json wrong"
import json, sys
s = json.load(open(sys.argv[1]))
d = {x["address"]: x for x in s["devices"]}
assert s["ok"] is False
a = d["0000:00:02.0"]
assert a["ok"] and a["bound"] and a["want"]["mode"] == "0600", a
assert a["node"]["uid"] == int(sys.argv[2]) and a["node"]["mode"] == "0600"
b = d["0000:00:04.0"]
assert not b["ok"] and not b["bound"] and b["node"] is None, b
PY
	rc 0 vf bind 0000:00:04.0
	: >"$DEV/pci:3"
	chmod 0600 "$DEV/pci:3"
	rc 0 vf status
	chmod 0644 "$DEV/pci:1"
	rc 5 vf status
	grep -Eq '^0000:00:02\.0 .*WIDER' "$T/out" ||
		die "wrong node mode not flagged"
}

case_udev_owner() {
	conf "0000:00:04.0 owner=$uid group=$gid mode=0660"
	rc 0 vf udev-owner pci:3
	printf 'VFIO_OWNER=%s\nVFIO_GROUP=%s\nVFIO_MODE=0660\n' "$uid" "$gid" \
		>"$T/want"
	cmp -s "$T/want" "$T/out" || die "printed: $(cat "$T/out")"
	rc 0 vf udev-owner 1
	printf 'VFIO_OWNER=root\nVFIO_GROUP=root\nVFIO_MODE=0600\n' >"$T/want"
	cmp -s "$T/want" "$T/out" ||
		die "unconfigured group got: $(cat "$T/out")"
	rc 1 vf udev-owner pci:x
	want_no_writes
}

case_udev_owner_merges_group() {
	conf "0000:00:1f.0 owner=$uid" "0000:00:1f.3 mode=0640"
	rc 0 vf udev-owner pci:4
	printf 'VFIO_OWNER=%s\nVFIO_GROUP=root\nVFIO_MODE=0640\n' "$uid" \
		>"$T/want"
	cmp -s "$T/want" "$T/out" || die "printed: $(cat "$T/out")"
}

# Removing group= (or the line) must take the node back to root's.
case_udev_owner_narrows_after_removal() {
	conf "0000:00:04.0 owner=1 group=1 mode=0660"
	rc 0 vf udev-owner pci:3
	want_in "$T/out" "VFIO_GROUP=1"
	conf "0000:00:04.0 owner=1 mode=0660"
	rc 0 vf udev-owner pci:3
	want_in "$T/out" "VFIO_GROUP=root"
	rm "$CONF"
	rc 0 vf udev-owner pci:3
	printf 'VFIO_OWNER=root\nVFIO_GROUP=root\nVFIO_MODE=0600\n' >"$T/want"
	cmp -s "$T/want" "$T/out" || die "printed: $(cat "$T/out")"
}

# The rule must reset the node and the stale imports before importing.
case_udev_rule_resets_first() {
	local rules=$here/../../udev/70-vfio-dkms.rules reset import
	reset=$(grep -n 'OWNER="root", GROUP="root", MODE="0600"' "$rules" |
		cut -d: -f1)
	import=$(grep -n 'IMPORT{program}="/usr/sbin/vfioctl udev-owner' \
		"$rules" | cut -d: -f1)
	if [ -z "$reset" ] || [ -z "$import" ] || [ "$reset" -ge "$import" ]; then
		die "no root:root 0600 reset before the udev-owner import"
	fi
	grep -q 'ENV{VFIO_GROUP}=""' "$rules" || die "stale VFIO_GROUP kept"
}

case_apply_retriggers_every_node() {
	local n
	for n in 1 3 9; do
		mkdir -p "$S/class/vfio/pci:$n"
		: >"$S/class/vfio/pci:$n/uevent"
	done
	conf "0000:00:04.0 owner=$uid"
	rc 0 vf apply
	for n in 1 3 9; do
		want_in "$LOG" "class/vfio/pci:$n/uevent change"
	done
	# Also with the whole configuration gone.
	rm "$CONF"
	: >"$LOG"
	rc 0 vf apply
	for n in 1 3 9; do
		want_in "$LOG" "class/vfio/pci:$n/uevent change"
	done
}

case_status_wider() {
	conf "0000:00:04.0"
	rc 0 vf bind 0000:00:04.0
	: >"$DEV/pci:3"
	chown 1:1 "$DEV/pci:3"
	chmod 0660 "$DEV/pci:3"
	# group=kvm removed from the line: alice:kvm 0660 is wider than root.
	rc 5 vf status
	grep -Eq '^0000:00:04\.0 .* WIDER ' "$T/out" ||
		die "wider node not flagged: $(cat "$T/out")"
	rc 5 vf --json status
	"$PYTHON" - "$T/out" <<'PY' || die "status json wider wrong"
import json, sys
s = json.load(open(sys.argv[1]))
a = s["devices"][0]
assert a["wider"] is True and a["state"] == "WIDER" and not a["ok"], a
assert a["want"]["owner"] == "root" and a["want"]["mode"] == "0600", a
PY
	# Narrower than configured: differs, but is not wider.
	conf "0000:00:04.0 owner=1 group=1 mode=0660"
	chmod 0640 "$DEV/pci:3"
	rc 5 vf status
	grep -Eq '^0000:00:04\.0 .* DIFFERS ' "$T/out" ||
		die "narrower node: $(cat "$T/out")"
	want_not_in "$T/out" WIDER
	chmod 0660 "$DEV/pci:3"
	rc 0 vf status
	# Mode bits beyond the configured ones are wider.
	chmod 0666 "$DEV/pci:3"
	rc 5 vf status
	want_in "$T/out" WIDER
	# A node nobody configures or binds any more.
	chmod 0660 "$DEV/pci:3"
	: >"$DEV/pci:9"
	chmod 0666 "$DEV/pci:9"
	rc 5 vf status
	want_in "$T/out" "$DEV/pci:9  no configured or bound device  WIDER"
}

# A device without an IOMMU group: "none", and why.
case_status_no_group() {
	conf "0000:00:06.0"
	rc 5 vf status
	grep -Eq '^0000:00:06\.0 +line 1 +group none \(no IOMMU: see vfioctl doctor\) +driver e1000e +DIFFERS' \
		"$T/out" || die "no IOMMU: $(cat "$T/out")"
	want_not_in "$T/out" "group -1"
	echo "BOOT_IMAGE=/vmlinuz ro amd_iommu=off" >"$P/cmdline"
	rc 5 vf status
	want_in "$T/out" "group none (IOMMU off: amd_iommu=off)  driver e1000e"
	mkdir -p "$S/class/iommu/dmar0"
	rc 5 vf status
	want_in "$T/out" "group none (not behind an IOMMU)  driver e1000e"
	# Bound by hand, whatever the kernel let it do.
	rm "$CONF"
	ln -sfn "$S/bus/pci/drivers/vfio" \
		"$S/bus/pci/devices/0000:00:06.0/driver"
	rc 5 vf status
	want_in "$T/out" "0000:00:06.0  not configured  group none (not behind an IOMMU)  driver vfio"
}

case_udev_owner_fails_closed() {
	conf "0000:00:1f.0 owner=0" "0000:00:1f.3 owner=1"
	rc 1 vf udev-owner pci:4
	[ ! -s "$T/out" ] || die "conflict printed: $(cat "$T/out")"
	conf "0000:00:04.0 owner=$uid" "garbage"
	rc 1 vf udev-owner pci:3
	[ ! -s "$T/out" ] || die "broken config printed: $(cat "$T/out")"
}

case_udev_claim_bound_device() {
	conf "0000:00:02.0"
	rc 0 vf udev-claim 0000:00:02.0
	[ "$(cat "$T/out")" = "VFIO_CLAIMED=1" ] ||
		die "printed: $(cat "$T/out")"
	want_driver 0000:00:02.0 vfio
	want_state 0000:00:02.0 e1000e
}

case_udev_claim_unconfigured() {
	conf "0000:00:02.0"
	rc 0 vf udev-claim 0000:00:03.0
	[ ! -s "$T/out" ] || die "printed: $(cat "$T/out")"
	want_no_writes
	rc 0 vf udev-claim 0000:00:03.0 -c /nonexistent
	want_no_writes
}

case_udev_claim_before_vfio_loads() {
	conf "0000:00:02.0"
	mv "$S/bus/pci/drivers/vfio" "$T/vfio.unloaded"
	rc 0 vf udev-claim 0000:00:02.0
	printf 'VFIO_CLAIMED=1\nVFIO_LOAD=1\n' >"$T/want"
	cmp -s "$T/want" "$T/out" || die "printed: $(cat "$T/out")"
	want_driver 0000:00:02.0 -
	want_override 0000:00:02.0 vfio
	want_state 0000:00:02.0 e1000e
	# The driver loads; the boot-time apply finishes the job and the
	# remembered driver survives it.
	mv "$T/vfio.unloaded" "$S/bus/pci/drivers/vfio"
	rc 0 vf apply
	want_driver 0000:00:02.0 vfio
	want_state 0000:00:02.0 e1000e
	rc 0 vf unbind 0000:00:02.0
	want_driver 0000:00:02.0 e1000e
}

case_udev_claim_unbound_then_probe() {
	conf "0000:00:04.0"
	rc 0 vf udev-claim 0000:00:04.0
	want_driver 0000:00:04.0 vfio
	want_state 0000:00:04.0 "(probe)"
	rc 0 vf unbind 0000:00:04.0
	want_in "$LOG" "bus/pci/drivers_probe 0000:00:04.0"
	want_driver 0000:00:04.0 uio_edu
}

case_udev_claim_failure_restores() {
	conf "0000:00:02.0"
	rc 3 env FAKE_FAIL=bus/pci/drivers/vfio/bind "$VFIOCTL_SELF" \
		udev-claim 0000:00:02.0
	[ ! -s "$T/out" ] || die "printed: $(cat "$T/out")"
	want_driver 0000:00:02.0 e1000e
	want_override 0000:00:02.0 "(null)"
}

case_udev_claim_config_error() {
	conf "0000:00:02.0 owner=no-such-user-vfio"
	rc 1 vf udev-claim 0000:00:02.0
	want_no_writes
}

# --- doctor -----------------------------------------------------------------

# mkcfg ADDR SIZE CAP...: a config space file of SIZE bytes (256: conventional
# PCI, 4096: PCIe) with the capabilities named: pm, pm-nosoftrst, msi, msix,
# exp, exp-flr, af-flr (the standard list), acs (extended), mf (header type).
mkcfg() {
	"$PYTHON" - "$S/bus/pci/devices/$1/config" "${@:2}" <<'PY'
import struct, sys
path, size, *caps = sys.argv[1:]
b = bytearray(int(size))
ids = {"pm": 1, "pm-nosoftrst": 1, "msi": 5, "exp": 0x10, "exp-flr": 0x10,
       "msix": 0x11, "af-flr": 0x13}
std = [c for c in caps if c in ids]
if "mf" in caps:
    b[0x0e] = 0x80
if std:
    b[0x06] |= 0x10
    b[0x34] = 0x40
for i, c in enumerate(std):
    off = 0x40 + 0x10 * i
    b[off] = ids[c]
    b[off + 1] = off + 0x10 if i + 1 < len(std) else 0
    if c == "exp-flr":
        struct.pack_into("<I", b, off + 4, 1 << 28)
    if c == "af-flr":
        b[off + 3] = 2
    if c == "pm-nosoftrst":
        b[off + 4] = 8
if len(b) > 256:
    # AER first, then ACS when asked for: the list is walked, not guessed.
    # acs-rsvd: the same, with the reserved low bits of the offset set.
    acs = "acs" in caps or "acs-rsvd" in caps
    nxt = (0x143 if "acs-rsvd" in caps else 0x140) if acs else 0
    struct.pack_into("<I", b, 0x100, 0x0001 | 1 << 16 | nxt << 20)
    if acs:
        struct.pack_into("<I", b, 0x140, 0x000d | 1 << 16)
open(path, "wb").write(b)
PY
}

# A healthy host for doctor on top of fresh_tree: IOMMU with remapping,
# our modules installed and loaded, the in-tree block, no EFI, devices in
# a hierarchy (01:00.0 and 01:01.0 behind the bridge 00:05.0), config
# spaces, fake dkms/mokutil/modinfo first in $PATH.
doctor_tree() {
	local a top=$here/../..
	R=$T/root
	KVER=6.1.0-99-amd64
	MODS=$R/lib/modules/$KVER/updates/dkms
	mkdir -p "$P/sys/kernel" "$S/class/iommu/dmar0" "$S/module/vfio" \
		"$S/module/vfio_pci/parameters" "$MODS" "$R/usr/lib/modprobe.d" \
		"$R/usr/lib/vfio-dkms" "$T/bin" "$S/devices/pci0000:00"
	echo "$KVER" >"$P/sys/kernel/osrelease"
	echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on" >"$P/cmdline"
	printf 'processor\t: 0\nvendor_id\t: GenuineIntel\n' >"$P/cpuinfo"
	printf '%s\n' "           CPU0       CPU1" \
		"  9:          0          0  IR-IO-APIC    9-fasteoi   acpi" \
		" 24:         10          0  IR-PCI-MSI-0000:00:1f.2 0-edge  ahci" \
		>"$P/interrupts"
	echo 1.0 >"$S/module/vfio/version"
	echo O >"$S/module/vfio/taint"
	echo N >"$S/module/vfio_pci/parameters/allow_unsafe_interrupts"
	printf 'ELF...~Module signature appended~\n' >"$MODS/vfio.ko"
	cp "$MODS/vfio.ko" "$MODS/vfio_pci.ko"
	cp "$top/etc/modprobe.d/vfio-dkms.conf" "$R/usr/lib/modprobe.d/"
	cp "$top/lib/intree-guard" "$R/usr/lib/vfio-dkms/"
	chmod 0755 "$R/usr/lib/vfio-dkms/intree-guard"
	printf '#!/bin/sh\necho "%s"\n' "vfio-dkms/1.0: added" >"$T/bin/dkms"
	# shellcheck disable=SC2016 # expanded by the fake, not here
	printf '#!/bin/sh\necho "${FAKE_MOK:-%s is already enrolled}"\n' \
		/var/lib/dkms/mok.pub >"$T/bin/mokutil"
	chmod +x "$T/bin/dkms" "$T/bin/mokutil"
	# The real layout: devices below their bridges, bus/pci/devices links.
	mkdev 0000:01:01.0 1234:11e8 00ff00 5 -
	for a in "$S"/bus/pci/devices/*; do
		mv "$a" "$S/devices/pci0000:00/"
		ln -s "$S/devices/pci0000:00/${a##*/}" "$a"
	done
	for a in 0000:01:00.0 0000:01:01.0; do
		mv "$S/devices/pci0000:00/$a" "$S/devices/pci0000:00/0000:00:05.0/"
		ln -sfn "$S/devices/pci0000:00/0000:00:05.0/$a" \
			"$S/bus/pci/devices/$a"
	done
	mkcfg 0000:00:00.0 256
	mkcfg 0000:00:02.0 4096 pm exp-flr msi msix
	mkcfg 0000:00:03.0 256 msi
	mkcfg 0000:00:04.0 4096 exp msi msix acs
	mkcfg 0000:00:1f.0 256 mf
	mkcfg 0000:00:1f.3 256 mf
	mkcfg 0000:00:05.0 4096 pm exp msi
	mkcfg 0000:01:00.0 4096 exp msi
	mkcfg 0000:01:01.0 4096 exp msi
	mkcfg 0000:00:06.0 4096 exp msix
	echo flr >"$S/bus/pci/devices/0000:00:04.0/reset_method"
}

dvf() {
	PATH=$T/bin:$PATH vf --root "$R" "$@"
}

# want_finding VERDICT SUBJECT CHECK TEXT: a line of doctor's output.
want_finding() {
	grep -E "^$1 +$2 +$3 " "$T/out" | grep -qF -- "$4" ||
		die "no \"$1 $2 $3 ...$4\": $(grep -E " $2 +$3 " "$T/out" || echo none)"
}

case_doctor_healthy() {
	doctor_tree
	rc 0 dvf doctor 0000:00:04.0
	for c in iommu intremap modules loaded intree secureboot config; do
		grep -Eq "^ok +host +$c " "$T/out" || die "$c: $(cat "$T/out")"
	done
	want_finding ok host iommu "Intel VT-d: dmar0"
	want_finding ok host intree "refuses the in-tree VFIO modules"
	want_finding ok host intree "on $KVER they are refused"
	want_finding ok 0000:00:04.0 group "IOMMU group 3: 1 device: 0000:00:04.0 (no driver)"
	want_finding ok 0000:00:04.0 shape "alone in IOMMU group 3"
	want_finding ok 0000:00:04.0 driver "no driver"
	want_finding ok 0000:00:04.0 inuse "not in use"
	want_finding ok 0000:00:04.0 reset "reset methods: flr"
	want_finding ok 0000:00:04.0 irq "MSI and MSI-X available"
	want_in "$T/out" "doctor: "
	want_not_in "$T/out" "warn "
	want_no_writes
}

case_doctor_iommu() {
	doctor_tree
	rmdir "$S/class/iommu/dmar0"
	echo "BOOT_IMAGE=/vmlinuz ro quiet" >"$P/cmdline"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host iommu "no intel_iommu=on"
	want_finding fail host iommu "fix: add intel_iommu=on to GRUB_CMDLINE_LINUX in /etc/default/grub"
	want_finding fail host intremap "no IOMMU, so no interrupt remapping"
	echo "BOOT_IMAGE=/vmlinuz ro intel_iommu=off" >"$P/cmdline"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host iommu "fix: remove intel_iommu=off from GRUB_CMDLINE_LINUX"
	echo "BOOT_IMAGE=/vmlinuz ro" >"$P/cmdline"
	printf 'vendor_id\t: AuthenticAMD\n' >"$P/cpuinfo"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host iommu "the firmware has it off"
	want_finding fail host iommu "AMD-Vi/IOMMU (AMD) in the firmware setup"
	mkdir "$S/class/iommu/ivhd0"
	echo "BOOT_IMAGE=/vmlinuz ro iommu=pt" >"$P/cmdline"
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host iommu "AMD-Vi: ivhd0 (iommu=pt"
}

case_doctor_intremap() {
	doctor_tree
	printf '%s\n' " 24: 1 0 PCI-MSI-0000:00:1f.2 0-edge ahci" \
		"  9: 0 0 IO-APIC 9-fasteoi acpi" >"$P/interrupts"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host intremap "interrupt remapping is off (no IR- interrupt chips"
	want_finding fail host intremap "fix: enable interrupt remapping in the firmware"
	echo "BOOT_IMAGE=/vmlinuz intel_iommu=on intremap=off" >"$P/cmdline"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host intremap "the kernel command line says intremap=off"
	want_finding fail host intremap "fix: remove intremap=off from GRUB_CMDLINE_LINUX"
	echo Y >"$S/module/vfio_pci/parameters/allow_unsafe_interrupts"
	rc 0 dvf doctor 0000:00:04.0
	want_finding warn host intremap "allow_unsafe_interrupts is set"
	want_finding warn host intremap "raise any interrupt on the host"
	: >"$P/interrupts"
	rc 0 dvf doctor 0000:00:04.0
	want_finding warn host intremap "cannot tell whether interrupt remapping is on"
	echo " 40: 0 ITS-PCI-MSI 524288 Edge nvme0q0" >"$P/interrupts"
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host intremap "interrupt remapping is on"
}

case_doctor_modules() {
	doctor_tree
	rm "$MODS/vfio_pci.ko"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host modules "not installed for the running kernel $KVER (dkms status: vfio-dkms/1.0: added)"
	want_finding fail host modules "fix: apt install linux-headers-$KVER, then dkms autoinstall -k $KVER"
	# Without ours, the in-tree modules load as usual: only a warning.
	rm "$R/usr/lib/modprobe.d/vfio-dkms.conf"
	rc 5 dvf doctor 0000:00:04.0
	want_finding warn host intree "the in-tree block is not in force"
	# A compressed module is found as well.
	cp "$here/../../etc/modprobe.d/vfio-dkms.conf" "$R/usr/lib/modprobe.d/"
	echo x | xz >"$MODS/vfio_pci.ko.xz"
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host modules "vfio.ko and vfio_pci.ko are installed for $KVER"
}

case_doctor_loaded() {
	doctor_tree
	echo 0.3 >"$S/module/vfio/version"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host loaded "the kernel's own vfio (version 0.3) is loaded"
	echo 1.0 >"$S/module/vfio/version"
	rm -r "$S/bus/pci/drivers/vfio"
	rc 0 dvf doctor 0000:00:04.0
	want_finding warn host loaded "vfio 1.0 is loaded but not vfio_pci"
	rm -r "$S/module/vfio" "$S/module/vfio_pci"
	rc 0 dvf doctor 0000:00:04.0
	want_finding warn host loaded "vfio and vfio_pci are not loaded"
	want_finding warn host loaded "fix: modprobe vfio_pci"
}

case_doctor_intree() {
	doctor_tree
	chmod -x "$R/usr/lib/vfio-dkms/intree-guard"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host intree "intree-guard is missing or not executable"
	want_finding fail host intree "fix: apt install --reinstall vfio-dkms"
	chmod +x "$R/usr/lib/vfio-dkms/intree-guard"
	mkdir -p "$S/module/vfio_iommu_type1"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host intree "loaded beside vfio-dkms's: vfio_iommu_type1"
	rmdir "$S/module/vfio_iommu_type1"
	# Ours only in updates/ (not DKMS's): the guard lets the kernel's load.
	mv "$MODS"/* "$MODS/.."
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host intree "absent, so on $KVER they are loaded as usual"
}

case_doctor_secureboot() {
	local var=$S/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
	doctor_tree
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host secureboot "not booted through EFI"
	mkdir -p "${var%/*}"
	printf '\006\000\000\000\000' >"$var"
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host secureboot "Secure Boot is off"
	printf '\006\000\000\000\001' >"$var"
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host secureboot "vfio is loaded with a verified signature"
	# Not loaded: the file's signature and the key decide.
	rm "$S/module/vfio/taint"
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host secureboot "Secure Boot is on and /lib/modules/$KVER/updates/dkms/vfio.ko is signed"
	want_finding ok host mok "the DKMS key /var/lib/dkms/mok.pub is enrolled"
	printf 'mok_certificate="/etc/dkms/my.der"\n' >"$T/fw.conf"
	mkdir -p "$R/etc/dkms"
	mv "$T/fw.conf" "$R/etc/dkms/framework.conf"
	FAKE_MOK="/etc/dkms/my.der is not enrolled" rc 5 dvf doctor 0000:00:04.0
	want_finding fail host mok "the DKMS key /etc/dkms/my.der is not enrolled"
	want_finding fail host mok "fix: mokutil --import /etc/dkms/my.der"
	rm "$T/bin/mokutil"
	PATH=$T/bin rc 0 vf --root "$R" doctor 0000:00:04.0
	want_finding warn host mok "no mokutil"
	printf 'ELF, no signature\n' >"$MODS/vfio.ko"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail host secureboot "is not signed: the kernel refuses to load it"
	want_finding fail host secureboot "mokutil --import /var/lib/dkms/mok.pub"
	# Compressed: modinfo reads the signer.
	rm "$MODS/vfio.ko"
	echo x | xz >"$MODS/vfio.ko.xz"
	printf '#!/bin/sh\necho "DKMS module signing key"\n' >"$T/bin/modinfo"
	chmod +x "$T/bin/modinfo"
	PATH=$T/bin:$PATH rc 0 vf --root "$R" doctor 0000:00:04.0
	want_finding ok host secureboot "vfio.ko.xz is signed by DKMS module signing key"
}

case_doctor_config() {
	doctor_tree
	rc 0 dvf doctor 0000:00:04.0
	want_finding ok host config "does not exist: no devices configured"
	conf "0000:00:04.0 mode=0600"
	rc 0 dvf doctor
	want_finding ok host config "is valid, 1 entry"
	# Configured devices only, when there are some.
	[ "$(grep -c ' driver ' "$T/out")" -eq 1 ] || die "$(cat "$T/out")"
	conf "0000:00:04.0 mode=0666"
	rc 0 dvf doctor
	want_finding warn host config "1 warning, the first: $CONF:1: warning: mode=0666"
	conf "0000:00:04.0 mode=0999"
	rc 5 dvf doctor
	want_finding fail host config "1 error, the first: $CONF:1: bad mode"
	want_finding fail host config "fix: vfioctl check lists them"
}

case_doctor_group_members() {
	doctor_tree
	rc 5 dvf doctor 0000:00:1f.0
	want_finding fail 0000:00:1f.0 member "0000:00:1f.3 (8086:2930) of group 4 is on the host driver i801_smbus: it blocks the group"
	want_finding fail 0000:00:1f.0 member "fix: vfioctl bind 0000:00:1f.3 too"
	want_finding fail 0000:00:1f.0 group "IOMMU group 4: 2 devices: 0000:00:1f.0 (lpc_ich), 0000:00:1f.3 (i801_smbus)"
	want_finding fail 0000:00:1f.0 group "fix: vfioctl bind 0000:00:1f.3"
	want_finding warn 0000:00:1f.0 shape "multi-function device 0000:00:1f, which has no ACS capability"
	want_finding warn 0000:00:1f.0 shape "built into the chipset: assign the whole group (vfioctl bind 0000:00:1f.0 0000:00:1f.3)"
	want_finding warn 0000:00:1f.0 shape "pcie_acs_override) is not safe"
	# Configured: apply takes it too.
	conf "0000:00:1f.0" "0000:00:1f.3"
	rc 0 dvf doctor 0000:00:1f.0
	want_finding warn 0000:00:1f.0 member "devices.conf names it, so apply moves it too"
	rc 0 vf bind 0000:00:1f.3
	rc 0 dvf doctor 0000:00:1f.0
	want_finding ok 0000:00:1f.0 member "0000:00:1f.3 (8086:2930) of group 4 is on vfio: does not block"
	want_finding ok 0000:00:1f.0 group "IOMMU group 4: 2 devices"
	# A bridge never blocks.
	rc 0 dvf doctor 0000:01:00.0
	want_finding ok 0000:01:00.0 member "0000:00:05.0 (1b36:0001, no driver) of group 5 is a bridge: does not block"
}

case_doctor_shape_bridge() {
	doctor_tree
	rc 0 dvf doctor 0000:01:00.0
	want_finding warn 0000:01:00.0 shape "IOMMU group 5 holds 1 other device: it sits behind the bridge 0000:00:05.0, which has no ACS capability"
	want_finding warn 0000:01:00.0 shape "fix: move the card to a slot on a port with ACS, or assign the whole group (vfioctl bind 0000:01:00.0 0000:01:01.0)"
	mkcfg 0000:00:05.0 4096 pm exp msi acs
	rc 0 dvf doctor 0000:01:00.0
	want_finding warn 0000:01:00.0 shape "for a reason sysfs does not show"
}

# The low two bits of an extended capability's next offset are reserved:
# the list is walked as the kernel walks it (PCI_EXT_CAP_NEXT).
case_doctor_ext_cap_reserved_bits() {
	doctor_tree
	mkcfg 0000:00:05.0 4096 pm exp msi acs-rsvd
	rc 0 dvf doctor 0000:01:00.0
	want_finding warn 0000:01:00.0 shape "for a reason sysfs does not show"
	want_not_in "$T/out" "which has no ACS capability"
}

# The PCI registers come from <linux/pci_regs.h>, not from copies.
case_pci_regs_not_copied() {
	local regs=/usr/include/linux/pci_regs.h name f
	[ -r "$regs" ] || die "no $regs (linux-libc-dev)"
	for f in "$here"/../../tools/*/*.[ch]; do
		while read -r name; do
			! grep -Eq "^#define[[:space:]]+$name([[:space:](]|\$)" "$regs" ||
				die "${f##*/} defines $name, which $regs has"
		done < <(sed -n 's/^#define[[:space:]]\{1,\}\(PCI_[A-Z0-9_]*\).*/\1/p' "$f")
	done
}

case_doctor_inuse() {
	doctor_tree
	mknet 0000:00:02.0 eth0 up 0x1003
	rc 5 dvf doctor eth0
	want_finding warn 0000:00:02.0 driver "bound to the host driver e1000e; fix: vfioctl bind 0000:00:02.0"
	want_finding fail 0000:00:02.0 inuse "in use by the host: network interface eth0 is up"
	echo down >"$S/class/net/eth0/operstate"
	echo 0x1002 >"$S/class/net/eth0/flags"
	rc 0 dvf doctor eth0
	want_finding ok 0000:00:02.0 inuse "not in use by the host"
	rc 0 vf bind 0000:00:02.0
	rc 0 dvf doctor 0000:00:02.0
	want_finding ok 0000:00:02.0 driver "bound to vfio"
	want_not_in "$T/out" inuse
}

case_doctor_reset_irq() {
	doctor_tree
	rc 0 dvf doctor 0000:00:02.0 0000:00:03.0 0000:00:05.0 0000:01:00.0
	want_finding ok 0000:00:02.0 reset "function level reset (FLR) in its PCIe capability"
	want_finding ok 0000:00:02.0 irq "MSI and MSI-X available"
	want_finding warn 0000:00:03.0 reset "no reset method"
	want_finding ok 0000:00:03.0 irq "MSI available"
	want_finding ok 0000:00:05.0 reset "power-management reset"
	want_finding warn 0000:01:00.0 reset "no reset method"
	mkcfg 0000:00:03.0 256 pm-nosoftrst af-flr
	rc 0 dvf doctor 0000:00:03.0
	want_finding ok 0000:00:03.0 reset "(FLR) in its AF capability"
	want_finding warn 0000:00:03.0 irq "no MSI or MSI-X: INTx only"
	mkcfg 0000:00:03.0 256 pm-nosoftrst
	rc 0 dvf doctor 0000:00:03.0
	want_finding warn 0000:00:03.0 reset "no reset method: it keeps its state"
}

case_doctor_memlock() {
	doctor_tree
	mkdir -p "$R/etc/security/limits.d" "$R/etc/systemd/system.conf.d"
	conf "0000:00:04.0 owner=nobody"
	rc 0 dvf doctor
	want_finding warn 0000:00:04.0 memlock "owner nobody: RLIMIT_MEMLOCK 8 MiB (hard 8 MiB) from systemd's built-in DefaultLimitMEMLOCK, below the 1 GiB a small VM would map"
	printf '%s\n' "[Manager]" "DefaultLimitMEMLOCK=64M:infinity" \
		>"$R/etc/systemd/system.conf.d/50-memlock.conf"
	rc 0 dvf doctor
	want_finding warn 0000:00:04.0 memlock "RLIMIT_MEMLOCK 64 MiB (hard unlimited) from DefaultLimitMEMLOCK in /etc/systemd/system.conf.d/50-memlock.conf:2"
	printf '%s\n' "# limits" "*  soft memlock 1024" "@nogroup - memlock 2048" \
		>"$R/etc/security/limits.conf"
	rc 5 dvf --memlock-for 4G doctor
	want_finding fail 0000:00:04.0 memlock "owner nobody: RLIMIT_MEMLOCK 2 MiB (hard 2 MiB) from /etc/security/limits.conf:3, below the 4 GiB it will map; services get 64 MiB"
	want_finding fail 0000:00:04.0 memlock "fix: add \"nobody - memlock 4194304\" (KiB) to /etc/security/limits.d/vfio.conf"
	printf 'nobody hard memlock unlimited\nnobody soft memlock unlimited\n' \
		>"$R/etc/security/limits.d/vfio.conf"
	rc 0 dvf --memlock-for 4G doctor
	want_finding ok 0000:00:04.0 memlock "RLIMIT_MEMLOCK unlimited (hard unlimited) from /etc/security/limits.d/vfio.conf:2, enough for 4 GiB"
	conf "0000:00:04.0 owner=root"
	rc 0 dvf doctor
	want_finding ok 0000:00:04.0 memlock "owner root: CAP_IPC_LOCK"
	rc 1 dvf --memlock-for 4X doctor
	want_in "$T/err" "not a size"
}

case_doctor_nodes() {
	doctor_tree
	conf "0000:00:04.0 owner=nobody group=nogroup mode=0660"
	rc 0 vf bind 0000:00:04.0
	rc 0 dvf doctor
	want_finding warn 0000:00:04.0 node "$DEV/pci:3 is missing although the device is on vfio"
	: >"$DEV/pci:3"
	: >"$DEV/3"
	chmod 0600 "$DEV/pci:3" "$DEV/3"
	rc 0 dvf doctor
	want_finding warn 0000:00:04.0 node "$DEV/pci:3 is root:root 0600, devices.conf gives it nobody:nogroup 0660: the udev rules have not been applied"
	want_finding warn 0000:00:04.0 node "fix: udevadm trigger --action=change --subsystem-match=vfio"
	chown nobody:nogroup "$DEV/pci:3" "$DEV/3"
	chmod 0660 "$DEV/pci:3" "$DEV/3"
	rc 0 dvf doctor
	want_finding ok 0000:00:04.0 node "$DEV/pci:3 is nobody:nogroup 0660, as configured"
	want_finding ok 0000:00:04.0 node "$DEV/3 is nobody:nogroup 0660, as configured"
	chmod 0666 "$DEV/3"
	rc 5 dvf doctor
	want_finding fail 0000:00:04.0 node "$DEV/3 is 65534:65534 0666, wider than the nobody:nogroup 0660 of devices.conf"
	chmod 0640 "$DEV/3"
	rc 0 dvf doctor
	want_finding warn 0000:00:04.0 node "$DEV/3 is 65534:65534 0640, narrower"
	# Unconfigured: root:root 0600 at most.
	rm "$CONF"
	rc 5 dvf doctor 0000:00:04.0
	want_finding fail 0000:00:04.0 node "$DEV/pci:3 is 65534:65534 0660, wider than the root:root 0600"
}

case_doctor_json() {
	doctor_tree
	mknet 0000:00:02.0 eth0 up 0x1003
	rc 5 dvf --json doctor 0000:00:02.0 0000:00:04.0
	"$PYTHON" - "$T/out" <<'PY' || die "doctor json wrong"
import json, sys
d = json.load(open(sys.argv[1]))
fs = d["findings"]
assert all(set(f) == {"verdict", "subject", "check", "what", "fix"} for f in fs), fs
assert all(f["verdict"] in ("ok", "warn", "fail") for f in fs)
for v in ("ok", "warn", "fail"):
    assert d[v] == sum(f["verdict"] == v for f in fs), (v, d[v])
f = {(x["subject"], x["check"]): x for x in fs}
assert f[("host", "iommu")]["verdict"] == "ok" and f[("host", "iommu")]["fix"] is None
u = f[("0000:00:02.0", "inuse")]
assert u["verdict"] == "fail" and "eth0 is up" in u["what"] and u["fix"], u
assert f[("0000:00:04.0", "group")]["verdict"] == "ok"
PY
	# Text and JSON say the same.
	rc 5 dvf doctor 0000:00:02.0 0000:00:04.0
	want_in "$T/out" "doctor: "
}

case_doctor_args() {
	doctor_tree
	rc 1 dvf doctor 0000:00:09.0
	want_in "$T/err" "0000:00:09.0: no such PCI device"
	rc 1 dvf doctor no-such-if0
	[ ! -s "$T/out" ] || die "printed: $(cat "$T/out")"
	# Nothing configured: every device but bridges (classes 06xx).
	rc 5 dvf doctor
	for a in 0000:00:02.0 0000:00:03.0 0000:00:04.0 0000:00:1f.3 \
		0000:01:00.0 0000:01:01.0 0000:00:06.0; do
		grep -Eq "^[a-z]+ +$a +driver " "$T/out" || die "$a not checked"
	done
	for a in 0000:00:00.0 0000:00:05.0 0000:00:1f.0; do
		! grep -Eq "^[a-z]+ +$a " "$T/out" || die "bridge $a checked"
	done
	want_finding fail 0000:00:06.0 group "8086:10d3 has no IOMMU group"
	want_no_writes
}

here=$(cd "$(dirname "$0")" && pwd)

# "env VAR=x vfioctl ..." inside rc needs a command, not the vf function.
VFIOCTL_SELF=$scratch/vf-self
cat >"$VFIOCTL_SELF" <<EOS
#!/bin/sh
exec env FAKE_SYSFS="\$S" FAKE_LOG="\$LOG" "$VFIOCTL" --sysfs-root "\$S" \\
	--config "\$CONF" --state-dir "\$STATE" --dev-dir "\$DEV" \\
	--proc-root "\$P" --pci-ids "\$T/pci.ids" "\$@"
EOS
chmod +x "$VFIOCTL_SELF"
export S LOG CONF STATE DEV P T

for c in $(declare -F | awk '$3 ~ /^case_/ { sub(/^case_/, "", $3); print $3 }'); do
	run "$c"
done
