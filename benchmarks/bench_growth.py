"""Growth: disk, resident memory and write time as the work grows, each adapter beside the peer
its users would otherwise pick, each writer in a process of its own."""

from __future__ import annotations

import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import Scratch, Summary, Table, execute, num, progress

ADAPTERS = {  # adapter: its peer
    "autogen": "ListMemory + JSON",
    "langgraph": "SqliteStore",
    "openai_agents": "SQLiteSession",
    "agent_framework": "FileHistoryProvider",
    "knowledge_graph": "reference JSONL",
}
SESSIONS = {"openai_agents_sessions": "SQLiteSession", "agent_framework_sessions": "FileHistoryProvider"}  # fmt: skip
SESSION_TURNS = 3


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (250, 1_000, 4_000)
    one_store_up_to: int = 1_000
    sessions: int = 200  # many short sessions, of SESSION_TURNS turns each


FULL, SMOKE = Plan(), Plan(sizes=(8,), one_store_up_to=0, sessions=2)


def disk(path: Path) -> int:
    found = (os.path.join(folder, name) for folder, _, names in os.walk(path) for name in names)
    return sum(os.lstat(file).st_blocks * 512 for file in found)


def text(i: int) -> str:
    return f"Fact {i}: the user prefers option {i % 7} for project {i // 10}."


async def autogen(path: Path, n: int, peer: bool) -> None:
    from autogen_core.memory import ListMemory, MemoryContent

    from mnem_autogen import MnemosyneMemory

    memory = ListMemory("growth") if peer else MnemosyneMemory("growth", store_path=path)
    for i in range(n):
        await memory.add(MemoryContent(content=text(i), mime_type="text/plain"))
        if peer:
            (path / "memory.json").write_text(memory.dump_component().model_dump_json())
    await memory.close()


async def langgraph(path: Path, n: int, peer: bool) -> None:
    from langgraph.store.sqlite import SqliteStore

    from mnem_langgraph import MnemosyneStore

    opened = SqliteStore.from_conn_string(str(path / "store.db")) if peer else MnemosyneStore(path)
    with opened as store:
        if peer:
            store.setup()
        for i in range(n):
            store.put(("users", f"u{i % 10}"), f"k{i}", {"text": text(i)})


def turn(i: int) -> list[list[dict[str, Any]]]:
    """One runner turn: the input, the call and its output, the answer (three ``add_items``)."""
    call = f"call_{i}"
    return [
        [{"role": "user", "content": f"What is the weather in city {i}?"}],
        [
            {"type": "function_call", "call_id": call, "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": call, "output": f"sunny in {i}"},
        ],
        [{"role": "assistant", "content": f"It is sunny in city {i}."}],
    ]


