#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make check`: every test of the project, on a bare machine too.  Each
# stage prints "ok - ...", "not ok - ..." and "skip - ...: why" lines;
# this script shows them, times the stages and ends with the totals:
#   N passed, N failed, N skipped
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export BUILD_DIR=$top/build
mkdir -p "$BUILD_DIR"
results=$BUILD_DIR/results.txt
: >"$results"

# The stages, in order: each is named after its directory and runs
# its run.sh (setup: scripts/setup.sh, whose variables the rest use).
stages=(setup unit host kbuild abi vm clients matrix pkg vfioctl autopkgtest debug)

run_stage() {
	local name=$1 cmd=$2 start rc=0 out
	out=$BUILD_DIR/stage-$name.log
	start=$(date +%s)
	touch "$BUILD_DIR/.stage-start"
	echo "=== $name: $cmd"
	if [ ! -x "$cmd" ]; then
		echo "not ok - stage/$name: $cmd is missing" | tee -a "$results"
		return
	fi
	set +e
	"$cmd" 2>"$out.err" | tee "$out"
	rc=${PIPESTATUS[0]}
	set -e
	grep -E '^(ok|not ok|skip) - ' "$out" >>"$results" || true
	# Every VM stage writes build/vm/console.log: keep each one's.
	if [ "$BUILD_DIR/vm/console.log" -nt "$BUILD_DIR/.stage-start" ]; then
		cp "$BUILD_DIR/vm/console.log" "$BUILD_DIR/stage-$name-console.log"
	fi
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$out"; then
		echo "not ok - stage/$name: exited $rc; its stderr ends:" |
			tee -a "$results"
		tail -n 20 "$out.err" | sed 's/^/#   /'
	fi
	echo "=== $name: $(($(date +%s) - start)) s"
}

# What the host rule protects: the apt sources and pins, the installed
# kernel images, and packages of other suites (backports, trixie, sid).
# The backports list older checkouts added is left out: set-up removes it.
host_state() {
	# Any of these may be missing: find's status says nothing here.
	{ find /etc/apt/sources.list /etc/apt/sources.list.d \
		/etc/apt/preferences.d -type f -printf '%p %s %T@\n' \
		2>/dev/null || true; } |
		awk '!/\/vfio-dkms-backports\.list /' | sort
	dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' |
		awk '$1 ~ /^.i/ && ($2 ~ /^linux-image-/ || $3 ~ /bpo|deb1[3-9]/) {
			print "package " $2 " " $3 }'
}

for name in "${stages[@]}"; do
	if [ "$name" = setup ]; then
		echo "=== setup"
		host_state >"$BUILD_DIR/host-before.txt"
		eval "$(scripts/setup.sh)"
		host_state >"$BUILD_DIR/host-after.txt"
		if diff -u "$BUILD_DIR/host-before.txt" \
			"$BUILD_DIR/host-after.txt" >"$BUILD_DIR/host-diff.txt"; then
			echo "ok - setup/host-untouched: no apt source, kernel image or other suite's package added" |
				tee -a "$results"
		else
			echo "not ok - setup/host-untouched: set-up changed the host:" |
				tee -a "$results"
			sed 's/^/#   /' "$BUILD_DIR/host-diff.txt"
		fi
		continue
	fi
	run_stage "$name" "tests/$name/run.sh"
done

passed=$(grep -c '^ok - ' "$results" || true)
failed=$(grep -c '^not ok - ' "$results" || true)
skipped=$(grep -c '^skip - ' "$results" || true)
if [ "$failed" -ne 0 ]; then
	echo "Failures:"
	grep '^not ok - ' "$results"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
