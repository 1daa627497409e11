# SPDX-License-Identifier: MIT
"""alloc_bench.py: the Python counterpart of alloc_bench.c, for the probe's cost per allocation
in a Python program (bench_probe.py --python). A loop makes and drops a 1 KiB bytes object (one
malloc + free each: bytes over 512 bytes bypass pymalloc) at the bottom of DEPTH layers called
through __call__, so each allocation's stack holds DEPTH + 1 calls of the interpreter's frame
evaluator, as in a PyTorch model's forward pass. Prints "ns_per_pair N" for its own loop only.

usage: alloc_bench.py PAIRS DEPTH
"""
import sys
import time


class Layer:
    def __init__(self, inner):
        self.inner = inner

    def __call__(self, pairs):
        return self.inner(pairs)


def loop(pairs):
    t0 = time.perf_counter()
    for i in range(pairs):
        b = bytes(1024 + (i & 255))
    del b
    return (time.perf_counter() - t0) / pairs * 1e9


def main():
    pairs, depth = int(sys.argv[1]), int(sys.argv[2])
    f = loop
    for _ in range(depth):
        f = Layer(f)
    print("ns_per_pair %.1f" % f(pairs))


if __name__ == "__main__":
    main()