async def openai_agents(path: Path, n: int, peer: bool) -> None:
    from agents import SQLiteSession

    from mnem_openai_agents import MnemosyneSession

    session: Any = (
        SQLiteSession("growth", path / "sessions.db") if peer else MnemosyneSession("growth", path)
    )
    for i in range(n // 4):
        for items in turn(i):
            await session.add_items(items)
    session.close()


async def openai_agents_sessions(path: Path, n: int, peer: bool) -> None:
    """``n`` conversations of :data:`SESSION_TURNS` turns, each session opened and closed, in
    the default layout (the working directory is ``path``)."""
    from agents import SQLiteSession

    from mnem_openai_agents import MnemosyneSession

    os.chdir(path)
    for s in range(n):
        name = f"user-{s}"
        session: Any = SQLiteSession(name, "sessions.db") if peer else MnemosyneSession(name)
        for i in range(SESSION_TURNS):
            for items in turn(i):
                await session.add_items(items)
        session.close()


def messages(i: int) -> list[Any]:
    """One Agent Framework turn: a question, a tool call and its result, an answer."""
    from agent_framework import Content, Message

    call = f"call_{i}"
    return [
        Message("user", [f"What is the weather in city {i}?"]),
        Message("assistant", [Content.from_function_call(call, "weather", arguments={"i": i})]),
        Message("tool", [Content.from_function_result(call, result=f"sunny in {i}")]),
        Message("assistant", [f"It is sunny in city {i}."], message_id=f"m{i}"),
    ]


async def agent_framework(path: Path, n: int, peer: bool) -> None:
    from agent_framework import FileHistoryProvider

    from mnem_agent_framework import MnemosyneHistoryProvider

    provider: Any = FileHistoryProvider(path) if peer else MnemosyneHistoryProvider(path)
    for i in range(n // 4):
        await provider.save_messages("growth", messages(i))


async def agent_framework_sessions(path: Path, n: int, peer: bool) -> None:
    """``n`` sessions of :data:`SESSION_TURNS` turns through one provider, in its default
    layout (the working directory is ``path``)."""
    from agent_framework import FileHistoryProvider

    from mnem_agent_framework import MnemosyneHistoryProvider

    os.chdir(path)
    provider: Any = FileHistoryProvider("sessions") if peer else MnemosyneHistoryProvider()
    for s in range(n):
        for i in range(SESSION_TURNS):
            await provider.save_messages(f"user-{s}", messages(i))
    if not peer:
        await provider.close()


async def knowledge_graph(path: Path, n: int, peer: bool) -> None:
    from mnem_mcp import graph
    from mnem_mcp.graph_tools import GraphService
    from mnem_mcp.memory import MemoryService, StoreSettings

    if peer:  # the reference server: the whole graph rewritten as JSONL per change
        lines: list[str] = []
        for i in range(n):
            lines.append(json.dumps({"type": "entity", "name": f"e{i}", "observations": [text(i)]}))
            (path / "memory.jsonl").write_text("\n".join(lines))
        return
    service = GraphService(memory := MemoryService(StoreSettings(path=path)))
    for i in range(n):
        entity = graph.entity(f"e{i}", "fact", [text(i)])
        await service.change(lambda g, e=entity: graph.create_entities(g, [e]))
    memory.close()


def child(adapter: str, subject: str, n: int, path: Path) -> None:
    """Write, then print disk, peak resident memory and seconds as JSON."""
    if subject == "one store":
        os.environ["MNEM_VOLUME_NODES"] = str(10 * n + 1_000)
    path.mkdir(parents=True, exist_ok=True)
    write = globals()[adapter]
    started = time.perf_counter()
    asyncio.run(write(path, n, subject == "peer"))
    seconds = time.perf_counter() - started
    resident = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"disk": disk(path), "resident": resident, "seconds": seconds}))


def measure(scratch: Scratch, adapter: str, subject: str, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=scratch.disk) as folder:
        child = [sys.executable, __file__, "--child", adapter, subject, str(n), folder]
        done = subprocess.run(child, capture_output=True, text=True, check=True)
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found | {"adapter": adapter, "subject": subject, "n": n}


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    rows = []
    for adapter in ADAPTERS:
        for n in plan.sizes:
            for subject in ["bounded", "peer"] + ["one store"] * (n <= plan.one_store_up_to):
                progress(f"{adapter} {subject}: {n} items")
                rows.append(measure(scratch, adapter, subject, n))
    for adapter in SESSIONS:
        for subject in ("bounded", "peer"):
            progress(f"{adapter} {subject}: {plan.sessions} of {SESSION_TURNS} turns")
            rows.append(measure(scratch, adapter, subject, plan.sessions))
    return {"rows": rows}


