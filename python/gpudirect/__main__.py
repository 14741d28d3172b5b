# SPDX-License-Identifier: MIT
"""python -m gpudirect [--json] [-d DEVICE]...: the doctor's report, as
gdr-info prints it. Exit status as gdr-info's: 0 when GPUDirect RDMA is
usable, 1 when not, 2 when the report could not be made."""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from . import _lib, GdrError, report
from ._report import _collect


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m gpudirect",
        description="Is GPUDirect RDMA usable on this node? The library's "
        "report, as gdr-info prints it.")
    ap.add_argument("--json", action="store_true",
                    help="the report as JSON (docs/report-schema.json)")
    ap.add_argument("-d", "--device", action="append", metavar="DEVICE",
                    help="report on this RDMA device only (repeatable)")
    a = ap.parse_args(argv)
    try:
        if a.json:
            r = report(a.device)
            json.dump(r, sys.stdout, indent=2)
            sys.stdout.write("\n")
            usable = bool(r.get("gpudirect_rdma_usable"))
        else:
            text, usable = _collect(a.device, _lib.REPORT_TEXT)
            sys.stdout.write(text)
    except GdrError as e:
        print(f"python -m gpudirect: {e}", file=sys.stderr)
        return 2
    return 0 if usable else 1


if __name__ == "__main__":
    sys.exit(main())
