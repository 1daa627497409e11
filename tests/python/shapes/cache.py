# SPDX-License-Identifier: MIT
"""cache.py: small Python objects (pymalloc's sizes) kept at known lines: a dict cache of tuples,
a list of short strs, a set of ints, instances with __slots__. test_shapes.py runs it with
--python-objects, where each is charged to the line that makes it."""
import pyshape

cache = {}
names = []
seen = set()
points = []


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


def remember(k):
    cache[k] = (k, str(k) * 3, k * 2.5)  # HOLD


def main():
    for k in range(30_000):
        remember(k)
        names.append(f"name-{k:08d}-{k * 7:08d}")  # HOLD
        seen.add(10**12 + k * 3)  # HOLD
        points.append(Point(k, -k))  # HOLD
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
