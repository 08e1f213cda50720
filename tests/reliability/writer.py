"""A writer process for the reliability tests: adds (and clears) through MnemosyneMemory.

    python writer.py STORE NAME COUNT [--clear-every N] [--tag T]

Prints ``added <value>`` after each add returns and ``cleared`` after each clear, so
the parent knows exactly what was acknowledged before it killed the process.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from autogen_core.memory import MemoryContent

from mnem_autogen import BusyError, MnemosyneMemory


async def write(store: str, name: str, count: int, clear_every: int, tag: str) -> None:
    memory = MnemosyneMemory(name, store, busy_timeout=30)
    await memory.query()  # opens (and on the first run creates) the store before "ready"
    print("ready", flush=True)
    for i in range(count):
        value = f"{tag}-{i}"
        while True:
            try:
                await memory.add(MemoryContent(content=value, mime_type="text/plain"))
                break
            except BusyError:
                print("busy-retry", flush=True)
        print(f"added {value}", flush=True)
        if clear_every and (i + 1) % clear_every == 0:
            await memory.clear()
            print("cleared", flush=True)
    await memory.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("name")
    parser.add_argument("count", type=int)
    parser.add_argument("--clear-every", type=int, default=0)
    parser.add_argument("--tag", default="v")
    args = parser.parse_args()
    asyncio.run(write(args.store, args.name, args.count, args.clear_every, args.tag))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
