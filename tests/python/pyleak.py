# SPDX-License-Identifier: MIT
"""pyleak.py: Python programs that leak at known lines, for tests/python (run under mgprobe).

    python3 pyleak.py {pure|dict|thread|fork} STEPS

pure    grow() appends bytes(100_000) to a list every step;
dict    remember() adds one entry per step to a dict: 64 small str objects (pymalloc-sized);
thread  the pure leak, in a threading.Thread;
fork    a forked child runs the pure leak and leaves through os._exit.
Steps are marked through ctypes.CDLL(None).mgprobe_step. Lines the tests look for end in a
comment naming them (LINE-...): keep those comments.
"""
import ctypes
import os
import sys
import threading

lib = ctypes.CDLL(None)
kept = []
cache = {}


def mark(step):
    lib.mgprobe_step(ctypes.c_uint64(step))


def grow(step):
    kept.append(bytes(100_000))  # LINE-GROW


def remember(step):
    cache[step] = [str(step) * 8 + str(k) for k in range(64)]  # LINE-REMEMBER


def loop(fn, steps):
    for step in range(1, steps + 1):
        fn(step)  # LINE-LOOP
        mark(step)


def main():
    mode, steps = sys.argv[1], int(sys.argv[2])
    if mode == "pure":
        loop(grow, steps)  # LINE-MAIN-PURE
    elif mode == "dict":
        loop(remember, steps)  # LINE-MAIN-DICT
    elif mode == "thread":
        t = threading.Thread(target=loop, args=(grow, steps))  # LINE-MAIN-THREAD
        t.start()
        t.join()
    elif mode == "fork":
        pid = os.fork()
        if pid == 0:
            loop(grow, steps)  # LINE-MAIN-FORK
            os._exit(0)
        os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())  # LINE-MODULE
