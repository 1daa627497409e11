# SPDX-License-Identifier: MIT
"""pyshape.py: the checkpoint of the tests/python/shapes programs (test_shapes.py runs each twice).

checkpoint() marks the point where a program holds its memory. Under mgprobe it marks a step
(mgprobe_step), so the report's live_bytes_last_x is what was live there. In the oracle run
(PYSHAPE_ORACLE=DIR) tracemalloc starts, 25 frames deep, when this module is imported (in spawned
children too, which import the program again; forked ones inherit it), and checkpoint()
writes DIR/<pid>.json: tracemalloc's live bytes by traceback (innermost frame first), and for every
(file, line) of those tracebacks the qualified names of the code objects whose line table holds it.
Under the probe with PYSHAPE_HOLD=FILE, checkpoint() writes its pid to FILE and waits (at most 5
minutes) until the test removes it, having read the process with `mgmon --once --json`. It must
never hold memory of its own past the call (the oracle's snapshot would count it).
"""
import ctypes
import gc
import json
import os
import time
import types

_steps = [0]
if os.environ.get("PYSHAPE_ORACLE"):
    import tracemalloc
    if not tracemalloc.is_tracing():
        tracemalloc.start(25)


def _code_objects(files):
    """The code objects of `files`: those of live functions, generators and coroutines, and those
    compiled from the readable ones (module bodies), with the code objects nested in their
    constants."""
    todo = []
    for o in gc.get_objects():
        if isinstance(o, types.FunctionType):
            todo.append(o.__code__)
        elif isinstance(o, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
            code = getattr(o, "gi_code", None) or getattr(o, "cr_code", None) or getattr(o, "ag_code", None)
            if code is not None:
                todo.append(code)
    todo = [c for c in todo if c.co_filename in files]
    for f in files:
        try:
            with open(f, "rb") as src:
                todo.append(compile(src.read(), f, "exec", dont_inherit=True))
        except (OSError, SyntaxError, ValueError):
            pass
    seen, out = set(), []
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.append(c)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _oracle(directory):
    import tracemalloc
    snap = tracemalloc.take_snapshot()
    held = {}
    small = os.environ.get("PYSHAPE_SMALL") == "1"
    for tr in snap.traces:
        if tr.size <= 512 and not small:
            continue  # pymalloc's: in arenas under the probe
        key = tuple((f.filename, f.lineno) for f in reversed(tr.traceback))  # oldest first there
        held[key] = held.get(key, 0) + tr.size
    del snap
    wanted = {fl for key in held for fl in key}
    names = {}
    for c in _code_objects({f for f, _ in wanted}):
        for _, _, line in c.co_lines():
            if (c.co_filename, line) in wanted:
                names.setdefault(f"{c.co_filename}:{line}", set()).add(c.co_qualname)
    out = {"held": [[size, [list(f) for f in key]] for key, size in held.items()],
           "names": {k: sorted(v) for k, v in names.items()}}
    with open(os.path.join(directory, f"{os.getpid()}.json"), "w", encoding="utf-8") as f:
        json.dump(out, f)


def checkpoint():
    """Marks where the program holds its memory (see the module's text)."""
    directory = os.environ.get("PYSHAPE_ORACLE")
    if directory:
        _oracle(directory)
        return
    _steps[0] += 1
    try:
        ctypes.CDLL(None).mgprobe_step(ctypes.c_uint64(_steps[0]))
    except AttributeError:
        pass  # not under the probe
    hold = os.environ.get("PYSHAPE_HOLD")
    if hold:  # wait while the test looks at this process with mgmon: until it removes the file
        with open(hold + ".tmp", "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))
        os.rename(hold + ".tmp", hold)
        for _ in range(3000):
            if not os.path.exists(hold):
                break
            time.sleep(0.1)
