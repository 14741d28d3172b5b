#!/bin/sh
# SPDX-License-Identifier: MIT
# The valgrind test setup's wrapper: memcheck with leaks as errors. Without
# valgrind the test reports a skip (77) and why, never a pass.
if ! command -v valgrind > /dev/null 2>&1; then
	echo "SKIP: valgrind is not installed (apt-get install valgrind)"
	exit 77
fi
exec valgrind --error-exitcode=1 --leak-check=full \
	--show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect \
	--child-silent-after-fork=yes "$@"
