# SPDX-License-Identifier: MIT
"""pyleak.py: Python programs that leak at known lines, for tests/python (run under mgprobe).

    python3 pyleak.py {pure|dict|thread|fork} STEPS
    python3 pyleak.py deep STEPS LIBPYDEEP
    python3 pyleak.py reuse STEPS

pure    grow() appends bytes(100_000) to a list every step;
dict    remember() adds one entry per step to a dict: 64 small str objects (pymalloc-sized);
thread  the pure leak, in a threading.Thread;
fork    a forked child runs the pure leak and leaves through os._exit;
deep    grow_deep() keeps 100,000 bytes per step from pydeep.c's pydeep_alloc(60, ...), called
        through ctypes: 61 native frames of it between the malloc and the Python frames;
reuse   each step makes a new function f<step> (a copy of template's code named file gen<step>.py,
        its body on line step + 1), keeps what it allocates and frees it: code objects die and new
        ones take their addresses. Prints "code-addresses N" (distinct addresses of the STEPS code objects).
Steps are marked through ctypes.CDLL(None).mgprobe_step. Lines the tests look for end in a
comment naming them (LINE-...): keep those comments.
"""
import ctypes
import os
import sys
import threading
import types

lib = ctypes.CDLL(None)
kept = []
cache = {}
deep = None


def mark(step):
    lib.mgprobe_step(ctypes.c_uint64(step))


def grow(step):
    kept.append(bytes(100_000))  # LINE-GROW


def grow_deep(step):
    kept.append(deep.pydeep_alloc(60, 100_000))  # LINE-GROW-DEEP


def template():
    return bytes(100_000)


def fresh(step, addresses):
    code = template.__code__.replace(co_name=f"f{step}", co_qualname=f"f{step}",
                                     co_filename=f"gen{step}.py", co_firstlineno=step)
    addresses.add(id(code))
    kept.append(types.FunctionType(code, globals())())


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
    elif mode == "reuse":
        addresses = set()
        loop(lambda step: fresh(step, addresses), steps)
        print("code-addresses", len(addresses))
    elif mode == "deep":
        global deep
        deep = ctypes.CDLL(sys.argv[3])
        deep.pydeep_alloc.restype = ctypes.c_void_p
        deep.pydeep_alloc.argtypes = [ctypes.c_int, ctypes.c_size_t]
        loop(grow_deep, steps)  # LINE-MAIN-DEEP
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
