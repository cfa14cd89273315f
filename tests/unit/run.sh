#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build and run the host unit tests of the core's pure helpers.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${BUILD_DIR:-$top/build}/unit
mkdir -p "$out"

status=0
for src in "$here"/test_*.c; do
	bin=$out/$(basename "$src" .c)
	gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$top/src" \
		-o "$bin" "$src"
	"$bin" || status=1
done
exit $status
