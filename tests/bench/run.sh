#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make bench`: ours against the newest in-kernel VFIO.  Builds vfio-bench
# (static, all backends) and runs it in two VM boots (tests/vm/run-suite.sh
# --no-bind --run of tests/bench/guest.sh):
#
#   newest    the newest Debian 13 backports kernel built with iommufd and
#             the vfio cdev (tests/bench/build-kernel.sh, cached): in one
#             boot the in-kernel type1, the in-kernel iommufd, ours
#             through the seed ABI and ours through the container ABI,
#             plus DPDK testpmd through the in-kernel vfio-pci and ours;
#             its table is build/bench/results.{csv,json} and results.png
#   debian12  Debian 12's 6.1 (the default guest kernel), fewer rounds,
#             no iommufd: the old comparison, in build/bench/debian12/
#
#   tests/bench/run.sh [--quick] [--rounds N] [--reps N] [--runs "..."]
#                      [--bench-args "..."]
#
# The backends alternate N rounds (default 5) of R repetitions (default 1)
# each, so every figure is a median of N * R, shown with min and max.
# --quick: small sizes and two rounds (a smoke test of the plumbing,
# numbers not meaningful).  Exit status 0 when every run produced every
# backend's figures; a missed target is reported, not a failure.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tests/bench/run.sh [--quick] [--rounds N] [--reps N] [--runs "..."]
                          [--bench-args "..."]
  --quick             small sizes, 2 rounds: checks the plumbing only
  --rounds N          times the backends alternate (default 5; the
                      debian12 run takes 3 unless this is given)
  --runs "R..."       which boots: newest, debian12 (default both)
  --reps N            repetitions of every measurement per round (default 1)
  --bench-args "..."  more vfio-bench options (e.g. --rows msi,bar0)
EOF
}

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$top/build/bench
rounds=
reps=1
runs="newest debian12"
quick=0
bench_args=

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--rounds) rounds=$2; shift ;;
	--reps) reps=$2; shift ;;
	--runs) runs=$2; shift ;;
	--bench-args) bench_args=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "bench: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
for n in "${rounds:-5}" "$reps"; do
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

for r in $runs; do
	case $r in
	newest|debian12) ;;
	*) echo "bench: unknown run '$r' (newest, debian12)" >&2; exit 2 ;;
	esac
done
# The newest kernel, built once with iommufd (about 40 minutes on two
# cores, then cached); its uapi headers build the iommufd backend even
# when only the debian12 run is wanted.
eval "$("$top/tests/bench/build-kernel.sh")"
# The testpmd row's DPDK: Debian 12's dpdk-testpmd in the clients tree
# (built once, cached), shared with the guest over 9p.
clients=$("$top/tests/parity/rootfs.sh")

# Only the runs asked for lose their old results.
mkdir -p "$out"
for r in $runs; do
	case $r in
	newest) rm -f "$out"/results.* "$out"/*.png "$out"/*.gp \
		"$out"/*.dat "$out"/*.txt "$out"/console.log ;;
	debian12) rm -rf "$out/debian12" ;;
	esac
done

# ---- the benchmark program ---------------------------------------------
# Translation units that must never see each other's header: the
# in-kernel backend gets the distribution's <linux/vfio.h> only, ours gets
# src/include, iommufd the newest kernel's vfio.h and iommufd.h (the
# host's may predate them).  be_intree.c is also the container backend: our
# module serves that header's ABI too.
cflags=(-static -O2 -Wall -Wextra -Werror -Itests/bench)
cd "$top"
log "building vfio-bench"
gcc "${cflags[@]}" -c tests/bench/bench.c -o "$out/bench.o"
gcc "${cflags[@]}" -Isrc/include -c tests/bench/be_ours.c -o "$out/be_ours.o"
gcc "${cflags[@]}" -c tests/bench/be_intree.c -o "$out/be_intree.o"
gcc "${cflags[@]}" -I"$VFIO_BENCH_UAPI" -c tests/bench/be_iommufd.c -o "$out/be_iommufd.o"
gcc -static -o "$out/vfio-bench" "$out/bench.o" "$out/be_ours.o" \
	"$out/be_intree.o" "$out/be_iommufd.o"

# ---- one VM boot per kernel, all backends in it --------------------------
# 1 GiB of 2 MiB pages for the hugetlbfs row plus slack, and the testpmd
# pool; the 4 KiB and THP rows' 1 GiB of anonymous memory, the 1 GiB
# page of the machine profile and row 3's 400 MiB come on top.
hugepages=640
args=(--reps "$reps")
if [ "$quick" = 1 ]; then
	hugepages=140
	args=(--reps 1 --size-mib 64 --counts "100,1000,10000" --msi-iters 200)
	rounds=2
fi
if [ -n "$bench_args" ]; then
	read -r -a extra <<<"$bench_args"
	args+=("${extra[@]}")
fi

terminal=pngcairo
gnuplot -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1 ||
	terminal=png
rc=0

bench_boot() {	# name, output dir, rounds, run-suite.sh kernel options...
	local name=$1 dir=$2 n=$3 vm_rc gp
	shift 3
	mkdir -p "$dir"
	log "$name: booting the VM (TCG), $n rounds; this takes a while"
	set +e
	"$top/tests/vm/run-suite.sh" --machine bench --no-bind \
		--hugepages "$hugepages" "$@" \
		--intree virtio_pci --intree 9pnet_virtio --intree 9p \
		--qemu-args "-virtfs local,path=$clients,mount_tag=clients,security_model=none,readonly=on" \
		--add "$out/vfio-bench" --add tests/bench/guest.sh \
		--add tests/bench/testpmd.sh \
		--timeout 2400 --total-timeout 5400 \
		--run "sh /opt/guest.sh --rounds $n ${args[*]}" 2>&1 |
		tee "$dir/vm-output.txt"
	vm_rc=${PIPESTATUS[0]}
	set -e
	cp "$top/build/vm/console.log" "$dir/console.log" 2>/dev/null || true
	python3 tests/bench/report.py "$dir/vm-output.txt" "$dir" \
		--terminal "$terminal" --meta "run=$name" \
		--meta "vm_exit=$vm_rc" --meta "quick=$quick" \
		--meta "date=$(date -u +%FT%TZ)" \
		--meta "commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo none)" ||
		rc=1
	for gp in "$dir"/*.gp; do
		[ -e "$gp" ] || continue
		(cd "$dir" && gnuplot "$(basename "$gp")") ||
			{ log "$name: gnuplot $(basename "$gp") failed"; rc=1; }
	done
	# report.py judged the guest's output; a failing VM run that it did
	# not see (the harness itself broke) still fails `make bench`.
	[ "$vm_rc" = 0 ] || { log "$name: VM run exit status $vm_rc"; rc=1; }
}

for r in $runs; do
	case $r in
	newest)
		bench_boot newest "$out" "${rounds:-5}" \
			--kernel "$VFIO_BENCH_KERNEL" --kver "$VFIO_BENCH_KVER" \
			--kdir "$VFIO_BENCH_KDIR" --modules "$VFIO_BENCH_MODULES" ;;
	debian12)
		bench_boot debian12 "$out/debian12" "${rounds:-3}" ;;
	esac
done

echo
for f in results.csv results.json results.png mapping-cost.png \
	 debian12/results.csv debian12/results.png; do
	[ -e "$out/$f" ] && echo "bench: wrote build/bench/$f"
done
echo "bench: whole run $(($(date +%s) - start)) s"
exit "$rc"
