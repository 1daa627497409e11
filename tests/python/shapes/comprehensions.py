# SPDX-License-Identifier: MIT
"""comprehensions.py: list, dict and set comprehensions and a nested one (3.12 inlines them:
PEP 709), at module level and in a function."""
import pyshape

kept = []

table = [bytes(100_000 + i) for i in range(40)]  # HOLD


def build(n):
    by_key = {k: bytearray(110_000) for k in range(n)}  # HOLD
    uniq = {bytes([k % 251]) * 120_000 for k in range(n)}  # HOLD
    grid = [[bytes(130_000) for _ in range(2)] for _ in range(n // 2)]  # HOLD
    return by_key, uniq, grid


def main():
    kept.append(build(40))
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
