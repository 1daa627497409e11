# SPDX-License-Identifier: MIT
"""misc.py: memory kept in places of their own: a class body, an imported module's body, __call__
through functools.partial, a metaclass, __getattr__, __enter__, a signal handler, __del__, an
async generator, a generator's send() and throw(), a `finally` run by an exception, a `match`."""
import asyncio
import functools
import gc
import signal

import pyshape
import tables

kept = [tables]


class Registry(type):
    def __new__(mcs, name, bases, ns):
        ns["blob"] = bytes(150_000)
        kept.append(bytearray(100_000))  # HOLD
        return super().__new__(mcs, name, bases, ns)


class Config:
    defaults = [bytes(100_000 + k) for k in range(40)]  # HOLD

    def __call__(self, n, extra):
        return bytearray(n + extra)  # HOLD

    def __getattr__(self, name):
        value = bytes(110_000)  # HOLD
        kept.append(value)
        return value

    def __enter__(self):
        kept.append(bytes(120_000))  # HOLD
        return self

    def __exit__(self, *exc):
        return False


class Dropped:
    def __del__(self):
        kept.append(bytes(130_000))  # HOLD


def on_signal(signum, frame):
    kept.append(bytearray(140_000))  # HOLD


async def ticks(n):
    for _ in range(n):
        await asyncio.sleep(0)
        yield bytes(90_000)  # HOLD


def echo():
    got = []
    while True:
        try:
            got.append((yield bytearray(80_000)))  # HOLD
        except ValueError:
            kept.append(bytes(85_000))  # HOLD


def cleanup(n):
    try:
        raise KeyError(n)
    finally:
        kept.append(bytearray(95_000))  # HOLD


def shape(x):
    match x:
        case {"size": int(n)}:
            return bytes(n)  # HOLD
        case _:
            return None


async def drain():
    return [b async for b in ticks(40)]


def main():
    for k in range(40):
        Registry(f"C{k}", (), {})
    make = functools.partial(Config(), extra=7)
    cfg = Config()
    signal.signal(signal.SIGUSR1, on_signal)
    g = echo()
    next(g)
    for k in range(40):
        kept.append(make(100_000))
        cfg.missing
        with cfg:
            pass
        Dropped()
        gc.collect(0)
        signal.raise_signal(signal.SIGUSR1)
        kept.append(g.send(k))
        kept.append(g.throw(ValueError))
        try:
            cleanup(k)
        except KeyError:
            pass
        kept.append(shape({"size": 75_000}))
    kept.append(g)
    kept.append(asyncio.run(drain()))
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
