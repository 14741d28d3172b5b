#!/bin/sh
# SPDX-License-Identifier: MIT
# The Kubernetes examples against the API schema of a pinned Kubernetes
# release (kubernetes-validate, strict: no unknown fields), yamllint, and
# the policy checks of checkov: every checkov failure must be an exception
# listed, with its reason, in policy-exceptions.txt (check-policy.py).
# All three come from PyPI into a virtual environment of their own.
#   sh tests/kubernetes/check-manifests.sh VENV_DIR
# Exits 77 (skip) when PyPI cannot be reached.
set -u
cd "$(dirname "$0")/../.."
venv=${1:?venv dir}
k8s=1.34.0
pins="kubernetes-validate==1.34.1 yamllint==1.35.1 checkov==3.3.30"

if [ ! -x "$venv/bin/kubernetes-validate" ] || [ ! -x "$venv/bin/yamllint" ] ||
	[ ! -x "$venv/bin/checkov" ]; then
	rm -rf "$venv"
	if ! python3 -m venv "$venv" > /dev/null 2>&1; then
		echo "SKIP: python3 -m venv failed (install python3-venv)"
		exit 77
	fi
	# shellcheck disable=SC2086
	if ! timeout 300 "$venv/bin/pip" install -q --disable-pip-version-check $pins \
		> "$venv/pip.log" 2>&1; then
		tail -n 5 "$venv/pip.log"
		# The reason, as pip gave it.
		if grep -q 'CERTIFICATE_VERIFY_FAILED\|SSLError\|certificate verify' "$venv/pip.log"; then
			why="pip could not verify the TLS certificate of PyPI or of a proxy in between (add the proxy's CA to the system store, or set PIP_CERT)"
		elif grep -qi 'resolve\|unreachable\|timed out\|connection' "$venv/pip.log"; then
			why="pip could not reach PyPI (no network access from here?)"
		else
			why="pip could not install $pins: $(tail -n 1 "$venv/pip.log")"
		fi
		echo "SKIP: $why"
		rm -rf "$venv"
		exit 77
	fi
fi
rc=0
"$venv/bin/kubernetes-validate" -k "$k8s" --strict examples/kubernetes/*.yaml || rc=1
"$venv/bin/yamllint" -s -c tests/kubernetes/yamllint.yaml examples/kubernetes || rc=1
# checkov offline: no policy download, no guideline lookup
report=$(mktemp) || exit 1
trap 'rm -f "$report"' EXIT
BC_SKIP_MAPPING=TRUE "$venv/bin/checkov" -d examples/kubernetes --framework kubernetes \
	-o json --quiet --skip-download > "$report" 2> "$report.err"
ckrc=$?
# checkov exits 1 when a check fails; the comparison decides
if [ $ckrc -gt 1 ]; then
	cat "$report.err"
	echo "checkov failed to run (exit $ckrc)"
	rc=1
elif ! python3 tests/kubernetes/check-policy.py "$report" tests/kubernetes/policy-exceptions.txt; then
	rc=1
fi
rm -f "$report.err"
[ $rc = 0 ] && echo "manifests: valid for Kubernetes $k8s (strict), yamllint clean, checkov clean but for the listed exceptions"
exit $rc