def summarize(found: dict[str, Any]) -> Summary:
    out, table, many = Summary(), [], []
    rows = {(r["adapter"], r["subject"], r["n"]): r for r in found["rows"]}
    sizes = sorted({n for adapter, _, n in rows if adapter in ADAPTERS})
    low, high = (sizes[-2], sizes[-1]) if len(sizes) > 1 else (sizes[0], sizes[0])
    for adapter, peer in ADAPTERS.items():
        mine = {n: r for (a, s, n), r in rows.items() if (a, s) == (adapter, "bounded")}
        biggest, growth = mine[max(mine)], None
        if low != high and low in mine and high in mine and mine[low]["disk"] > 0:
            growth = math.log(mine[high]["disk"] / mine[low]["disk"]) / math.log(high / low)
        for key, label, measured, limit, where, unit in (
            ("exponent", f"disk grows at most as N^1.1 from {low:,} to {high:,} items", growth, 1.1, f"N^{num(growth or 0)}", ""),
            ("per_item", f"at most 24 KiB of disk per item at {high:,} items", biggest["disk"] / 1024 / biggest["n"], 24.0, f"{high:,} items", " KiB"),
            ("resident", f"a process that wrote {high:,} items holds at most 150 MiB", biggest["resident"] / 2**20, 150.0, f"{high:,} items", " MiB"),
        ):  # fmt: skip
            out.target(
                f"growth.{adapter}.{key}", f"{adapter}: {label}", measured, limit, where, unit=unit
            )
        for n, row in mine.items():
            three = [row, rows.get((adapter, "one store", n)), rows.get((adapter, "peer", n))]
            cells = [
                "-" if r is None else f"{num(r[key] * times / per)} {unit}"
                for key, times, per, unit in (("disk", 1, 2**20, "MiB"), ("resident", 1, 2**20, "MiB"), ("seconds", 1000, n, "ms"))
                for r in three
            ]  # fmt: skip
            cells[2] += f" ({peer})" * (three[2] is not None)
            table.append([adapter, f"{n:,}", *cells])
    headers = ["adapter", "items", "disk", "disk, one store", "disk, peer", "resident", "resident, one store", "resident, peer", "write per item", "one store", "peer"]  # fmt: skip
    note = (
        "Items: a turn counts as 4. Disk: allocated bytes after the run; resident: the writer"
        " process's peak; write per item: the whole run over N."
    )
    out.tables.append(Table("Growth", note, headers, table))
    for adapter, peer_name in SESSIONS.items():
        both = {s: r for (a, s, _), r in rows.items() if a == adapter}
        if not both:
            continue
        n, resident = both["bounded"]["n"], both["bounded"]["resident"] / 2**20
        kib = {s: r["disk"] / 1024 / r["n"] for s, r in both.items()}
        ms = [f"{num(both[s]['seconds'] * 1000 / both[s]['n'])} ms" for s in ("bounded", "peer")]
        label = f"{adapter}: a {SESSION_TURNS}-turn session in the default layout costs at most 256 KiB of disk"
        out.target(
            f"growth.{adapter}.per_session",
            label,
            kib["bounded"],
            256.0,
            f"{n} sessions",
            unit=" KiB",
        )
        per_session = [f"{num(kib['bounded'])} KiB", f"{num(kib['peer'])} KiB ({peer_name})"]
        many.append([adapter, f"{n:,}", *per_session, f"{num(resident)} MiB", *ms])
    if many:
        headers = ["adapter", "sessions", "disk per session", "peer", "resident", "write per session", "peer"]  # fmt: skip
        note = (
            f"Sessions of {SESSION_TURNS} turns each (4 items a turn) in the default layout; an"
            " Agents SDK session opened and closed per conversation, one Agent Framework provider"
            " for all. Disk after the run."
        )
        out.tables.append(Table("Many short sessions", note, headers, many))
    return out


def draw(found: dict[str, Any], path: Path) -> bool:
    """Disk and write time against N, log-log, each adapter beside its peer."""
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(13, 5))
    for adapter, peer in ADAPTERS.items():
        for subject, style in (("bounded", "-o"), ("one store", ":x"), ("peer", "--")):
            mine = [r for r in found["rows"] if (r["adapter"], r["subject"]) == (adapter, subject)]
            mine.sort(key=lambda r: r["n"])
            if mine:
                label = f"{adapter} ({peer})" if subject == "peer" else f"{adapter}, {subject}"
                xs = [r["n"] for r in mine]
                line = axes[0].plot(xs, [r["disk"] / 2**20 for r in mine], style, label=label)[0]
                axes[1].plot(xs, [r["seconds"] for r in mine], style, color=line.get_color())
    for ax, title in zip(axes, ("disk (MiB)", "time to write them all (s)"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("items written (a turn counts as 4)")
        ax.set_title(f"growth: {title}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=6, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return True


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5]))
    else:
        execute("growth", __doc__ or "", FULL, SMOKE, workloads)
