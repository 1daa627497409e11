# SPDX-License-Identifier: MIT
"""coroutines.py: memory held by asyncio coroutines and tasks, across awaits."""
import asyncio

import pyshape

kept = []


async def fetch(i):
    await asyncio.sleep(0)
    return bytes(100_000 + i)  # HOLD


async def worker(q):
    while True:
        i = await q.get()
        kept.append(bytearray(110_000))  # HOLD
        q.task_done()


async def main():
    kept.extend(await asyncio.gather(*(fetch(i) for i in range(40))))
    q = asyncio.Queue()
    tasks = [asyncio.create_task(worker(q)) for _ in range(3)]
    for i in range(45):
        q.put_nowait(i)
    await q.join()
    pyshape.checkpoint()
    for t in tasks:
        t.cancel()


if __name__ == "__main__":
    asyncio.run(main())
