#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The doctor's JSON on every layout validates against docs/report-schema.json.
Skips (77) only when python3-jsonschema is missing; the verdicts and exit
codes are checked by test-doctor.py, which needs no module.

    check-schema.py GDR_INFO SCHEMA OUTDIR"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layouts  # noqa: E402


def main():
    gdr_info, schema_file, out = sys.argv[1:4]
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
        return 77
    schema = json.load(open(schema_file))
    passed = failed = 0
    for name, root, _, _ in layouts.build_all(out):
        res = subprocess.run([gdr_info, "--root", root, "--json"],
                             capture_output=True, text=True)
        try:
            jsonschema.validate(json.loads(res.stdout), schema)
            passed += 1
        except (ValueError, jsonschema.ValidationError) as e:
            failed += 1
            print("FAIL %s: %s" % (name, getattr(e, "message", e)))
    print("schema: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


sys.exit(main())
