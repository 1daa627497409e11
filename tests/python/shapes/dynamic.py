# SPDX-License-Identifier: MIT
"""dynamic.py: code run by exec and by compile (file `<string>` and a made-up file name), and a
module loaded by importlib from a file path."""
import importlib.util
import os

import pyshape

kept = []

SOURCE = """
def grow(n):
    return [bytes(100_000) for _ in range(n)]
kept.append(grow(40))
kept.append(bytearray(4_000_000))
"""


def main():
    scopes = [{"kept": kept}, {"kept": kept}]  # kept: their functions name the oracle's lines
    kept.append(scopes)
    exec(SOURCE, scopes[0])
    code = compile(SOURCE.replace("100_000", "110_000"), "generated/äpfel.py", "exec")
    exec(code, scopes[1])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin.py")
    spec = importlib.util.spec_from_file_location("mg_plugin", path)
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    kept.append(plugin.load(40))
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
