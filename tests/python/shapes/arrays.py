# SPDX-License-Identifier: MIT
"""arrays.py: numpy arrays, allocated in C under a Python line (numpy reports them to tracemalloc)."""
import numpy as np

import pyshape

kept = []


def features(n):
    return np.zeros((n, 1000), dtype=np.float64)  # HOLD


def main():
    for _ in range(10):
        kept.append(features(100))
        kept.append(np.arange(100_000, dtype=np.int64) * 3)  # HOLD
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
