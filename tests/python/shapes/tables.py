# SPDX-License-Identifier: MIT
"""tables.py: a module whose body keeps memory when imported (misc.py imports it)."""

TABLE = [bytes(100_000) for _ in range(40)]  # HOLD
