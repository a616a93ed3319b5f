#!/bin/sh
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
# --redirects 2 --tee 2 (stderr to a log and to the console): Debian's torch
# 1.13 on Python 3.11 cannot parse the default "0" (its Std IntFlag no longer
# iterates over the zero member) and fails before starting any worker.
# The rendezvous is static, on 127.0.0.1 and a free port: --standalone would
# hand the workers this machine's name, which need not resolve (containers,
# chroots: no "127.0.1.1 <hostname>" line), and they would retry for minutes.
# Every launch is bounded; a failed or timed-out one shows its log.
free_port() {
    "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
launch() {  # launch NPROC PHASE
    OMP_NUM_THREADS=1 timeout 300 "$python" -m torch.distributed.run --nnodes 1 --node_rank 0 \
        --nproc_per_node "$1" --master_addr 127.0.0.1 --master_port "$(free_port)" \
        --redirects 2 --tee 2 --log_dir "$dir/logs-$2" \
        "$top/tests/torch_dist/job.py" --phase "$2" --dir "$dir" --steps 6 --save-at 3 >"$dir/$2.log" 2>&1
    code=$?
    [ $code -eq 124 ] && echo "FAIL: the $2 phase on $1 ranks did not finish in 300 s"
    [ $code -eq 0 ] || { echo "FAIL: the $2 phase on $1 ranks exited $code"; tail -30 "$dir/$2.log"; exit 1; }
}
launch 4 train
launch 2 resume
grep '^resumed' "$dir/resume.log"
echo "torch.distributed job: 4 ranks trained (TP masks == unsharded, DP digests equal), 2 ranks resumed exactly"
