#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-torch-dist: the torch.distributed job of tests/torch_dist/job.py,
# trained on 4 ranks (tp=2 x dp=2, gloo) and resumed on 2 (tp=2 x dp=1).
# Skips, saying why, only when PyTorch is missing (tools/install-deps.sh
# torch installs Debian's python3-torch).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-/usr/bin/python3}
if ! "$python" -c 'import torch.distributed' 2>/dev/null; then
    echo "SKIP: torch.distributed job: PyTorch is not installed (tools/install-deps.sh torch)"
    exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The ranks start directly (launch.py), not under torch.distributed.run,
# whose agent needs libuv from torch 2.4 on, which Debian's torch lacks; the
# rendezvous is on 127.0.0.1 and a free port (this machine's name need not
# resolve).  Every launch is bounded; a failed or timed-out one shows its log.
launch() {  # launch NPROC PHASE
    "$python" "$top/tests/torch_dist/launch.py" --nproc "$1" --timeout 300 -- \
        "$python" "$top/tests/torch_dist/job.py" --phase "$2" --dir "$dir" --steps 6 --save-at 3 >"$dir/$2.log" 2>&1
    code=$?
    [ $code -eq 0 ] || { echo "FAIL: the $2 phase on $1 ranks exited $code"; tail -30 "$dir/$2.log"; exit 1; }
}
launch 4 train
launch 2 resume
sed -n 's/^\[rank0\]: \(resumed\)/\1/p' "$dir/resume.log"
grep -q '^\[rank0\]: resumed' "$dir/resume.log" || { echo "FAIL: rank 0 did not say it resumed"; tail -30 "$dir/resume.log"; exit 1; }
echo "torch.distributed job: 4 ranks trained (TP masks == unsharded, DP digests equal), 2 ranks resumed exactly"
