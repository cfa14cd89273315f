#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Package build tests: builds the .deb (dpkg-buildpackage -b) and the .rpm
# (rpmbuild -ba from a tarball) from a copy of the tree outside the
# repository, runs lintian, checks file lists, maintainer scripts and
# dkms.conf, and builds the DKMS source exactly as dkms would (its MAKE
# line) for every installed header tree.  Never installs the packages.
# One "ok - pkg/<case>" / "not ok - pkg/<case>: why" / "skip - ..." line
# per case; exits nonzero when a case failed.
#
#   tests/pkg/run.sh [--deb|--rpm] [--out DIR]
#
# The packages are left in DIR (default build/pkg) for the autopkgtest.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
out=$top/build/pkg
do_deb=1
do_rpm=1
while [ $# -gt 0 ]; do
	case $1 in
	--deb) do_rpm= ;;
	--rpm) do_deb= ;;
	--out) out=$2; shift ;;
	*) echo "usage: $0 [--deb|--rpm] [--out DIR]" >&2; exit 1 ;;
	esac
	shift
done

failed=0
ok() { echo "ok - pkg/$1"; }
nok() { echo "not ok - pkg/$1: $2"; failed=1; }
skip() { echo "skip - pkg/$1: $2"; }
log() { echo "pkg: $*" >&2; }

# --- what it needs, installed when missing -------------------------------

want build-essential debhelper dh-dkms dkms lintian fakeroot python3 kmod \
	rpm rpmlint git
