#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/run.sh mutants: run-mutants.py in OUTDIR (default build-mutants).
out=${1:-build-mutants}
[ $# -gt 0 ] && shift
exec python3 "$(dirname "$0")/run-mutants.py" "$out" "$@"
