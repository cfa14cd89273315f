#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The packages a chroot of another release needs to build ours, one per
# line: the Build-Depends of debian/control, the first of alternatives,
# build profiles off, virtual names as they are (apt picks the provider
# of debhelper-compat or dh-sequence-dkms).
#   scripts/build-deps.sh [CONTROL]     default: debian/control
set -euo pipefail

control=${1:-$(dirname "$0")/../debian/control}
exec perl -MDpkg::Control::Info -MDpkg::Deps -e '
	my $c = Dpkg::Control::Info->new($ARGV[0])->get_source;
	my $d = deps_parse($c->{"Build-Depends"} // "", build_dep => 1,
			   reduce_restrictions => 1, build_profiles => []);
	for my $x ($d->get_deps) {
		($x) = $x->get_deps if $x->isa("Dpkg::Deps::Union");
		print $x->{package}, "\n";
	}' "$control"
