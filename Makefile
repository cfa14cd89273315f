# SPDX-License-Identifier: GPL-2.0-only
#
# vfio-dkms top level.  The two commands a newcomer needs:
#   make demo    install what is missing, build, boot a VM, run the example
#   make check   every test; ends with "N passed, N failed, N skipped"

SHELL := /bin/bash

all: modules tools

modules:
	scripts/build-modules.sh

tools:
	$(MAKE) -C tools

check:
	tests/run-tests.sh

demo:
	tests/vm/demo.sh

# Ours against the kernel's own VFIO in one VM boot.
bench:
	tests/bench/run.sh

# The Debian package's autopkgtest in a QEMU VM.
autopkgtest:
	tests/autopkgtest/run.sh

include tests/pkg/Makefile.inc

clean:
	$(MAKE) -C tools clean
	rm -rf build

.PHONY: all modules tools check demo bench autopkgtest clean
