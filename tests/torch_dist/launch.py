#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Starts a torch.distributed job's ranks directly, on one machine, with the
environment that init_process_group's env:// method reads (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), the
way torch.distributed.run's static rendezvous would, and without its agent.

    python3 tests/torch_dist/launch.py --nproc N [--timeout S] -- COMMAND [ARG...]

Why not torch.distributed.run: from torch 2.4 its agent makes its TCPStore
with libuv, and Debian's torch (2.6 in trixie, 2.14 in unstable) is built
without libuv ("use_libuv was requested but PyTorch was built without libuv
support"); USE_LIBUV=0 does not reach that store.  Here the ranks' own
env:// rendezvous makes the store, and it reads USE_LIBUV: this launcher
sets USE_LIBUV=0 only when this torch has TCPStore's use_libuv and cannot
use it (a probe store on a free port), so a torch with libuv keeps its
default and torch 1.13 (no libuv option at all) is left alone.

Gloo is bound to loopback (GLOO_SOCKET_IFNAME=lo unless set).  Every line a rank prints is shown as "[rankK]: line" as it comes.  When a
rank fails, the others (blocked in a collective, typically) are stopped;
the exit status is the first failing rank's, or 124 when the job outlives
--timeout.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time


def free_port():
    # 127.0.0.1, not this machine's name: in containers and chroots the name
    # need not resolve, and the ranks would retry for minutes.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def libuv_setting():
    """"0" when this torch offers TCPStore(use_libuv=...) but was built
    without libuv; None when its default works (or it has no such option)."""
    import torch.distributed as dist
    try:
        store = dist.TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
    except TypeError:
        return None  # torch before 2.2: no libuv backend to choose
    except Exception as e:  # RuntimeError (2.6), DistStoreError (2.14)
        if "libuv" in str(e):
            return "0"
        raise
    del store
    return None


def relay(rank, stream, lock):
    for line in iter(stream.readline, b""):
        with lock:
            sys.stdout.buffer.write(b"[rank%d]: " % rank + line)
            sys.stdout.buffer.flush()


def launch(nproc, command, timeout, env=None):
    env = dict(os.environ if env is None else env)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(nproc),
               LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK="0")
    env.setdefault("OMP_NUM_THREADS", "1")
    # Every rank is on this machine: gloo talks over loopback.  Left to
    # itself, it looks up this machine's name, which need not resolve (then
    # torch 2.6's gloo falls back to loopback with a warning, and hangs in
    # new_group on trixie).
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    libuv = libuv_setting()
    if libuv is not None:
        env["USE_LIBUV"] = libuv
    lock = threading.Lock()
    ranks, relays = [], []
    for rank in range(nproc):
        proc = subprocess.Popen(command, env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank)),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        ranks.append(proc)
        relays.append(threading.Thread(target=relay, args=(rank, proc.stdout, lock), daemon=True))
        relays[-1].start()
    deadline = time.monotonic() + timeout
    status = None
    while status is None:
        codes = [p.poll() for p in ranks]
        failed = [c for c in codes if c not in (None, 0)]
        if failed:
            status = failed[0] if failed[0] > 0 else 128 - failed[0]  # killed by a signal: 128 + its number
        elif all(c == 0 for c in codes):
            status = 0
        elif time.monotonic() > deadline:
            status = 124
        else:
            time.sleep(0.1)
    for p in ranks:  # a failed rank leaves the others waiting in a collective
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in ranks:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    for t in relays:
        t.join(timeout=10)
    if status == 124:
        print(f"launch: the job did not finish in {timeout} s", flush=True)
    elif status != 0:
        which = [r for r, p in enumerate(ranks) if p.returncode not in (0, -signal.SIGTERM)]
        print(f"launch: rank {which[0] if which else '?'} exited {status}", flush=True)
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.nproc < 1:
        parser.error("give --nproc N (N >= 1) and a command after --")
    sys.exit(launch(args.nproc, command, args.timeout))


if __name__ == "__main__":
    main()
