# SPDX-License-Identifier: MIT
"""workers.py: memory held by work done in a ThreadPoolExecutor, or in multiprocessing children
started with spawn or fork:  workers.py {threads|spawn|fork}. Each child checkpoints itself."""
import multiprocessing
import sys
from concurrent.futures import ThreadPoolExecutor

import pyshape

kept = []


def task(i):
    kept.append(bytes(100_000 + i))  # HOLD threads
    return i


def child(n):
    for i in range(n):
        kept.append(bytearray(110_000))  # HOLD spawn fork
    pyshape.checkpoint()


def main():
    how = sys.argv[1]
    if how == "threads":
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(task, range(48)))
        pyshape.checkpoint()
        return
    ctx = multiprocessing.get_context(how)
    procs = [ctx.Process(target=child, args=(40,)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode


if __name__ == "__main__":
    main()
