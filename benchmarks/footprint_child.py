"""Peak memory of one AutoGen memory subject holding a given store, in a process of its own.

Run by ``bench_autogen.py``, one process per subject and size, because a process's
peak resident set (``ru_maxrss``) only ever grows:

    python benchmarks/footprint_child.py SUBJECT STORE_PATH ITEMS

SUBJECT is ``baseline`` (the same imports, nothing loaded), ``adapter``
(``MnemosyneMemory`` on the store, one ``query``), ``naive`` (the naive adapter,
one ``query``) or ``list_memory`` (``ListMemory`` holding ITEMS items, one
``query``). Prints one JSON object: the peak RSS in KiB and the items seen.

The peak is the kernel's ``VmHWM`` of this process's own address space: on Linux
``ru_maxrss`` carries over the parent's peak across fork and exec, so a child of
a big benchmark process would report the parent's size.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys

from autogen_core.memory import ListMemory, Memory
from autogen_items import NAME, item
from naive import NaiveMemory

from mnem_autogen import MnemosyneMemory


def subject(kind: str, store_path: str, items: int) -> Memory | None:
    """The memory object ``kind`` names, or None for the baseline."""
    if kind == "adapter":
        return MnemosyneMemory(NAME, store_path)
    if kind == "naive":
        return NaiveMemory(NAME, store_path)
    if kind == "list_memory":
        return ListMemory(memory_contents=[item(i) for i in range(1, items + 1)])
    if kind == "baseline":
        return None
    raise SystemExit(f"unknown subject {kind!r}")


async def main(kind: str, store_path: str, items: int) -> dict[str, int]:
    memory = subject(kind, store_path, items)
    seen = 0 if memory is None else len((await memory.query()).results)
    return {"peak_rss_kib": peak_rss_kib(), "items": seen}


def peak_rss_kib() -> int:
    """This address space's peak resident set (``ru_maxrss`` where ``/proc`` is missing)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))))
