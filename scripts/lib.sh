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

# host_apt ARGS: the host's apt-get, waiting up to 15 minutes for a dpkg
# lock that another script may hold.
host_apt() {
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 "$@"
}

# install_wanted: install what want() collected (the host's own release
# only); then forget the list.
install_wanted() {
	[ "${#need_pkgs[@]}" -gt 0 ] || return 0
	echo "installing ${need_pkgs[*]}" >&2
	host_apt install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2 ||
		{ host_apt update -qq >&2 &&
		  host_apt install -y -qq --no-install-recommends \
			"${need_pkgs[@]}" >&2; } ||
		return 1
	need_pkgs=()
}

# Guest kernels built from source (tests/debug, tests/bench) share these.
# A tree lives in DIR/linux, its modules are installed under DIR/modroot,
# and DIR/done marks a finished build.
#
# kconfig_check FRAG CONFIG: true when every option fragment FRAG sets or
# unsets is so in CONFIG.  Kconfig drops an option whose dependencies are
# missing with no more than a warning, and a guest kernel silently without
# one (KASAN, iommufd) would make its stage meaningless; each mismatch is
# named on stderr.
kconfig_check() {
	local frag=$1 config=$2 bad=0 line opt
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$config" || {
				echo "config: want '$line', have '$(grep -E "^(# )?${line%%=*}[= ]" "$config" || echo unset)'" >&2
				bad=1
			} ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -qE "^$opt=" "$config"; then
				echo "config: want $opt unset, have '$(grep -E "^$opt=" "$config")'" >&2
				bad=1
			fi ;;
		esac
	done <"$frag"
	return "$bad"
}

# kernel_build DIR JOBS: build bzImage and the modules of DIR/linux at low
# priority, install the modules under DIR/modroot and mark DIR done, with
# the seconds since $SECONDS was 0 in DIR/build-seconds.  The log is
# DIR/build.log; its tail goes to stderr on failure.
kernel_build() {
	local dir=$1 jobs=$2
	if ! (cd "$dir/linux" && nice -n 10 make ARCH=x86_64 -j"$jobs" \
		bzImage modules >"$dir/build.log" 2>&1); then
		tail -n 20 "$dir/build.log" >&2
		echo "kernel build failed, see $dir/build.log" >&2
		return 1
	fi
	rm -rf "$dir/modroot"
	(cd "$dir/linux" && make ARCH=x86_64 INSTALL_MOD_PATH="$dir/modroot" \
		modules_install >>"$dir/build.log" 2>&1) || {
		echo "modules_install failed, see $dir/build.log" >&2
		return 1
	}
	echo "$SECONDS" >"$dir/build-seconds"
	touch "$dir/done"
}

# kernel_emit PREFIX DIR: the shell assignments a stage evals to boot the
# kernel of DIR: PREFIX_KERNEL (the image), PREFIX_KDIR (the tree, for
# make -C ... M=), PREFIX_KVER, PREFIX_MODULES (its installed modules)
# and PREFIX_BUILD_SECONDS.
kernel_emit() {
	local p=$1 dir=$2 kver
	kver=$(cat "$dir/linux/include/config/kernel.release")
	echo "${p}_KERNEL=$dir/linux/arch/x86/boot/bzImage"
	echo "${p}_KDIR=$dir/linux"
	echo "${p}_KVER=$kver"
	echo "${p}_MODULES=$dir/modroot/lib/modules/$kver"
	echo "${p}_BUILD_SECONDS=$(cat "$dir/build-seconds")"
}
