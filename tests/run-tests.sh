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
stages=(setup unit host kbuild abi vm parity matrix pkg vfioctl debug autopkgtest)
# Stages that start right after set-up and run beside the others; their
# report is shown in its place in the order above once they end.  The
# autopkgtest testbeds are single-threaded VMs, as is the guest suite's:
# run one after the other, each left a host core idle for half an hour.
background=(autopkgtest)
declare -A bg_pid=()
# STAGES="vm parity" (make check STAGES=...): only those, after set-up.
if [ -n "${STAGES:-}" ]; then
	for name in $STAGES; do
		[[ " ${stages[*]} " == *" $name "* ]] || {
			echo "run-tests: no stage \"$name\" (stages: ${stages[*]})" >&2
			exit 2
		}
	done
	read -r -a stages <<<"setup $STAGES"
	kept=()
	for name in "${background[@]}"; do
		[[ " $STAGES " == *" $name "* ]] && kept+=("$name")
	done
	background=("${kept[@]}")
fi
warm_pid=

# cpu_ticks: the host's busy and steal ticks, summed over its CPUs.
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat
}

run_stage() {
	local name=$1 cmd=$2 start rc=0 out busy0 steal0 busy1 steal1 secs
	out=$BUILD_DIR/stage-$name.log
	start=$(date +%s)
	read -r busy0 steal0 < <(cpu_ticks)
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
	# How much of the machine the stage (and the cache filling behind
	# it) kept busy, and how much the hypervisor took: what a slow
	# stage's time is to be read against.
	secs=$(($(date +%s) - start))
	read -r busy1 steal1 < <(cpu_ticks)
	echo "# $name: CPUs busy $(cpu_share $((busy1 - busy0)) "$secs")," \
		"stolen $(cpu_share $((steal1 - steal0)) "$secs")"
	echo "=== $name: $secs s"
}

# unidle PID: PID and every process below it back to the normal CPU and
# I/O priority.  The cache filler runs at idle priority, on what the
# stages leave; a stage that then waits for one of its caches (the debug
# kernel, from cold caches) would wait on a task that gets no CPU while
# the testbeds keep both cores busy.
unidle() {
	local p
	for p in $(ps -o pid= --ppid "$1"); do
		unidle "$p"
	done
	chrt -o -p 0 "$1" && ionice -c 2 -n 4 -p "$1"
} 2>/dev/null

# cpu_share TICKS SECONDS: TICKS as a percentage of all CPUs' time.
cpu_share() {
	local hz ncpu
	hz=$(getconf CLK_TCK)
	ncpu=$(nproc)
	echo "$(($1 * 100 / (hz * ncpu * ($2 > 0 ? $2 : 1))))% of $ncpu"
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
		# The caches the late stages need fill behind the early ones,
		# on what CPU and I/O they leave idle (VFIO_WARM=0: not).
		if [ "${VFIO_WARM:-1}" != 0 ]; then
			chrt --idle 0 ionice -c 3 scripts/warm-caches.sh \
				>"$BUILD_DIR/warm.log" 2>&1 &
			warm_pid=$!
			echo "# caches filling in the background: $BUILD_DIR/warm.log"
		fi
		if diff -u "$BUILD_DIR/host-before.txt" \
			"$BUILD_DIR/host-after.txt" >"$BUILD_DIR/host-diff.txt"; then
			echo "ok - setup/host-untouched: no apt source, kernel image or other suite's package added" |
				tee -a "$results"
		else
			echo "not ok - setup/host-untouched: set-up changed the host:" |
				tee -a "$results"
			sed 's/^/#   /' "$BUILD_DIR/host-diff.txt"
		fi
		for bg in ${background[@]+"${background[@]}"}; do
			run_stage "$bg" "tests/$bg/run.sh" \
				>"$BUILD_DIR/stage-$bg.report" 2>&1 &
			bg_pid[$bg]=$!
			echo "# $bg: started in the background, reported below"
		done
		continue
	fi
	if [ -n "${bg_pid[$name]:-}" ]; then
		wait "${bg_pid[$name]}" || true
		cat "$BUILD_DIR/stage-$name.report"
		continue
	fi
	# The last stage that needs the filler's work: from here on it runs
	# like any stage.
	if [ "$name" = debug ] && [ -n "$warm_pid" ] &&
	   kill -0 "$warm_pid" 2>/dev/null; then
		unidle "$warm_pid" || true
		echo "# cache filler still running: back to normal priority"
	fi
	run_stage "$name" "tests/$name/run.sh"
done

if [ -n "$warm_pid" ]; then
	# Every stage that needed a cache has waited for it; this only
	# collects the filler's report.
	wait "$warm_pid" || true
	sed 's/^/# /' "$BUILD_DIR/warm.log"
fi

passed=$(grep -c '^ok - ' "$results" || true)
failed=$(grep -c '^not ok - ' "$results" || true)
skipped=$(grep -c '^skip - ' "$results" || true)
if [ "$failed" -ne 0 ]; then
	echo "Failures:"
	grep '^not ok - ' "$results"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
