#!/bin/sh
# SPDX-License-Identifier: MIT
# The package is clean and typed: pyflakes over the package and the
# Python tests, mypy --strict over the package. Skips (77) what is not
# installed (tools/run.sh test installs python3-pyflakes and mypy).
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
py=${PYTHON:-python3}
ran=0
rc=0
# TOOL as a module of $py, else Debian's command for it (a python3 on PATH
# that is not the system's, pyenv's say, lacks the system's modules).
tool() { # module, Debian's command
	if "$py" -m "$1" --version > /dev/null 2>&1; then
		echo "$py -m $1"
	elif command -v "$2" > /dev/null 2>&1 && "$2" --version > /dev/null 2>&1; then
		echo "$2"
	fi
}
pyflakes=$(tool pyflakes pyflakes3)
mypy=$(tool mypy mypy)
if [ -n "$pyflakes" ]; then
	ran=1
	# shellcheck disable=SC2086
	if $pyflakes python tests/python tests/gpu/python examples/python; then
		echo "ok   pyflakes: nothing to say"
	else
		echo "FAIL pyflakes"
		rc=1
	fi
else
	echo "SKIP: pyflakes is not installed (apt-get install python3-pyflakes)"
fi
if [ -n "$mypy" ]; then
	ran=1
	# The cache stays out of the tree.
	# shellcheck disable=SC2086
	if $mypy --strict --no-incremental --cache-dir=/dev/null python/gpudirect python/_build; then
		echo "ok   mypy --strict"
	else
		echo "FAIL mypy --strict"
		rc=1
	fi
else
	echo "SKIP: mypy is not installed (apt-get install mypy)"
fi
[ $ran = 1 ] || exit 77
exit $rc
