# SPDX-License-Identifier: MIT
"""classes.py: memory kept by __init__, a property, a classmethod, a staticmethod and a
dataclass's default_factory."""
import dataclasses

import pyshape

kept = []


class Buffer:
    registry = []

    def __init__(self, n):
        self.data = bytearray(n)  # HOLD
        self._view = None

    @property
    def view(self):
        if self._view is None:
            self._view = bytes(self.data[:90_000])  # HOLD
        return self._view

    @classmethod
    def make(cls, n):
        cls.registry.append(bytes(n))  # HOLD
        return cls(n // 2)

    @staticmethod
    def blank(n):
        return b"\0" * n  # HOLD


def payload():
    return bytearray(70_000)  # HOLD


@dataclasses.dataclass
class Record:
    name: str
    blob: bytearray = dataclasses.field(default_factory=payload)


def main():
    for _ in range(40):
        b = Buffer.make(200_000)
        b.view
        kept.append(b)
        kept.append(Buffer.blank(80_000))
        kept.append(Record("r"))
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
