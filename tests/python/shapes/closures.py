# SPDX-License-Identifier: MIT
"""closures.py: decorators (functools.wraps, a decorator with arguments), lambdas and nested
closures, each keeping memory."""
import functools

import pyshape

kept = []


def memoize(fn):
    cache = {}

    @functools.wraps(fn)
    def wrapper(*args):
        if args not in cache:
            cache[args] = fn(*args)
        kept.append(cache)
        return cache[args]
    return wrapper


def repeat(times):
    def deco(fn):
        def inner(*a):
            return [fn(*a) for _ in range(times)]
        return inner
    return deco


@memoize
def load(key):
    return bytes(100_000 + key)  # HOLD


@repeat(4)
def tile(size):
    return bytearray(size)  # HOLD


def make_counter():
    store = []

    def add(n):
        def inner():
            store.append(bytes(n))  # HOLD
        inner()
        return store
    return add


def main():
    for k in range(40):
        load(k)
    for _ in range(10):
        kept.append(tile(130_000))
    add = make_counter()
    for _ in range(40):
        add(140_000)
    kept.append(add)
    make = lambda n: bytes(n)  # HOLD
    kept.extend(make(150_000) for _ in range(30))
    pyshape.checkpoint()


if __name__ == "__main__":
    main()
