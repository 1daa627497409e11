# SPDX-License-Identifier: MIT
"""plugin.py: a module dynamic.py loads with importlib from its path."""


def load(n):
    return [bytearray(120_000) for _ in range(n)]  # HOLD
