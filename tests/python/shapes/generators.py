# SPDX-License-Identifier: MIT
"""generators.py: memory held by generators, `yield from` delegation and a generator expression.
Lines marked HOLD keep 4 MB or more each until the checkpoint (test_shapes.py)."""
import pyshape

kept = []


def chunks(n):
    for _ in range(n):
        yield bytes(100_000)  # HOLD


def pages(n):
    yield from chunks(n)
    for _ in range(n):
        yield bytearray(120_000)  # HOLD


def suspended(n):
    held = [bytes(150_000) for _ in range(n)]  # HOLD
    yield len(held)
    yield held


def main():
    kept.extend(pages(40))
    g = suspended(30)
    next(g)  # the generator's frame keeps `held`
    kept.append(g)
    kept.extend(bytes(90_000) for _ in range(50))  # HOLD
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
