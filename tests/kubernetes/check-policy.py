#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""checkov's JSON report on examples/kubernetes against the exceptions
file: every failure must be listed there with its reason, and every listed
exception must still fail (a stale line hides nothing, so it must go).
    check-policy.py REPORT.json EXCEPTIONS.txt
"""
import json
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        report = json.load(f)
    reports = report if isinstance(report, list) else [report]
    allowed = {}
    with open(sys.argv[2], encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                print(f"{sys.argv[2]}:{n}: want CHECK RESOURCE REASON")
                return 1
            allowed[(parts[0], parts[1])] = parts[2]
    failed = set()
    passed = parse_errors = 0
    for r in reports:
        if r.get("check_type") != "kubernetes":
            continue
        passed += r["summary"]["passed"]
        parse_errors += r["summary"]["parsing_errors"]
        for c in r["results"]["failed_checks"]:
            failed.add((c["check_id"], c["resource"]))
            if (c["check_id"], c["resource"]) not in allowed:
                print(f"FAIL {c['check_id']} {c['resource']} "
                      f"({c['file_path']}): {c['check_name']}")
    rc = 0
    if parse_errors or passed == 0:
        print(f"checkov parsed nothing ({parse_errors} parsing errors)")
        rc = 1
    if failed - allowed.keys():
        rc = 1
    for key in sorted(allowed.keys() - failed):
        print(f"STALE exception {key[0]} {key[1]}: it passes now; "
              "remove it from the exceptions file")
        rc = 1
    if rc == 0:
        print(f"checkov: {passed} checks passed, {len(failed)} failures, "
              "each an exception listed with its reason")
    return rc


if __name__ == "__main__":
    sys.exit(main())
