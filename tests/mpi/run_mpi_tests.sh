#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-mpi (also part of make test and make demo): rngtrk on Open MPI.
# 8 ranks as tp=2 x pp=2 x dp=2 train and save; 4 ranks as tp=4 resume from
# those checkpoints; then the Python (mpi4py) example on 4 ranks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Root may run mpirun here (CI is root); the machine has 2 cores for 8 ranks.
mpirun="mpirun --allow-run-as-root --oversubscribe"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
$mpirun -np 8 "$build/tests/mpi_training" train --tp 2 --pp 2 --dp 2 --dir "$dir" || exit 1
$mpirun -np 4 "$build/tests/mpi_training" resume --tp 4 --pp 1 --dp 1 --dir "$dir" || exit 1
PYTHONPATH="$top/bindings/python" $mpirun -np 4 "${PYTHON:-/usr/bin/python3}" \
    "$top/bindings/python/examples/mpi_sharded_dropout.py" || exit 1
