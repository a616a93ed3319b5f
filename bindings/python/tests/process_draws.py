# SPDX-License-Identifier: Apache-2.0
"""The process generators a resume must carry (Python's random, NumPy's
global generator, torch's CPU generator): seeding them all, and one draw
from each, for the stack tests (test_torch_accelerate.py,
test_torch_torchtitan.py, test_torch_lightning.py)."""
import random

import numpy as np
import torch


def seed(n):
    random.seed(n)
    np.random.seed(n)
    torch.manual_seed(n)


def draws():
    return random.random(), float(np.random.rand()), torch.rand(2).tolist()
