# SPDX-License-Identifier: MIT
"""unicode_names.py: non-ASCII function and class names (test_shapes.py runs it as a file with a
non-ASCII name too)."""
import pyshape

kept = []


class Größe:
    def __init__(self):
        self.données = bytes(100_000)  # HOLD


def ζήτα_λ(n):
    return [bytearray(110_000) for _ in range(n)]  # HOLD


def 読み込み(n):
    return [Größe() for _ in range(n)]


def main():
    kept.append(ζήτα_λ(40))
    kept.append(読み込み(40))
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
