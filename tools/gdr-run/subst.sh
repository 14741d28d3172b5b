#!/bin/sh
# SPDX-License-Identifier: MIT
# subst.sh PRELOAD IN OUT: IN with @PRELOAD@ replaced by the path PRELOAD,
# written inside a single-quoted shell word (so that no character of an
# install prefix is read by the shell), as the executable OUT.
set -eu
q=$(printf '%s' "$1" | sed "s/'/'\\\\''/g")
r=$(printf '%s' "$q" | sed 's/[\\&|]/\\&/g')
sed "s|@PRELOAD@|$r|" "$2" > "$3"
chmod 755 "$3"
