#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Debian symbols file of libgpudirect1, from the version script: each
symbol with the release whose node first holds it (GPUDIRECT_0.2 -> 0.2.0;
the private node pins the release that built it).

    gen-symbols.py lib/libgpudirect.map > debian/libgpudirect1.symbols"""
import re
import sys


def main():
    text = re.sub(r"/\*.*?\*/", " ", open(sys.argv[1]).read(), flags=re.S)
    print("libgpudirect.so.1 libgpudirect1 #MINVER#")
    print("* Build-Depends-Package: libgpudirect-dev")
    lines = []
    for node, body in re.findall(r"(GPUDIRECT_\w+\.\w+)\s*\{(.*?)\}", text, re.S):
        version = re.search(r"(\d+)\.(\d+)$", node).groups()
        release = "%s.%s.0" % version
        lines.append(" %s@%s %s" % (node, node, release))
        glob = body.split("local:")[0].replace("global:", "")
        for sym in re.findall(r"([A-Za-z_]\w*)\s*;", glob):
            lines.append(" %s@%s %s" % (sym, node, release))
    print("\n".join(sorted(lines)))


main()
