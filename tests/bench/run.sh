#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make bench`: ours against the in-kernel VFIO.  Builds vfio-bench
# (static, all backends), boots the test VM once (tests/vm/run-suite.sh
# --no-bind --run, 4 GiB, enough 2 MiB huge pages for 1 GiB) and runs
# tests/bench/guest.sh in it: vfio-bench against the in-kernel VFIO, then
# against ours through the seed ABI and through the container ABI.  Then tests/bench/report.py prints the table and the
# targets and writes build/bench/results.{csv,json}; gnuplot draws
# build/bench/mapping-cost.png.
#
#   tests/bench/run.sh [--quick] [--rounds N] [--reps N] [--bench-args "..."]
#
# The backends alternate N rounds (default 5) of R repetitions (default 1)
# each, so every figure is a median of N * R.  --quick: small sizes and
# two rounds (a smoke test of the plumbing, numbers not meaningful).  Exit
# status 0 when the benchmark ran on all three backends; a missed target
# is reported, not a failure.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tests/bench/run.sh [--quick] [--rounds N] [--reps N] [--bench-args "..."]
  --quick             small sizes, 2 rounds: checks the plumbing only
  --rounds N          times the backends alternate (default 5)
  --reps N            repetitions of every measurement per round (default 1)
  --bench-args "..."  more vfio-bench options (e.g. --rows msi,bar0)
EOF
}

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$top/build/bench
rounds=5
reps=1
quick=0
bench_args=

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--rounds) rounds=$2; shift ;;
	--reps) reps=$2; shift ;;
	--bench-args) bench_args=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "bench: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
for n in "$rounds" "$reps"; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ]; then
		echo "bench: --rounds and --reps need a positive number, not '$n'" >&2
		exit 2
	fi
done

log() { echo "bench: $*" >&2; }

start=$(date +%s)

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# Other users of this machine may hold the dpkg lock for a while.
apt_get() {
	as_root apt-get -o DPkg::Lock::Timeout=600 "$@"
}

# Toolchain, headers, QEMU and the guest kernel; prints the VFIO_* vars.
eval "$("$top/scripts/setup.sh")"
if ! command -v gnuplot >/dev/null 2>&1; then
	log "installing gnuplot-nox"
	apt_get install -y --no-install-recommends gnuplot-nox >&2 ||
		{ apt_get update >&2 &&
		  apt_get install -y --no-install-recommends \
			gnuplot-nox >&2; }
fi
[ -f /usr/include/linux/vfio.h ] ||
	apt_get install -y --no-install-recommends linux-libc-dev >&2

mkdir -p "$out"
rm -f "$out"/results.csv "$out"/results.json "$out"/mapping-cost.*

# ---- the benchmark program ---------------------------------------------
# Two translation units that must never see each other's header: the
# in-kernel backend gets the distribution's <linux/vfio.h> only, ours gets
# src/include.  be_intree.c is also the modern backend: our module serves
# that header's ABI too.
cflags=(-static -O2 -Wall -Wextra -Werror -Itests/bench)
cd "$top"
log "building vfio-bench"
gcc "${cflags[@]}" -c tests/bench/bench.c -o "$out/bench.o"
gcc "${cflags[@]}" -Isrc/include -c tests/bench/be_ours.c -o "$out/be_ours.o"
gcc "${cflags[@]}" -c tests/bench/be_intree.c -o "$out/be_intree.o"
gcc -static -o "$out/vfio-bench" "$out/bench.o" "$out/be_ours.o" \
	"$out/be_intree.o"

# ---- one VM boot, all backends -----------------------------------------
# 1 GiB of 2 MiB pages for row 2 plus slack; row 1's 1 GiB of anonymous
# memory and row 3's 400 MiB come on top: the bench machine has 4 GiB.
hugepages=540
args=(--rounds "$rounds" --reps "$reps")
if [ "$quick" = 1 ]; then
	hugepages=40
	args=(--rounds 2 --reps 1 --size-mib 64 --counts "100,1000,10000"
	      --msi-iters 200)
fi
if [ -n "$bench_args" ]; then
	read -r -a extra <<<"$bench_args"
	args+=("${extra[@]}")
fi

log "booting the VM (TCG): in-kernel VFIO, then ours (seed, modern ABI); this takes minutes"
set +e
"$top/tests/vm/run-suite.sh" --machine bench --no-bind \
	--hugepages "$hugepages" \
	--add "$out/vfio-bench" --add tests/bench/guest.sh \
	--timeout 2400 --total-timeout 3000 \
	--run "sh /opt/guest.sh ${args[*]}" 2>&1 | tee "$out/vm-output.txt"
vm_rc=${PIPESTATUS[0]}
set -e
cp "$top/build/vm/console.log" "$out/console.log" 2>/dev/null || true

# ---- table, files, plot ------------------------------------------------
terminal=pngcairo
gnuplot -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1 ||
	terminal=png
rc=0
python3 tests/bench/report.py "$out/vm-output.txt" "$out" \
	--terminal "$terminal" --meta "vm_exit=$vm_rc" \
	--meta "quick=$quick" --meta "date=$(date -u +%FT%TZ)" \
	--meta "commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo none)" ||
	rc=$?
if [ -s "$out/mapping-cost.dat" ] &&
   grep -qv '^#' "$out/mapping-cost.dat"; then
	(cd "$out" && gnuplot mapping-cost.gp) ||
		{ log "gnuplot failed"; rc=1; }
fi

echo
for f in results.csv results.json mapping-cost.png vm-output.txt console.log; do
	[ -e "$out/$f" ] && echo "bench: wrote build/bench/$f"
done
echo "bench: VM run exit status $vm_rc; whole run $(($(date +%s) - start)) s"
# report.py already judged the guest's output; a failing VM run that it
# did not see (the harness itself broke) still fails `make bench`.
[ "$vm_rc" = 0 ] || rc=1
exit "$rc"
