# SPDX-License-Identifier: MIT
"""A PyTorch process that owns a KV cache on a GPU and hands it to a
transfer engine in another process, written in C or Python, which
registers it on its own NICs (no CUDA needed there):

    python3 kv_owner.py SOCKET [--mib N] [--gpu N]

Allocates the KV cache (one tensor), exports its memory as dma-buf fds
with gpudirect.export(), and hands the export to every importer that
connects to the unix socket SOCKET, until Ctrl-C (SIGINT) or SIGTERM.
Importers:

    gdr-share import SOCKET -d mlx5_0           # C (examples/gdr-share.c)
    python3 kv_importer.py SOCKET -d mlx5_0     # Python

An importer's MR keeps the memory allocated whatever this process frees;
this process keeps the tensor (and the export) while importers use it, so
that PyTorch does not give its bytes to another tensor.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import stat
import sys

import torch

import gpudirect


def stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # Said explicitly: a shell starts a background job with SIGINT
    # ignored, and Python then leaves it ignored (kill -INT would not
    # stop this owner); SIGTERM stops it the same way.
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("socket")
    ap.add_argument("--mib", type=int, default=64, help="KV cache size")
    ap.add_argument("--gpu", type=int, default=0)
    a = ap.parse_args()
    # Claim the path first: a new name only (an old socket of ours is
    # for the user to remove: this example does not guess).
    try:
        st = os.lstat(a.socket)
        kind = "socket" if stat.S_ISSOCK(st.st_mode) else "file"
        print(f"owner: {a.socket} exists ({kind}); remove it or pick "
              "another path", file=sys.stderr)
        return 1
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(a.socket)
    listener.listen(16)
    bound = os.stat(a.socket).st_ino

    # The KV cache: [layers, K/V, blocks, block bytes], one allocation.
    layers, blocks = 8, a.mib * 1024 * 1024 // (8 * 2 * 4096)
    kv = torch.zeros((layers, 2, blocks, 4096), dtype=torch.uint8,
                     device=f"cuda:{a.gpu}")
    try:
        with gpudirect.export(kv) as x:
            print(f"owner: KV cache {kv.nbytes} bytes at {kv.data_ptr():#x} "
                  f"(GPU {x.gpu_bus_id}) exported as {x.num_fds} dma-buf"
                  f"{'s'[:x.num_fds > 1]}")
            print(f"owner: serving on {a.socket} (Ctrl-C to stop)",
                  flush=True)
            while True:
                conn, _ = listener.accept()
                with conn:
                    try:
                        x.send(conn)
                        print("owner: handed the export to an importer",
                              flush=True)
                    except gpudirect.GdrError as e:
                        print(f"owner: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        pass
    except gpudirect.GdrError as e:
        print(f"owner: {e}", file=sys.stderr)
        return 1
    finally:
        listener.close()
        # Remove what this process bound, never what replaced it.
        try:
            if os.stat(a.socket).st_ino == bound:
                os.unlink(a.socket)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