if [ ${#need_pkgs[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "pkg: missing ${need_pkgs[*]}; run as root to install" >&2
		exit 1
	fi
	log "installing ${need_pkgs[*]}"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${need_pkgs[@]}" >&2
fi

work=$(mktemp -d "${TMPDIR:-/var/tmp}/vfio-pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
upstream=${version%-*}
tree=$work/vfio-dkms-$upstream

# The working tree as a fresh clone would have it, plus uncommitted
# edits: tracked and untracked-but-not-ignored files only.
mkdir -p "$tree"
(cd "$top" && git ls-files -z -co --exclude-standard |
	xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' |
	tar --null -cT - | tar -x -C "$tree")
if [ -f "$tree/debian/control" ] && [ -f "$tree/vfio.spec" ]; then
	ok "copy-tree"
else
	nok "copy-tree" "no debian/control or vfio.spec in the copy"
	exit 1
fi

# --- version consistency ----------------------------------------------------

check_versions() {
	local src spec tool
	src=$(sed -n 's/^#define[[:space:]]*VFIO_DKMS_VERSION[[:space:]]*"\(.*\)"/\1/p' \
		"$top/src/vfio.h")
	spec=$(sed -n 's/^Version:[[:space:]]*//p' "$top/vfio.spec")
	tool=$(sed -n 's/^#define VFIOCTL_VERSION "\(.*\)"/\1/p' \
		"$top/tools/vfioctl/vfioctl.h")
	if [ -z "$src" ]; then
		nok versions "no VFIO_DKMS_VERSION in src/vfio.h"
	elif [ "$src" != "$upstream" ] || [ "$spec" != "$upstream" ] ||
		[ "$tool" != "$upstream" ]; then
		nok versions "src/vfio.h $src, debian/changelog $upstream, vfio.spec $spec, vfioctl.h $tool differ"
	elif ! dpkg --compare-versions "$src" gt 0.3; then
		nok versions "MODULE_VERSION $src is not above the in-tree 0.3"
	else
		ok versions
	fi
}
check_versions

# --- Debian ----------------------------------------------------------------

# want_files DEB PATH...: every PATH is in the package.
want_files() {
	local deb=$1 name=$2 p missing=()
	shift 2
	dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/list"
	for p in "$@"; do
		grep -qxF "$p" "$work/list" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		nok "$name" "missing ${missing[*]}"
		return 1
	fi
}

deb_tests() {
	local deb_dkms deb_utils changes s unitdir=/usr/lib/systemd/system
	command -v dh_movetousr >/dev/null || unitdir=/lib/systemd/system
	log "dpkg-buildpackage (log: $work/deb-build.log)"
	if ! (cd "$tree" && dpkg-buildpackage -us -uc -b) \
		>"$work/deb-build.log" 2>&1; then
		nok deb-build "dpkg-buildpackage failed: $(tail -n 5 \
			"$work/deb-build.log" | tr '\n' ' ')"
		return
	fi
	ok deb-build
	if grep -q '^host: [0-9]* passed, 0 failed' "$work/deb-build.log"; then
		ok deb-build-ran-host-tests
	else
		nok deb-build-ran-host-tests "no clean host test summary in the build log"
	fi
	deb_dkms=$work/vfio-dkms_${version}_all.deb
	deb_utils=$(echo "$work"/vfio-utils_"${version}"_*.deb)
	changes=$(echo "$work"/vfio-dkms_"${version}"_*.changes)
	cp "$work"/*.deb "$changes" "$work"/*.buildinfo "$out"/

	# Run as an unprivileged user when there is one: lintian says so.
	# Every tag down to pedantic fails; an override must give its reason.
	# Bookworm's lintian still has the info tag for a unit without an
	# init.d script, which trixie's dropped; the unit runs once at boot
	# and README.Debian says what to run without systemd.
	if lintian --pedantic --display-info --tag-display-limit 0 \
		--suppress-tags package-supports-alternative-init-but-no-init.d-script \
		--fail-on error,warning,info,pedantic \
		"$changes" >"$work/lintian.log" 2>&1; then
		ok lintian
	else
		nok lintian "$(grep -E '^[EWIP]: ' "$work/lintian.log" |
			tr '\n' ';' | head -c 600)"
	fi

	want_files "$deb_dkms" deb-files-vfio-dkms \
		"/usr/src/vfio-dkms-$upstream/dkms.conf" \
		"/usr/src/vfio-dkms-$upstream/Kbuild" \
		"/usr/src/vfio-dkms-$upstream/Makefile" \
		"/usr/src/vfio-dkms-$upstream/vfio_main.c" \
		"/usr/src/vfio-dkms-$upstream/pci/vfio_pci.c" \
		"/usr/src/vfio-dkms-$upstream/include/uapi/vfio.h" \
		/usr/lib/modprobe.d/vfio-dkms.conf \
		/usr/lib/udev/rules.d/70-vfio-dkms.rules \
		/usr/include/vfio-dkms/vfio.h &&
	if grep -Eq '^/usr/include/linux/|\.(o|ko|cmd|mod)$|\.mod\.c$' \
		"$work/list"; then
		nok deb-files-vfio-dkms "ships $(grep -E \
			'^/usr/include/linux/|\.(o|ko|cmd|mod)$' "$work/list" |
			head -n 3 | tr '\n' ' ')"
	else
		ok deb-files-vfio-dkms
	fi

	want_files "$deb_utils" deb-files-vfio-utils /usr/sbin/vfioctl \
		"$unitdir/vfio-bind.service" /etc/vfio/devices.conf \
		/usr/share/man/man8/vfioctl.8.gz \
		/usr/share/man/man5/devices.conf.5.gz &&
		ok deb-files-vfio-utils

	# Nothing ships in the aliased /lib, /bin or /sbin: with merged /usr,
	# dpkg can lose a file moved between the two spellings.  The one
	# exception is the unit where this debhelper's dh_installsystemd
	# needs it, when it has no dh_movetousr (bookworm).
	local unit_ok='^$'
	command -v dh_movetousr >/dev/null ||
		unit_ok='^\./lib/(systemd/(system/(vfio-bind\.service)?)?)?$'
	dpkg-deb -c "$deb_dkms" >"$work/list"
	dpkg-deb -c "$deb_utils" >>"$work/list"
	awk '{print $6}' "$work/list" | grep -Ev "$unit_ok" |
		grep -E '^\./(lib|lib64|bin|sbin)/.' >"$work/aliased" || true
	if [ -s "$work/aliased" ]; then
		nok deb-usr-paths "$(tr '\n' ' ' <"$work/aliased")"
	else
		ok deb-usr-paths
	fi

	# dkms.conf as installed: version filled in, both modules, updates/dkms.
	mkdir -p "$work/x-dkms" "$work/x-utils"
	dpkg-deb -x "$deb_dkms" "$work/x-dkms"
	dpkg-deb -x "$deb_utils" "$work/x-utils"
	s=$work/x-dkms/usr/src/vfio-dkms-$upstream
	if ! grep -qx "PACKAGE_VERSION=\"$upstream\"" "$s/dkms.conf"; then
		nok deb-dkms-conf "PACKAGE_VERSION not $upstream"
	elif [ "$(grep -c '^DEST_MODULE_LOCATION\[[01]\]="/updates/dkms"$' \
		"$s/dkms.conf")" -ne 2 ] ||
		! grep -qx 'BUILT_MODULE_NAME\[0\]="vfio"' "$s/dkms.conf" ||
		! grep -qx 'BUILT_MODULE_NAME\[1\]="vfio_pci"' "$s/dkms.conf" ||
		! grep -qx 'AUTOINSTALL="yes"' "$s/dkms.conf"; then
		nok deb-dkms-conf "modules, locations or AUTOINSTALL wrong"
	else
		ok deb-dkms-conf
	fi

	dpkg-deb -e "$deb_dkms" "$work/c-dkms"
	dpkg-deb -e "$deb_utils" "$work/c-utils"
	if grep -qx /etc/vfio/devices.conf "$work/c-utils/conffiles"; then
		ok deb-conffile
	else
		nok deb-conffile "/etc/vfio/devices.conf is not a conffile"
	fi
	if grep -q "deb-systemd-helper enable 'vfio-bind.service'" \
		"$work/c-utils/postinst" &&
		grep -q 'vfioctl unbind-all' "$work/c-utils/prerm" &&
		grep -q 'rm -rf /etc/vfio' "$work/c-utils/postrm" &&
		grep -q 'common.postinst' "$work/c-dkms/postinst" &&
		grep -q 'dkms remove' "$work/c-dkms/prerm" &&
		grep -q 'vfioctl unbind-all' "$work/c-dkms/prerm"; then
		ok deb-maintainer-scripts
	else
		nok deb-maintainer-scripts "enable, unbind-all, purge or dkms hooks missing"
	fi
	local script bad=
	for script in "$work"/c-*/p*; do
		sh -n "$script" || bad="$bad ${script#"$work"/}"
	done
	if [ -n "$bad" ]; then
		nok deb-maintainer-scripts-syntax "sh -n fails:$bad"
	else
		ok deb-maintainer-scripts-syntax
	fi

	if dpkg-deb -f "$deb_dkms" Depends | grep -q 'dkms' &&
		dpkg-deb -f "$deb_utils" Depends |
		grep -qF "vfio-dkms (= $version)"; then
		ok deb-depends
	else
		nok deb-depends "vfio-dkms must depend on dkms, vfio-utils on vfio-dkms (= $version)"
	fi

	# The shipped configuration is valid and configures nothing.
	mkdir -p "$work/emptysys/bus/pci/devices"
	if "$work/x-utils/usr/sbin/vfioctl" --sysfs-root "$work/emptysys" \
		--config "$work/x-utils/etc/vfio/devices.conf" check \
		>"$work/check.out" 2>&1 && grep -q 'ok, 0 entries' "$work/check.out"; then
		ok deb-default-config
	else
		nok deb-default-config "$(tr '\n' ' ' <"$work/check.out")"
	fi

	modprobe_conf "$work/x-dkms/usr/lib/modprobe.d/vfio-dkms.conf"
	intree_guard "$work/x-dkms/usr/lib/vfio-dkms/intree-guard"
	dkms_exclusive "$work/x-dkms/usr/src/vfio-dkms-$upstream/dkms.conf"

	# The rules as shipped run only the packaged vfioctl, with commands
	# it has (Debian 12's udevadm cannot verify rules itself).
	local cmds
	cmds=$("$work/x-utils/usr/sbin/vfioctl" --help |
		awk '/^commands:/ { f = 1; next } /^exit:/ { f = 0 }
		     f { print $1 }' | paste -sd, -)
	if "$here/check-udev-rules.py" \
		"$work/x-dkms/usr/lib/udev/rules.d/70-vfio-dkms.rules" \
		"/usr/sbin/vfioctl:$cmds" >"$work/rules.log" 2>&1 &&
		[ -x "$work/x-utils/usr/sbin/vfioctl" ]; then
		ok udev-rules
	else
		nok udev-rules "$(tr '\n' ' ' <"$work/rules.log" | head -c 400)"
	fi

	# The unit as shipped, pointed at the packaged vfioctl (this host
	# has none in /usr/sbin).
	if command -v systemd-analyze >/dev/null; then
		mkdir -p "$work/unit"
		sed "s|/usr/sbin/vfioctl|$work/x-utils/usr/sbin/vfioctl|" \
			"$work/x-utils$unitdir/vfio-bind.service" \
			>"$work/unit/vfio-bind.service"
		if systemd-analyze verify --man=no \
			"$work/unit/vfio-bind.service" >"$work/verify.log" 2>&1; then
			ok systemd-unit-verify
		else
			nok systemd-unit-verify "$(tr '\n' ' ' <"$work/verify.log" |
				head -c 400)"
		fi
	else
		skip systemd-unit-verify "no systemd-analyze on this machine"
	fi

	dkms_builds "$s"
}

# The modprobe.d file must never refuse our own module names (modprobe.d
# knows names, not files), and must refuse every in-tree module that
# links against the in-tree core, as depmod of a distribution kernel's
# modules (the cached guest kernel, dry run) shows them.
modprobe_conf() {
	local conf=$1 blocked root k name missing=() n=0
	blocked=$(awk '$1 == "install" && $3 == "/usr/lib/vfio-dkms/intree-guard" &&
		$4 == $2 && $5 == "$CMDLINE_OPTS" { print $2 }' "$conf")
	if grep -qxE 'vfio|vfio_pci' <<<"$blocked"; then
		nok modprobe-conf "refuses our own vfio or vfio_pci"
		return
	fi
	if ! grep -qx 'softdep vfio_pci pre: vfio' "$conf"; then
		nok modprobe-conf "no softdep vfio_pci pre: vfio"
		return
	fi
	for root in "${VFIO_CACHE:-/var/cache/vfio-dkms}"/kernel-*; do
		[ -d "$root/lib/modules" ] || continue
		for k in "$root"/lib/modules/*; do
			k=${k##*/}
			n=$((n + 1))
			for name in $(depmod -n -b "$root" "$k" 2>/dev/null |
				awk -F: '$2 ~ /kernel\/drivers\/vfio\/vfio\.ko/ { print $1 }'); do
				name=${name##*/}
				name=${name%%.ko*}
				name=${name//-/_}
				[ "$name" = vfio_pci ] && continue
				grep -qx "$name" <<<"$blocked" || missing+=("$name($k)")
			done
		done
	done
	if [ ${#missing[@]} -gt 0 ]; then
		nok modprobe-conf "not refused: ${missing[*]}"
	elif [ "$n" -eq 0 ]; then
		skip modprobe-conf "no distribution kernel modules cached (scripts/setup.sh)"
	else
		ok modprobe-conf
	fi
}

# intree-guard refuses an in-tree module exactly on the kernels that have
# our vfio.ko in updates/dkms, and otherwise hands the name and options
# to modprobe --ignore-install (a stub here, on a fake module tree).
# vfio_iommu_type1 and vfio_virqfd are answered with our vfio there,
# type1's options named as not applied.
intree_guard() {
	local guard=$1 t kver out rc bad=
	t=$(mktemp -d)
	kver=$(uname -r)
	mkdir -p "$t/bin" "$t/mods/$kver/updates/dkms"
	printf '#!/bin/sh\necho "modprobe $*"\n' >"$t/bin/modprobe"
	chmod +x "$t/bin/modprobe"
	guard_run() {
		out=$(PATH=$t/bin:$PATH VFIO_DKMS_MODULES=$t/mods \
			"$guard" "$@" 2>&1) && rc=0 || rc=$?
	}
	guard_run vfio_iommu_type1 disable_hugepages=1
	if [ "$rc" -ne 0 ] || [ "$out" != "modprobe --ignore-install vfio_iommu_type1 disable_hugepages=1" ]; then
		bad="without our vfio.ko: exit $rc, \"$out\""
	fi
	touch "$t/mods/$kver/updates/dkms/vfio.ko.xz"
	guard_run vfio_pci_core
	if [ -z "$bad" ] && { [ "$rc" -eq 0 ] || [[ $out == *"modprobe "* ]] ||
	   [[ $out != *"vfio-dkms replaces"* ]]; }; then
		bad="vfio_pci_core with our vfio.ko: exit $rc, \"$out\""
	fi
	guard_run vfio_iommu_type1
	if [ -z "$bad" ] && { [ "$rc" -ne 0 ] || [ "$out" != "modprobe vfio" ]; }; then
		bad="vfio_iommu_type1 with our vfio.ko: exit $rc, \"$out\""
	fi
	guard_run vfio_virqfd
	if [ -z "$bad" ] && { [ "$rc" -ne 0 ] || [ "$out" != "modprobe vfio" ]; }; then
		bad="vfio_virqfd with our vfio.ko: exit $rc, \"$out\""
	fi
	guard_run vfio_iommu_type1 allow_unsafe_interrupts=1
	if [ -z "$bad" ] && { [ "$rc" -ne 0 ] ||
	   [[ $out != *"not applied: allow_unsafe_interrupts=1 ("*$'\n'"modprobe vfio" ]]; }; then
		bad="vfio_iommu_type1 with options and our vfio.ko: exit $rc, \"$out\""
	fi
	rm -rf "$t"
	if [ -n "$bad" ]; then
		nok intree-guard "$bad"
	else
		ok intree-guard
	fi
}

# BUILD_EXCLUSIVE_KERNEL admits the kernels of the test matrix and every
# 7.x, and nothing else.
dkms_exclusive() {
	local excl k wrong=()
	excl=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$1")
	for k in 6.1.0-57-amd64 6.1.0-57-cloud-amd64 6.12.95+deb12-amd64 \
		6.12.57+deb13-amd64 7.2.1+deb14-amd64 7.3.4+deb13-amd64 \
		7.10.2-amd64; do
		[[ $k =~ $excl ]] || wrong+=("refuses $k")
	done
	for k in 5.10.0-30-amd64 6.6.15-amd64 6.11.2-amd64 6.13.1-amd64 \
		8.0.1-amd64 16.1.0; do
		[[ $k =~ $excl ]] && wrong+=("admits $k")
	done
	if [ ${#wrong[@]} -gt 0 ]; then
		nok dkms-exclusive "${wrong[*]}"
	else
		ok dkms-exclusive
	fi
}

# dkms_make DIR KVER KDIR: run dkms.conf's MAKE[0] in DIR with the
# variables dkms sets for it.
dkms_make() (
	cd "$1"
	# shellcheck disable=SC2034 # read by the eval'd MAKE line
	kernelver=$2 kernel_source_dir=$3
	# shellcheck disable=SC1091
	. ./dkms.conf
	eval "MAKEFLAGS=-j2 ${MAKE[0]}"
)

# Build the packaged module source the way dkms does: its MAKE line with
# $kernelver and $kernel_source_dir, for every header tree dkms would
# accept (BUILD_EXCLUSIVE_KERNEL), into a scratch copy.
dkms_builds() {
	local src=$1 build k kdir excl n=0
	excl=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$src/dkms.conf")
	for kdir in /lib/modules/*/build /usr/src/linux-headers-*-amd64 \
		"${VFIO_CACHE:-/var/cache/vfio-dkms}"/kernels/*/usr/src/linux-headers-*-amd64; do
		[ -f "$kdir/Makefile" ] || continue
		k=$(basename "$(dirname "$kdir")")
		[ "$k" = modules ] || [ "$k" = src ] && k=${kdir##*/linux-headers-}
		[ -z "$excl" ] || [[ $k =~ $excl ]] || continue
		[ -e "$work/dkms-$k" ] && continue
		n=$((n + 1))
		build=$work/dkms-$k
		cp -a "$src" "$build"
		log "DKMS build for $k"
		if ! dkms_make "$build" "$k" "$kdir" >"$build.log" 2>&1; then
			nok "dkms-build-$k" "$(grep -m 3 -E 'error|Error' "$build.log" |
				tr '\n' ' ' | head -c 400)"
			continue
		fi
		local m v bad=
		for m in vfio vfio_pci; do
			if [ ! -f "$build/$m.ko" ]; then
				bad="no $m.ko"
				break
			fi
			v=$(modinfo -F version "$build/$m.ko")
			if [ "$v" != "$upstream" ]; then
				bad="$m.ko version \"$v\", want $upstream"
				break
			fi
			if ! modinfo -F vermagic "$build/$m.ko" | grep -q "^$k "; then
				bad="$m.ko vermagic is not $k"
				break
			fi
		done
		if [ -n "$bad" ]; then
			nok "dkms-build-$k" "$bad"
		else
			ok "dkms-build-$k"
		fi
	done
	[ "$n" -gt 0 ] || skip dkms-build "no kernel headers installed"
}

# --- RPM ------------------------------------------------------------------

rpm_tests() {
	local top_rpm=$work/rpmbuild tarball rpms name
	mkdir -p "$top_rpm/SOURCES"
	tarball=$top_rpm/SOURCES/vfio-dkms-$upstream.tar.gz
	tar -C "$work" -czf "$tarball" --exclude=debian "vfio-dkms-$upstream"
	log "rpmbuild (log: $out/rpm-build.log)"
	# --nodeps: BuildRequires name Fedora packages, not in this rpm db.
	if ! rpmbuild -ba --nodeps --define "_topdir $top_rpm" \
		--load "$here/rpm-macros" "$tree/vfio.spec" \
		>"$out/rpm-build.log" 2>&1; then
		nok rpm-build "rpmbuild failed: $(tail -n 5 "$out/rpm-build.log" |
			tr '\n' ' ')"
		return
	fi
	ok rpm-build
	rpms=$top_rpm/RPMS
	# Fedora's rpmlint: no error and no warning, in the spec or a package.
	if rpmlint -r "$tree/vfio.rpmlintrc" "$tree/vfio.spec" "$rpms"/*/*.rpm \
		"$top_rpm"/SRPMS/*.rpm >"$out/rpmlint.log" 2>&1; then
		ok rpmlint
	else
		nok rpmlint "$(grep -E ': [EW]: ' "$out/rpmlint.log" |
			tr '\n' ';' | head -c 600)"
	fi
	cp "$rpms"/*/*.rpm "$top_rpm"/SRPMS/*.rpm "$out"/
	name=$(ls "$rpms"/*/vfio-dkms-"$upstream"-*.rpm)
	rpm -qlp "$name" >"$work/rpm-dkms.list"
	if grep -qx "/usr/src/vfio-dkms-$upstream/dkms.conf" "$work/rpm-dkms.list" &&
		grep -qx "/usr/src/vfio-dkms-$upstream/vfio_main.c" "$work/rpm-dkms.list" &&
		grep -qx /usr/lib/modprobe.d/vfio-dkms.conf "$work/rpm-dkms.list" &&
		grep -qx /usr/lib/udev/rules.d/70-vfio-dkms.rules "$work/rpm-dkms.list" &&
		grep -qx /usr/include/vfio-dkms/vfio.h "$work/rpm-dkms.list" &&
		! grep -Eq '\.(o|ko)$' "$work/rpm-dkms.list"; then
		ok rpm-files-vfio-dkms
	else
		nok rpm-files-vfio-dkms "$(tr '\n' ' ' <"$work/rpm-dkms.list" | head -c 400)"
	fi
	# Module sources and scripts only: one package for every architecture.
	if [ "$(rpm -qp --qf '%{ARCH}' "$name")" = noarch ]; then
		ok rpm-dkms-noarch
	else
		nok rpm-dkms-noarch "vfio-dkms is $(rpm -qp --qf '%{ARCH}' "$name")"
	fi
	name=$(ls "$rpms"/*/vfio-utils-"$upstream"-*.rpm)
	rpm -qlp "$name" >"$work/rpm-utils.list"
	if grep -qx /usr/sbin/vfioctl "$work/rpm-utils.list" &&
		grep -qx /usr/lib/systemd/system/vfio-bind.service "$work/rpm-utils.list" &&
		grep -qx /usr/lib/systemd/system-preset/80-vfio-utils.preset "$work/rpm-utils.list" &&
		grep -qx /etc/vfio/devices.conf "$work/rpm-utils.list" &&
		grep -q '^/usr/share/man/man8/vfioctl.8' "$work/rpm-utils.list" &&
		grep -q '^/usr/share/man/man5/devices.conf.5' "$work/rpm-utils.list"; then
		ok rpm-files-vfio-utils
	else
		nok rpm-files-vfio-utils "$(tr '\n' ' ' <"$work/rpm-utils.list" | head -c 400)"
	fi
	if rpm -qp --configfiles "$name" | grep -qx /etc/vfio/devices.conf; then
		ok rpm-config-file
	else
		nok rpm-config-file "/etc/vfio/devices.conf is not %config"
	fi
	rpm -qp --scripts "$(ls "$rpms"/*/vfio-dkms-"$upstream"-*.rpm)" \
		>"$work/rpm-dkms.scripts"
	rpm -qp --scripts "$name" >"$work/rpm-utils.scripts"
	if grep -q 'dkms add' "$work/rpm-dkms.scripts" &&
		grep -q 'dkms install' "$work/rpm-dkms.scripts" &&
		! grep -q -- '--force' "$work/rpm-dkms.scripts" &&
		grep -q 'build for kernel .* failed' "$work/rpm-dkms.scripts" &&
		grep -q 'dkms remove' "$work/rpm-dkms.scripts" &&
		grep -q 'systemctl --no-reload preset vfio-bind.service' \
			"$work/rpm-utils.scripts" &&
		grep -q 'vfioctl unbind-all' "$work/rpm-utils.scripts"; then
		ok rpm-scripts
	else
		nok rpm-scripts "dkms add/install/remove, a reported build failure, preset or unbind-all missing, or a dkms --force"
	fi
	if rpm -qp --requires "$name" | grep -q "^vfio-dkms = $upstream" &&
		rpm -qp --requires "$(ls "$rpms"/*/vfio-dkms-"$upstream"-*.rpm)" |
		grep -q '^kmod'; then
		ok rpm-requires
	else
		nok rpm-requires "vfio-utils does not require vfio-dkms = $upstream, or vfio-dkms not kmod"
	fi
}

[ -z "$do_deb" ] || deb_tests
[ -z "$do_rpm" ] || rpm_tests
log "packages in $out"
exit "$failed"
