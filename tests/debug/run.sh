#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The robustness stage: build (or reuse) the debug kernel, boot it once
# with the whole guest suite (fuzzer and fault injection included, with
# longer bounds), scan kmemleak after the suite, and check the console
# log for every kind of report the debug options produce.
#
# Then one boot with interrupt remapping off (run-intremap.sh).
#
# Prints vt lines ("ok - debug...", "not ok - ...", "skip - ...: why")
# and ends with "N passed, N failed, N skipped"; exit status 0 only when
# nothing failed.  Options are passed on to tests/vm/run-suite.sh (e.g.
# --only t-fuzz).  Timings go to build/debug/times.txt.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
out=$top/build/debug
mkdir -p "$out"
: >"$out/results.txt"

say() { echo "$*" | tee -a "$out/results.txt"; }

t0=$(date +%s)
if ! kenv=$(tests/debug/build-kernel.sh); then
	say "not ok - debug/build-kernel: tests/debug/build-kernel.sh failed (see its messages above)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
eval "$kenv"
say "ok - debug/build-kernel: $VFIO_DEBUG_KVER (built in ${VFIO_DEBUG_BUILD_SECONDS}s)"
t1=$(date +%s)

# The guest's own results keep their names under a debug: prefix, so
# that they do not read as the normal guest stage's lines.  The debug
# machine has the msix machine's e1000e, for t-device-msix.
#
# Our modules are built here without the stack auto-initialisation that
# Debian's kernels enable (INIT_STACK_ALL_ZERO): kernels built without it
# exist, and on them a reply with a byte the module never wrote hands
# the user stale kernel stack.  The guest suite reads such bytes back.
export KCFLAGS=-ftrivial-auto-var-init=uninitialized
rc=0
tests/vm/run-suite.sh --kernel "$VFIO_DEBUG_KERNEL" \
	--kver "$VFIO_DEBUG_KVER" --kdir "$VFIO_DEBUG_KDIR" \
	--modules "$VFIO_DEBUG_MODULES" \
	--machine debug \
	--add tests/debug/guest-run.sh --run "sh /opt/guest-run.sh" \
	--timeout 900 --total-timeout 3000 "$@" 2>"$out/run-suite.err" |
	sed -u -E 's/^(ok|not ok|skip) - /\1 - debug:/' |
	tee "$out/suite.out" || rc=$?
grep -E '^(ok|not ok|skip) - ' "$out/suite.out" >>"$out/results.txt" || true
t2=$(date +%s)
log=$top/build/vm/console.log
cp "$log" "$out/console.log" 2>/dev/null || true

# One line per kind of report.  The patterns are the first line each
# checker prints (lib/Kconfig.debug options in debug.config).
check() {	# name, extended regex, what
	local hits
	if [ ! -f "$out/console.log" ]; then
		say "not ok - debug/report-$1: no console log"
		return
	fi
	hits=$(grep -E '^\[[^]]* K\] ' "$out/console.log" |
		grep -E -- "$2" || true)
	if [ -z "$hits" ]; then
		say "ok - debug/report-$1: no $3 report"
	else
		say "not ok - debug/report-$1: $(echo "$hits" | wc -l) lines, first: $(echo "$hits" | head -n 1 | sed 's/^\[[^]]* K\] //')"
		echo "$hits" | head -n 20 | sed 's/^/#   /'
	fi
}
check kasan 'BUG: KASAN|KASAN: ' KASAN
check lockdep 'possible circular locking|WARNING: possible|inconsistent lock state|possible recursive locking|lock held when returning|suspicious RCU usage|bad unlock balance|held lock freed|INFO: trying to register non-static key' lockdep
check ubsan 'UBSAN:' UBSAN
check sleep 'BUG: sleeping function|BUG: scheduling while atomic|Voluntary context switch within RCU' atomic-sleep
# Not "Cannot allocate a scan area": kmemleak's own metadata failing under
# t-fault's injection, not a leak.
check kmemleak 'suspected memory leak|unreferenced object|kmemleak: .*disabled' kmemleak
check list 'list_add corruption|list_del corruption|list corruption' DEBUG_LIST
check warn 'WARNING:|cut here' WARN
check oops 'BUG:|Oops|general protection|Kernel panic|soft lockup|hard LOCKUP|blocked for more than' oops/lockup
# The fault injection must have had something to inject into.
if ! grep -q -- '- debug:t-fault/' "$out/suite.out"; then
	say "skip - debug/fault-injection-ran: t-fault was not run (--only)"
elif grep -q '^ok - debug:t-fault/test_fault_total' "$out/suite.out"; then
	say "ok - debug/fault-injection-ran: $(grep -h '# t-fault: .* injected' "$out/console.log" | sed 's/.*# t-fault: //' | head -n 1)"
else
	say "not ok - debug/fault-injection-ran: t-fault injected nothing or failed"
fi

# Interrupt remapping off: one short boot of the distribution kernel.
t3=$(date +%s)
tests/debug/run-intremap.sh 2>"$out/intremap.err" |
	sed -u -E 's/^(ok|not ok|skip) - /\1 - intremap:/' |
	tee "$out/intremap.out" || rc=$?
grep -E '^(ok|not ok|skip) - ' "$out/intremap.out" >>"$out/results.txt" || true
t4=$(date +%s)

{
	echo "debug kernel build (cold, recorded): ${VFIO_DEBUG_BUILD_SECONDS}s"
	echo "debug kernel step this run: $((t1 - t0))s"
	echo "debug suite (boot + suite + kmemleak): $((t2 - t1))s"
	echo "intremap=off boot: $((t4 - t3))s"
	grep -h -E '# t-fuzz: seed .* calls|# t-fault: .* injected' \
		"$out/console.log" | sed 's/^.*T\] //' || true
} | tee "$out/times.txt" | sed 's/^/# /'

passed=$(grep -c '^ok - ' "$out/results.txt" || true)
failed=$(grep -c '^not ok - ' "$out/results.txt" || true)
skipped=$(grep -c '^skip - ' "$out/results.txt" || true)
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$rc" -eq 0 ]
