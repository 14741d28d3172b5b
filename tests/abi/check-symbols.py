#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shared library exports exactly the functions its headers declare:
include/gpudirect.h under GPUDIRECT_<release> nodes, lib/private/
gpudirect-private.h under GPUDIRECT_PRIVATE_<this release>; every symbol
carries a version; the released 0.1 node is unchanged; nothing clashes with
gdrcopy's exports. The reference is the headers, never the version script.

    check-symbols.py LIBRARY SOURCE_ROOT VERSION"""
import re
import subprocess
import sys

RELEASED = {
    # Released nodes never change: what 0.1 exported, programs built
    # against it bind to.
    "GPUDIRECT_0.1": {
        "gdr_register", "gdr_register_ex", "gdr_deregister", "gdr_last_error",
        "gdr_path_str", "gdr_path_parse", "gdr_mem_type_str",
        "gdr_report_create", "gdr_report_destroy", "gdr_report_num_items",
        "gdr_report_item", "gdr_report_usable", "gdr_report_print"},
}
GDRCOPY = {
    "gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_pin_buffer_v2",
    "gdr_unpin_buffer", "gdr_map", "gdr_map_v2", "gdr_unmap", "gdr_get_info",
    "gdr_get_info_v2", "gdr_copy_to_mapping", "gdr_copy_from_mapping",
    "gdr_get_attribute", "gdr_runtime_get_version", "gdr_driver_get_version",
    "gdr_get_mapping_type_string", "gdr_get_callback_flag",
    "gdr_set_callback_flag"}


def declared(header):
    """Function names a header declares (comments and macros ignored)."""
    text = open(header).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", " ", text, flags=re.M)
    text = re.sub(r'extern\s+"C"\s*\{', " ", text)
    names = set()
    for stmt in text.split(";"):
        m = re.search(r"\b(gdr_\w+)\s*\(", stmt)
        # A declaration: a return type before the name, not a struct body.
        if m and "{" not in stmt[:m.start()] and re.search(
                r"[\w*]\s*\**\s*$", stmt[:m.start()].strip() + " "):
            names.add(m.group(1))
    return names


def main():
    lib, src, version = sys.argv[1:4]
    major_minor = ".".join(version.split(".")[:2])
    private_node = "GPUDIRECT_PRIVATE_" + major_minor
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                         text=True, check=True).stdout
    exported = {}  # name -> set of nodes
    problems = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in "TDBRVWi":
            continue
        sym = parts[2]
        if "@" not in sym:
            problems.append("%s carries no version" % sym)
            continue
        name, node = re.split(r"@@?", sym, maxsplit=1)
        exported.setdefault(name, set()).add(node)

    public = declared(src + "/include/gpudirect.h")
    private = declared(src + "/lib/private/gpudirect-private.h")
    for name, nodes in sorted(exported.items()):
        for node in nodes:
            if node == private_node:
                if name not in private:
                    problems.append("%s@%s is not declared in "
                                    "gpudirect-private.h" % (name, node))
            elif re.fullmatch(r"GPUDIRECT_\d+\.\d+", node):
                if name not in public:
                    problems.append("%s@%s is not declared in gpudirect.h"
                                    % (name, node))
            else:
                problems.append("%s@%s: unknown node (private symbols go in "
                                "%s)" % (name, node, private_node))
        if name in GDRCOPY:
            problems.append("%s is also exported by gdrcopy" % name)
    for name in sorted(public - set(exported)):
        problems.append("%s is declared in gpudirect.h but not exported" % name)
    for name in sorted(private - set(exported)):
        problems.append("%s is declared in gpudirect-private.h but not "
                        "exported" % name)
    for name in sorted(public & private):
        problems.append("%s is declared in both headers" % name)
    for node, names in RELEASED.items():
        have = {n for n, nodes in exported.items() if node in nodes}
        if have != names:
            problems.append("released node %s changed: %s" % (
                node, ", ".join(sorted(have ^ names))))
    for p in problems:
        print("FAIL " + p)
    print("symbols: %d public and %d private functions exported, %d "
          "versions each checked" % (len(public), len(private),
                                     sum(len(v) for v in exported.values())))
    print("%d passed, %d failed" % (0 if problems else 1, 1 if problems else 0))
    return 1 if problems else 0


sys.exit(main())
