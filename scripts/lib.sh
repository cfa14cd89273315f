# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Shell helpers shared by scripts/ and tests/.  Source it, do not run it:
#   . "$top/scripts/lib.sh"
# The caller keeps its own `set -euo pipefail`; this file only defines
# functions and variables, and runs nothing.

# Lines make prints for a clean module build: kbuild's step lines
# ("  CC [M]  ..."), make's own notes, and BTF being skipped for an
# out-of-tree module.  Anything else in a build log is a warning.
VFIO_BUILD_NOISE='^(  [A-Z]+ |make(\[[0-9]+\])?: |Skipping BTF generation)'

# build_log_clean LOG: true when LOG has nothing but that noise.
build_log_clean() {
	! grep -Ev "$VFIO_BUILD_NOISE" "$1" | grep -q .
}

# host_debian_mirror: print the host's Debian mirror URI, from apt's own
# view of its sources (not the security archive); nothing when apt knows
# none (e.g. its lists were never fetched).
host_debian_mirror() {
	# shellcheck disable=SC2016 # $(...) are apt's fields, not the shell's
	apt-get indextargets --format '$(ORIGIN)|$(REPO_URI)' \
		'Identifier: Packages' 2>/dev/null |
		awk -F'|' '$1 == "Debian" && $2 !~ /security/ && !n++ { print $2 }'
}

# want PKG...: add each PKG that is not installed on the host to the array
# need_pkgs, for the caller to install (or to refuse to) in one go.
need_pkgs=()
want() {
	local pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
			grep -q 'install ok installed' || need_pkgs+=("$pkg")
	done
}
