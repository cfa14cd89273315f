#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fill, in the background, the caches that the late stages of
# `make check` need, while the early stages run:
#   - the autopkgtest testbed images (bookworm, trixie),
#   - the build chroots of trixie and trixie-backports,
#   - the debug kernel.
# From cold caches these cost about 30 minutes of a run; most of it
# waits on the mirror or on one CPU, while the stages in front leave the
# other one idle.  sid's chroot is not among them: the matrix stage
# makes it, at full priority, while it boots the other rows' kernels.
#
# run-tests.sh starts this at idle CPU and I/O priority (SCHED_IDLE,
# ionice idle), so the stages in the foreground lose nothing but what
# they leave unused.  Each cache has its own lock: the stage that needs
# one waits for what this started, then reuses it.  A failure here costs
# only time: the stage does the work again and reports it.
#
# One line per cache on stdout: "warm: NAME: done in N s" or
# "warm: NAME: failed (status N) after N s, log: FILE".
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
logdir=${BUILD_DIR:-$top/build}/warm
mkdir -p "$logdir"

fill() {	# name, command...
	local name=$1 start=$SECONDS rc=0
	shift
	"$@" >"$logdir/$name.log" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "warm: $name: done in $((SECONDS - start)) s"
	else
		echo "warm: $name: failed (status $rc) after $((SECONDS - start)) s, log: $logdir/$name.log"
	fi
}

# In the order the stages need them: the autopkgtest stage starts right
# after set-up, beside the others, and its bookworm testbed wants only
# its image; the trixie one also wants the trixie chroot to build the
# packages in; the matrix, later, the chroots.  Downloads and dpkg,
# mostly one CPU at a time.
# The trixie chroot gets at once what the autopkgtest stage builds the
# trixie packages with, before trixie-backports is copied from it.  sid
# is left to the matrix: a stage that waits for a cache this script is
# still filling waits on a task that gets no CPU while the stage's own
# VMs run.
userlands() {
	local deps=()
	mapfile -t deps < <(scripts/build-deps.sh || true)
	fill image-bookworm tests/autopkgtest/build-image.sh bookworm
	fill chroot-trixie scripts/chroot.sh trixie "${deps[@]}" lintian
	fill image-trixie tests/autopkgtest/build-image.sh trixie
	fill chroot-trixie-backports scripts/chroot.sh trixie-backports
}

# The debug stage comes before the autopkgtest one; its kernel build
# takes every CPU left.
userlands &
fill debug-kernel tests/debug/build-kernel.sh
wait
