#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of lib/, checked on what was built and on the sources:

 - the object graph (which object defines and which uses each symbol, from
   nm of the internal static library) has no cycle; a cycle is printed with
   the symbol of each edge;
 - every edge goes to the same layer or a lower one, in the order of
   lib_layers in lib/meson.build;
 - every #include "..." of a file under lib/LAYER/ names a header of its
   own layer or a lower one (the private interface is the top layer,
   private/, and only its own files include it).

    check-layers.py SOURCE_ROOT LIBGPUDIRECT_INTERNAL_A"""
import glob
import os
import re
import subprocess
import sys


def layers_of(src):
    text = open(os.path.join(src, "lib", "meson.build")).read()
    m = re.search(r"lib_layers\s*=\s*\[([^\]]*)\]", text)
    return re.findall(r"'([^']+)'", m.group(1)) if m else []


def objects(archive, layers):
    """{object: (layer, file)}, {symbol: defining object}, {object: uses}."""
    out = subprocess.run(["nm", "-A", archive], capture_output=True, text=True,
                         check=True).stdout
    defs, uses, where = {}, {}, {}
    for line in out.splitlines():
        head, _, rest = line.rpartition(":")
        obj = os.path.basename(head.split(":")[-1])
        parts = rest.split()
        m = re.match(r"(%s)_(.+)\.c\.o$" % "|".join(map(re.escape, layers)), obj)
        if not m:
            continue
        where[obj] = (m.group(1), m.group(2) + ".c")
        uses.setdefault(obj, set())
        if len(parts) == 3 and parts[1] in "TDBRVWCG":
            defs[parts[2]] = obj
        elif len(parts) == 2 and parts[0] == "U":
            uses[obj].add(parts[1])
    return where, defs, uses


def cycle(edges):
    """A cycle of the graph as a list of nodes, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main():
    src, archive = sys.argv[1], sys.argv[2]
    layers = layers_of(src)
    rank = {l: i for i, l in enumerate(layers)}
    problems = []
    if not layers:
        problems.append("lib/meson.build has no lib_layers list")
    where, defs, uses = objects(archive, layers)
    if len(where) < 10:
        problems.append("only %d objects of the layers in %s" % (len(where), archive))
    edges, why = {}, {}
    for a, syms in uses.items():
        for s in sorted(syms):
            b = defs.get(s)
            if b and b != a:
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), s)
    name = lambda o: "%s/%s" % where[o]
    c = cycle(edges)
    if c:
        problems.append("a cycle: " + " -> ".join(
            "%s (%s)" % (name(x), why[(x, y)]) for x, y in zip(c, c[1:])) +
            " -> " + name(c[-1]))
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if rank[where[b][0]] > rank[where[a][0]]:
                problems.append("%s calls up into %s (%s)" % (name(a), name(b), why[(a, b)]))
    # The headers: whose layer each one is.
    owner = {}
    for l in layers:
        for h in glob.glob(os.path.join(src, "lib", l, "*.h")):
            owner[os.path.basename(h)] = l
    n_inc = 0
    for l in layers:
        for f in sorted(glob.glob(os.path.join(src, "lib", l, "*.[ch]"))):
            for inc in re.findall(r'^#include "([^"]+)"', open(f).read(), re.M):
                n_inc += 1
                rel = os.path.relpath(f, src)
                if os.path.basename(inc) == "gpudirect-private.h":
                    if l != "private":
                        problems.append("%s includes the private interface (private/ only)" % rel)
                    continue
                if inc == "gpudirect.h":
                    continue
                h = owner.get(os.path.basename(inc))
                if h is None:
                    problems.append("%s includes %s, which no layer owns" % (rel, inc))
                elif rank[h] > rank[l]:
                    problems.append("%s (%s) includes %s of the higher layer %s"
                                    % (rel, l, inc, h))
    for p in problems:
        print("FAIL " + p)
    print("layers %s: %d objects, %d edges, %d includes checked" % (
        " < ".join(layers), len(where), sum(len(v) for v in edges.values()), n_inc))
    print("%d passed, %d failed" % (0 if problems else 1, 1 if problems else 0))
    return 1 if problems else 0


sys.exit(main())
