#!/bin/sh
# SPDX-License-Identifier: MIT
# The valgrind test setup's wrapper: memcheck with leaks as errors. Without
# valgrind the test reports a skip (77) and why, never a pass.
if ! command -v valgrind > /dev/null 2>&1; then
	echo "SKIP: valgrind is not installed (apt-get install valgrind)"
	exit 77
fi
vg="valgrind --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --child-silent-after-fork=yes"
# A test that is a shell script runs its programs under valgrind itself
# ($GDR_VALGRIND): the shell's own leaks are not the tests'.
if [ "$(head -c 2 "$1" 2> /dev/null)" = "#!" ]; then
	GDR_VALGRIND=$vg
	export GDR_VALGRIND
	exec "$@"
fi
# shellcheck disable=SC2086
exec $vg "$@"
