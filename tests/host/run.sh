#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host unit tests of vfioctl: builds the parser test and a vfioctl linked
# against the fake kernel (fake_kernel.c), runs both, and ends with
# "host: N passed, N failed, N skipped".  Needs only a C compiler, python3
# (to validate JSON) and a shell; installs them when missing and root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
src=$top/tools/vfioctl

need=()
command -v cc >/dev/null || need+=(gcc libc6-dev)
[ -x /usr/bin/python3 ] || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "host: missing ${need[*]} (run as root to install)" >&2
		exit 1
	fi
	apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vfio-host.XXXXXX")
trap 'rm -rf "$work"' EXIT

cflags=(-O1 -g -Wall -Wextra -Werror -I"$src")
lib=("$src"/config.c "$src"/confedit.c "$src"/sysfs.c "$src"/inuse.c "$src"/pciids.c "$src"/bind.c "$src"/boot.c
	"$src"/plan.c "$src"/json.c "$src"/commands.c "$src"/doctor.c "$src"/vfioctl.c)
cc "${cflags[@]}" -o "$work/test_config" "$here/test_config.c" \
	"$src/config.c"
cc "${cflags[@]}" -o "$work/vfioctl-fake" "${lib[@]}" "$here/fake_kernel.c"
# The real binary must build too (its sysfs_io.c is the only difference).
cc "${cflags[@]}" -o "$work/vfioctl" "${lib[@]}" "$src/sysfs_io.c"

out=$work/out
mkdir -p "$work/scratch"
rc=0
"$work/test_config" "$work/scratch" >"$out" || rc=1
# The distribution's interpreter, not whatever "python3" PATH finds
# first: a version manager's shim (pyenv's) costs 0.4 s a start, a
# minute over the 170 starts of test_vfioctl.sh.
PYTHON=/usr/bin/python3 VFIOCTL="$work/vfioctl-fake" "$here/test_vfioctl.sh" "$work" >>"$out" || rc=1
cat "$out"

pass=$(grep -c '^ok - ' "$out" || true)
fail=$(grep -c '^not ok - ' "$out" || true)
skip=$(grep -c '^skip - ' "$out" || true)
echo "host: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$rc" -eq 0 ]
