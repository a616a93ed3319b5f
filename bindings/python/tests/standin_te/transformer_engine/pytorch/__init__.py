# SPDX-License-Identifier: Apache-2.0
from . import distributed  # noqa: F401
