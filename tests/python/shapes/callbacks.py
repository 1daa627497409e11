# SPDX-License-Identifier: MIT
"""callbacks.py: C code calling back into Python: sorted(key=...), map(), and libc's qsort through a
ctypes callback (a C extension's frames between two Python frames)."""
import ctypes

import pyshape

kept = []
libc = ctypes.CDLL(None)
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def weigh(x):
    kept.append(bytes(100_000))  # HOLD
    return -x


def widen(x):
    kept.append(bytearray(110_000))  # HOLD
    return x


def compare(a, b):
    kept.append(bytes(120_000))  # HOLD
    return a[0] - b[0]


def main():
    sorted(range(40), key=weigh)
    list(map(widen, range(40)))
    arr = (ctypes.c_int * 12)(*range(12, 0, -1))
    cmp = CMP(compare)
    libc.qsort(arr, len(arr), ctypes.sizeof(ctypes.c_int), cmp)
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
