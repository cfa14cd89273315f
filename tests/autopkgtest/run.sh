#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make autopkgtest`: the Debian package's own tests (debian/tests), run
# the way a distribution's CI runs them: build the .debs, boot a Debian
# image in QEMU (TCG, q35, Intel IOMMU with interrupt remapping, two edu
# devices; see qemu-tcg.sh), and let autopkgtest install the packages and
# run each test in it.
#   run.sh [SUITE]
# SUITE is bookworm (Debian 12, packages built on this host) or trixie
# (Debian 13, packages built in scripts/chroot.sh's trixie chroot, with
# their build dependencies installed there).  Without SUITE: bookworm,
# then trixie, each in a VM of its own, then each one's lines and a
# result line per suite.
#
# Prints one "ok - autopkgtest/<test>" / "not ok - ..." line per test (a
# test skipped here is "not ok": this machine has all it needs), each
# followed by the test's own "check:" lines, and the time of each stage;
# for a suite other than bookworm the names are
# "autopkgtest/<suite>/<test>".  The full logs stay in
# $VFIO_CACHE/autopkgtest/run (bookworm) and run-<suite>.
set -euo pipefail
# The whole script is one block, read before it runs: editing the file
# during a run (a long one, here) cannot change what the run does.
{

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/autopkgtest
CACHE=${VFIO_CACHE:-/var/cache/vfio-dkms}
RAM_MIB=${VFIO_AUTOPKGTEST_RAM:-3072}
DEFAULT_SUITE=bookworm
ALL_SUITES=(bookworm trixie)

# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

# ---- tools ---------------------------------------------------------------
# What this host runs the stage with (its own release's packages), made
# complete before the suites start: two suites installing at once would
# race for apt's locks, and the second one fail.
if [ "$(id -u)" -ne 0 ]; then
	echo "not ok - autopkgtest/setup: must run as root (apt-get, mmdebstrap)"
	exit 1
fi
want autopkgtest mmdebstrap qemu-system-x86 qemu-utils e2fsprogs \
	dpkg-dev debhelper dh-dkms build-essential python3
if ! install_wanted; then
	echo "not ok - autopkgtest/setup: cannot install ${need_pkgs[*]}"
	exit 1
fi

# No suite: every suite, each in a run of its own, both testbeds at
# once (VFIO_AUTOPKGTEST_JOBS=1: one after the other), then each run's
# lines (in suite order after both, or as they come when one at a time)
# and one line per suite.  One testbed keeps two CPUs two-thirds busy:
# side by side, both suites take about as long as one and a half.
if [ $# -eq 0 ]; then
	jobs=${VFIO_AUTOPKGTEST_JOBS:-2}
	live=/dev/null
	[ "$jobs" -gt 1 ] || live=/dev/stdout
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	running=()
	for suite in "${ALL_SUITES[@]}"; do
		if [ ${#running[@]} -ge "$jobs" ]; then
			wait "${running[0]}" || true
			running=("${running[@]:1}")
		fi
		echo "# suite $suite: started"
		(
			set +e
			start=$(date +%s)
			# One at a time, the lines show as they come.
			"$0" "$suite" | tee "$tmp/$suite.out" >"$live"
			echo "${PIPESTATUS[0]} $(($(date +%s) - start))" >"$tmp/$suite.rc"
		) &
		running+=("$!")
	done
	wait
	rc=0
	results=()
	for suite in "${ALL_SUITES[@]}"; do
		if [ "$live" = /dev/null ]; then
			echo "# suite $suite"
			cat "$tmp/$suite.out"
		fi
		read -r src secs <"$tmp/$suite.rc"
		[ "$src" -eq 0 ] || rc=1
		results+=("$(printf '%s: %d ok, %d not ok, exit %d, %d s' "$suite" \
			"$(grep -c '^ok - ' "$tmp/$suite.out" || true)" \
			"$(grep -c '^not ok - ' "$tmp/$suite.out" || true)" "$src" "$secs")")
	done
	printf '# suite %s\n' "${results[@]}"
	exit "$rc"
fi
[ $# -eq 1 ] || { echo "usage: $0 [SUITE]" >&2; exit 2; }
SUITE=$1
case " ${ALL_SUITES[*]} " in
*" $SUITE "*) ;;
*) echo "run.sh: unknown suite $SUITE (${ALL_SUITES[*]})" >&2; exit 2 ;;
esac
# Test names: autopkgtest/<test> for the default suite (as before there
# were others), autopkgtest/<suite>/<test> for the others.
if [ "$SUITE" = "$DEFAULT_SUITE" ]; then
	pfx=autopkgtest
	work=$CACHE/autopkgtest/run
else
	pfx=autopkgtest/$SUITE
	work=$CACHE/autopkgtest/run-$SUITE
fi
host_suite=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)

log() { echo "autopkgtest: $*" >&2; }
t0=$(date +%s)
stage_start=$t0
timings=()
stage_done() {
	local now
	now=$(date +%s)
	timings+=("$1 $((now - stage_start)) s")
	echo "# time: $1 $((now - stage_start)) s"
	stage_start=$now
}
bail() {
	echo "not ok - $pfx/$1: $2"
	[ -z "${3:-}" ] || tail -n 40 "$3" | sed 's/^/#   /'
	exit 1
}

# ---- packages --------------------------------------------------------------
# Two runs of one suite would share (and delete) one work directory.
mkdir -p "$CACHE/autopkgtest"
exec 8>"$work.lock"
if ! flock -n 8; then
	log "another run of $SUITE holds $work.lock; waiting"
	flock -w 3600 8 || bail setup "gave up waiting for $work.lock"
fi
# Two copies of the tree outside the repository: one to build in, and a
# pristine one that autopkgtest copies into the testbed (the tests run in
# it, and user-driver builds the example driver from it).  The previous
# run's files stay, as $work.prev, until the next run.
rm -rf "$work.prev"
[ ! -d "$work" ] || mv "$work" "$work.prev"
mkdir -p "$work/build" "$work/src" "$work/debs"
copy_tree() {
	mkdir -p "$1"
	tar -C "$top" --exclude=./.git --exclude=./build -cf - . |
		tar -C "$1" -xf -
}
copy_tree "$work/build/vfio-dkms"
copy_tree "$work/src/vfio-dkms"

# The host tests already ran in `make check` (the package's build-time
# check runs them again, as "nocheck" leaves them to that stage).
build_env=(DEB_BUILD_OPTIONS="nocheck parallel=2")
if [ "$SUITE" = "$host_suite" ]; then
	# The build dependencies, from debian/control, as a user would get
	# them.
	if ! (cd "$work/build/vfio-dkms" && dpkg-checkbuilddeps) >/dev/null 2>&1; then
		log "installing the build dependencies"
		(cd "$work/build/vfio-dkms" &&
			DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq ./) >&2
	fi
	stage_done tools

	log "dpkg-buildpackage -us -uc -b"
	if ! (cd "$work/build/vfio-dkms" && env "${build_env[@]}" \
		dpkg-buildpackage -us -uc -b) >"$work/dpkg-buildpackage.log" 2>&1; then
		bail build "dpkg-buildpackage -us -uc -b failed" \
			"$work/dpkg-buildpackage.log"
	fi
	mv "$work"/build/*.deb "$work/debs/"
else
	# Another release's packages are built with its own toolchain, in
	# its chroot (never on this host), with the build dependencies of
	# debian/control installed there.
	deps=$("$top/scripts/build-deps.sh") ||
		bail build "cannot read the build dependencies of debian/control"
	# shellcheck disable=SC2086 # one package name per word
	env=$("$top/scripts/chroot.sh" "$SUITE" $deps lintian \
		2>"$work/chroot.log") ||
		bail build "scripts/chroot.sh $SUITE failed" "$work/chroot.log"
	CHROOT=$(sed -n 's/^CHROOT=//p' <<<"$env")
	[ -d "$CHROOT" ] || bail build "scripts/chroot.sh printed no chroot" "$work/chroot.log"
	stage_done tools

	log "dpkg-buildpackage -us -uc -b in $CHROOT"
	inner=/tmp/vfio-autopkgtest.$$
	rm -rf "$CHROOT$inner"
	copy_tree "$CHROOT$inner/vfio-dkms"
	if ! chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/tmp LC_ALL=C.UTF-8 "${build_env[@]}" \
		sh -c "cd $inner/vfio-dkms && dpkg-checkbuilddeps && dpkg-buildpackage -us -uc -b" \
		>"$work/dpkg-buildpackage.log" 2>&1; then
		rm -rf "$CHROOT$inner"
		bail build "dpkg-buildpackage -us -uc -b failed in the $SUITE chroot" \
			"$work/dpkg-buildpackage.log"
	fi
	# That release's lintian on what its own debhelper built: every tag
	# down to pedantic fails, as in the pkg stage on bookworm.
	if chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/tmp LC_ALL=C.UTF-8 sh -c "cd $inner && lintian --allow-root \
		--pedantic --display-info --tag-display-limit 0 \
		--fail-on error,warning,info,pedantic ./*.changes" \
		>"$work/lintian.log" 2>&1; then
		echo "ok - $pfx/lintian"
	else
		echo "not ok - $pfx/lintian: $(grep -E '^[EWIP]: ' "$work/lintian.log" |
			tr '\n' ';' | head -c 600)"
	fi
	mv "$CHROOT$inner"/*.deb "$work/debs/"
	rm -rf "$CHROOT$inner"
fi
echo "# built: $(cd "$work/debs" && echo ./*.deb | sed 's|\./||g')"
# Since trixie nothing ships in the aliased /lib, /bin or /sbin (the pkg
# stage checks bookworm's packages, whose unit has to stay in /lib).
if [ "$SUITE" != bookworm ]; then
	aliased=$(for deb in "$work"/debs/*.deb; do dpkg-deb -c "$deb"; done |
		awk '{print $6}' | grep -E '^\./(lib|lib64|bin|sbin)/.' |
		tr '\n' ' ' || true)
	if [ -n "$aliased" ]; then
		echo "not ok - $pfx/usr-paths: $aliased"
	else
		echo "ok - $pfx/usr-paths"
	fi
fi
stage_done packages

# ---- image -----------------------------------------------------------------
image_dir=$("$here/build-image.sh" "$SUITE" 2>"$work/build-image.log" | tail -n 1) ||
	bail image "build-image.sh failed" "$work/build-image.log"
[ -f "$image_dir/done" ] ||
	bail image "build-image.sh printed no image directory" "$work/build-image.log"
echo "# image: $image_dir ($(cat "$image_dir/kver"); built in: $(cat "$image_dir/timing"))"
stage_done image

# ---- the tests ---------------------------------------------------------------
# No VM lock: the testbeds run beside the guest suite's VM (run-tests.sh
# starts this stage in the background), each on one vCPU thread, so the
# three share the two host cores instead of waiting for each other.

export VFIO_AUTOPKGTEST_IMAGE_DIR=$image_dir
export VFIO_QEMU_LOG=$work/qemu-command.log
# The .debs reach the testbed as a local apt repository, the way a
# distribution's CI offers the archive, and not as autopkgtest binaries:
# autopkgtest reinstalls those before every test, and every reinstall of
# vfio-dkms is a DKMS removal and a rebuild in the emulated machine
# (three minutes each).  --no-built-binaries: the tests get exactly these
# .debs (the "@" in debian/tests/control), not a rebuild of the tree.
repo=/var/cache/vfio-autopkgtest-debs
setup="set -e; cd $repo; apt-ftparchive packages . >Packages
echo 'deb [trusted=yes] file:$repo ./' >/etc/apt/sources.list.d/vfio-autopkgtest.list
apt-get -q -o Dir::Etc::sourcelist=/etc/apt/sources.list.d/vfio-autopkgtest.list -o Dir::Etc::sourceparts=/dev/null -o APT::Get::List-Cleanup=0 update"
# autopkgtest-virt-qemu copies the host's /etc/timezone into every
# testbed it opens with "dpkg-reconfigure tzdata" and gives that 30 s:
# alone, bookworm's takes 20 s of them under TCG, so beside the other
# suite's testbed it runs out and the open fails, on the retry too.  The
# images are in UTC whatever the host's zone, and no test reads local
# time: autopkgtest runs in a mount namespace of its own where the file
# is empty, which it takes for "no host timezone", and skips the step.
# The host's file stays as it is.
no_host_tz() {
	if [ -f /etc/timezone ]; then
		unshare --mount --propagation private sh -c \
			'mount --bind /dev/null /etc/timezone && exec "$@"' sh "$@"
	else
		"$@"
	fi
}
# --timeout-reboot bounds every boot's wait for the login prompt: a
# one-vCPU trixie testbed booting beside the other one and the kbuild
# stage's compilers once took over 300 s.
run_autopkgtest() {	# [--test-name=NAME...]
	rm -rf "$work/out" "$work/summary"
	no_host_tz autopkgtest --no-built-binaries \
		--output-dir="$work/out" --summary-file="$work/summary" \
		--copy="$work/debs:$repo" --setup-commands="$setup" \
		"$@" "$work/src/vfio-dkms/" \
		-- "$here/virt-qemu-tcg" --qemu-command="$here/qemu-tcg.sh" \
		--qemu-architecture=x86_64 \
		--ram-size="$RAM_MIB" --cpus=1 --timeout-reboot=900 \
		--overlay-dir="$work" \
		"$image_dir/image.qcow2" >"$work/autopkgtest.log" 2>&1
}
# A testbed that fails before any test ran is the emulator, not us:
# autopkgtest-virt-qemu gives the emulated console a few seconds to show
# a prompt, which a loaded machine under TCG sometimes misses.  Try once
# more then.  The summary of such a run holds only the "testbed failure"
# line.
tests_ran() {
	grep -qv '^testbed failure' "$work/summary" 2>/dev/null
}
set +e
for attempt in 1 2; do
	run_autopkgtest
	rc=$?
	if [ "$rc" -ne 16 ] || tests_ran || [ "$attempt" -eq 2 ]; then
		break
	fi
	cp "$work/autopkgtest.log" "$work/autopkgtest-attempt1.log"
	log "testbed failed before any test ran (log: $work/autopkgtest-attempt1.log); trying once more"
done
# The same prompt can come late after a test's reboot, with tests done
# already: then only the tests from there on are lost.  Run those once
# more in a fresh testbed, and report both runs' results together.
tests_left() {
	local t
	awk '$1 == "Tests:" { for (i = 2; i <= NF; i++) print $i }' \
		"$work/src/vfio-dkms/debian/tests/control" |
		while read -r t; do
			awk -v t="$t" '$1 == t { f = 1 } END { exit !f }' \
				"$work/summary" || echo "$t"
		done
}
if [ "$rc" -eq 16 ] && tests_ran; then
	left=()
	mapfile -t left < <(tests_left)
	if [ ${#left[@]} -gt 0 ]; then
		rm -rf "$work/out-attempt1"
		mv "$work/out" "$work/out-attempt1"
		grep -v '^testbed failure' "$work/summary" >"$work/summary-attempt1"
		cp "$work/autopkgtest.log" "$work/autopkgtest-attempt1.log"
		log "testbed failed after some tests (log: $work/autopkgtest-attempt1.log); running ${left[*]} once more"
		run_autopkgtest "${left[@]/#/--test-name=}"
		rc=$?
		cat "$work/summary-attempt1" "$work/summary" >"$work/summary.both"
		mv "$work/summary.both" "$work/summary"
		mkdir -p "$work/out"
		cat "$work/out-attempt1/log" "$work/out/log" >"$work/log.both"
		mv "$work/log.both" "$work/out/log"
		cp -n "$work/out-attempt1/"*-std* "$work/out/" 2>/dev/null
	fi
fi
set -e
stage_done tests

# ---- report ------------------------------------------------------------------
# Exit codes (autopkgtest(1)): 0 all passed, 2 some skipped, 4 some
# failed, 6 both, 8 no tests, 12 installation failed, 16 testbed failure,
# 20 other.
if [ ! -s "$work/summary" ]; then
	bail run "autopkgtest exited $rc before any test ran" \
		"$work/autopkgtest.log"
fi

# Per-test duration from autopkgtest's timestamped log lines.
declare -A secs
while read -r name s; do
	secs[$name]=$s
done < <(awk '
	function sec(t,  a) { split(t, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
	/^autopkgtest \[[0-9:]+\]: test [^:]+: / {
		t = substr($2, 2, 8); n = $4; sub(/:$/, "", n)
		if (!(n in first)) { first[n] = sec(t); order[++k] = n }
		last[n] = sec(t)
	}
	END { for (i = 1; i <= k; i++) print order[i], last[order[i]] - first[order[i]] }
' "$work/out/log")

failed=0
while read -r name result detail; do
	out=$work/out/$name-stdout
	t=${secs[$name]:-?}
	case $result in
	PASS)
		echo "ok - $pfx/$name (${t} s)"
		;;
	SKIP)
		# The machine of qemu-tcg.sh has every device the tests want:
		# a skip here means the machine is not what it should be.
		echo "not ok - $pfx/$name: skipped in the machine built to run it: ${detail:-}"
		failed=1
		;;
	*)
		echo "not ok - $pfx/$name: $result ${detail:-} (${t} s)"
		failed=1
		;;
	esac
	if [ -f "$out" ]; then
		grep -E '^(check|note|skip|FAIL|\+ |    )' "$out" |
			sed 's/^/#   /' || true
	fi
	if [ "$result" != PASS ] && [ -f "$work/out/$name-stderr" ]; then
		tail -n 15 "$work/out/$name-stderr" | sed 's/^/#   stderr: /'
	fi
done <"$work/summary"

if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && [ "$rc" -ne 2 ]; then
	echo "not ok - $pfx/run: autopkgtest exited $rc"
	tail -n 30 "$work/autopkgtest.log" | sed 's/^/#   /'
	failed=1
fi

echo "# time: $SUITE total $(($(date +%s) - t0)) s (${timings[*]})"
echo "# logs: $work/autopkgtest.log, $work/out/"
exit "$failed"
}
