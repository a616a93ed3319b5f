# SPDX-License-Identifier: Apache-2.0
from . import pytorch  # noqa: F401
