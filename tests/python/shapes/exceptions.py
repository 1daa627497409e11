# SPDX-License-Identifier: MIT
"""exceptions.py: memory held while exceptions are raised and caught across frames (the
traceback keeps frames alive), in `with` blocks and by a recursion 200 deep."""
import contextlib

import pyshape

kept = []


class Failed(Exception):
    pass


def deep_fail(n, held):
    held.append(bytes(100_000))  # HOLD
    if n == 0:
        raise Failed("bottom")
    deep_fail(n - 1, held)


def recurse(n):
    if n == 0:
        return [bytearray(110_000) for _ in range(40)]  # HOLD
    return recurse(n - 1)


@contextlib.contextmanager
def session():
    scratch = [bytes(120_000) for _ in range(40)]  # HOLD
    try:
        yield scratch
    finally:
        kept.append(scratch)


def main():
    for _ in range(8):
        try:
            deep_fail(5, kept)
        except Failed as e:
            kept.append(e)  # keeps the traceback and its frames
    kept.append(recurse(200))
    with session() as s:
        with open(__file__, "rb") as f:
            kept.append(f.read() * 3000)  # HOLD
        pyshape.checkpoint()
        s.clear()


if __name__ == "__main__":
    main()
