#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python package installs from the tree into a fresh virtual
# environment with nothing from a package index (pip install --no-index:
# the build backend is the standard library, python/_build/), imports
# from there, and registers memory with the build's library over the
# stand-in libibverbs; the tree is left as it was.
#   check-install.sh BUILD_DIR
b=$(cd "${1:?build dir}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=${PYTHON:-python3}
if ! "$py" -c 'import ensurepip, venv' 2> /dev/null; then
	echo "SKIP: $py has no venv/ensurepip (apt-get install python3-venv)"
	exit 77
fi
fail() {
	echo "FAIL: $*"
	[ -f "$tmp/log" ] && sed 's/^/     /' "$tmp/log"
	exit 1
}
before=$(cd "$top" && git status --porcelain -- python 2> /dev/null)
"$py" -m venv "$tmp/venv" > "$tmp/log" 2>&1 || fail "python3 -m venv"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/pip" install --no-index \
	--no-cache-dir "$top/python" > "$tmp/log" 2>&1 ||
	fail "pip install --no-index $top/python"
echo "ok   pip install --no-index ./python into a fresh venv: $(tail -n 1 "$tmp/log")"
cd "$tmp" || exit 1
env -u PYTHONPATH STANDIN_LOG="$tmp/standin.log" \
	LD_LIBRARY_PATH="$b/tests/fakes/libibverbs:$b/lib" \
	GPUDIRECT_LIBRARY="$b/lib/libgpudirect.so.1" \
	"$tmp/venv/bin/python" - "$tmp/venv" > "$tmp/log" 2>&1 << 'PY' || fail "import and register from the venv"
import sys
import gpudirect
assert gpudirect.__file__.startswith(sys.argv[1]), gpudirect.__file__
b = bytearray(4096)
with gpudirect.ProtectionDomain() as pd, pd.register(b) as mr:
    assert mr.length == 4096 and mr.path == "host", mr
print("imported from", gpudirect.__file__, "and registered:", mr.path)
PY
echo "ok   $(tail -n 1 "$tmp/log")"
"$tmp/venv/bin/python" -m gpudirect --help > "$tmp/log" 2>&1 ||
	fail "python -m gpudirect --help"
echo "ok   python -m gpudirect --help"
after=$(cd "$top" && git status --porcelain -- python 2> /dev/null)
[ "$before" = "$after" ] || fail "the install changed the tree: $after"
echo "ok   the tree is as it was"
