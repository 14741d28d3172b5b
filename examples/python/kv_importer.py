# SPDX-License-Identifier: MIT
"""The other side of kv_owner.py (or of gdr-share owner): a transfer
engine that receives another process's GPU memory and registers it on an
RDMA device, without CUDA:

    python3 kv_importer.py SOCKET [-d DEVICE]

Prints the MR's keys and address (the owner's address: peers need not know
who registered it) and the path the library took, and why.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys

import gpudirect


def connect(path: str) -> socket.socket:
    """A socket connected to the owner at @path: gdr-share's owner listens
    on SOCK_SEQPACKET, kv_owner.py on SOCK_STREAM; either is taken."""
    for kind in (socket.SOCK_SEQPACKET, socket.SOCK_STREAM):
        s = socket.socket(socket.AF_UNIX, kind)
        try:
            s.connect(path)
            return s
        except OSError as e:
            s.close()
            if e.errno != errno.EPROTOTYPE or kind == socket.SOCK_STREAM:
                raise
    raise AssertionError("not reached")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("socket")
    ap.add_argument("-d", "--device", help="RDMA device (default: the first)")
    a = ap.parse_args()
    try:
        with connect(a.socket) as s:
            export = gpudirect.recv(s)
        with export, gpudirect.ProtectionDomain(a.device) as pd:
            print(f"import: received {export.length} bytes of GPU "
                  f"{export.gpu_bus_id} from pid {export.owner_pid}")
            with pd.import_register(export) as mr:
                print(f"import: registered on {pd.device} through {mr.path}: "
                      f"lkey {mr.lkey:#x} rkey {mr.rkey:#x}, addr "
                      f"{mr.addr:#x} (the owner's address)")
                for t in mr.decision.attempts:
                    if t.result != "used":
                        print(f"import:   {t.path} {t.result}: {t.reason}")
                # ... post RDMA reads and writes with mr.lkey / mr.rkey ...
    except (OSError, gpudirect.GdrError) as e:
        print(f"import: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
