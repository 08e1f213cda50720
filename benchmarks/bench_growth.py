"""Growth: disk (allocated, after the run), the writer's peak resident memory and write time as
the work grows, each writer in a process of its own, beside the peer its users would otherwise
pick (each cell: ours / the peer's). ``N``: items (a turn counts as 4), or for ``_sessions``
sessions of 3 turns in the default layout (an Agents SDK session opened and closed per
conversation, one Agent Framework provider for all), the cells then per session."""

import asyncio
import itertools
import json
import math
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import Json, Plan, Scratch, Summary, child_json, execute, num, progress

ADAPTERS = {  # adapter: its peer
    "autogen": "ListMemory + JSON",
    "langgraph": "SqliteStore",
    "openai_agents": "SQLiteSession",
    "agent_framework": "FileHistoryProvider",
    "knowledge_graph": "reference JSONL",
}
SESSIONS = {"openai_agents_sessions": "SQLiteSession", "agent_framework_sessions": "FileHistoryProvider"}  # fmt: skip
SESSION_TURNS = 3
FULL, SMOKE = Plan(sizes=(250, 1_000, 4_000), sessions=200), Plan(sizes=(8,), sessions=2)


def text(i: int) -> str:
    return f"Fact {i}: the user prefers option {i % 7} for project {i // 10}."


async def autogen(path: Path, n: int, peer: bool, _: bool) -> None:
    from autogen_core.memory import ListMemory, MemoryContent

    from mnem_autogen import MnemosyneMemory

    memory = ListMemory("growth") if peer else MnemosyneMemory("growth", store_path=path)
    for i in range(n):
        await memory.add(MemoryContent(content=text(i), mime_type="text/plain"))
        if peer:
            (path / "memory.json").write_text(memory.dump_component().model_dump_json())
    await memory.close()


async def langgraph(path: Path, n: int, peer: bool, _: bool) -> None:
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


async def openai_agents(path: Path, n: int, peer: bool, sessions: bool) -> None:
    """One session of ``n`` items, or ``n`` of SESSION_TURNS turns each opened and closed."""
    from agents import SQLiteSession

    from mnem_openai_agents import MnemosyneSession

    store, names = (None, [f"user-{s}" for s in range(n)]) if sessions else (path, ["growth"])
    for name in names:
        session: Any = SQLiteSession(name, "sessions.db") if peer else MnemosyneSession(name, store)
        for i in range(SESSION_TURNS if sessions else n // 4):
            for items in turn(i):
                await session.add_items(items)
        session.close()


async def agent_framework(path: Path, n: int, peer: bool, sessions: bool) -> None:
    """``n`` items in one session, or ``n`` sessions of SESSION_TURNS turns, one provider."""
    from agent_framework import Content, FileHistoryProvider, Message

    from mnem_agent_framework import MnemosyneHistoryProvider

    at = None if sessions else path
    provider: Any = FileHistoryProvider(at or "sessions") if peer else MnemosyneHistoryProvider(at)
    turns = range(SESSION_TURNS if sessions else n // 4)
    for s, i in itertools.product(range(n if sessions else 1), turns):
        call = f"call_{i}"
        messages = [
            Message("user", [f"What is the weather in city {i}?"]),
            Message("assistant", [Content.from_function_call(call, "weather", arguments={"i": i})]),
            Message("tool", [Content.from_function_result(call, result=f"sunny in {i}")]),
            Message("assistant", [f"It is sunny in city {i}."], message_id=f"m{i}"),
        ]
        await provider.save_messages(f"user-{s}" if sessions else "growth", messages)
    if sessions and not peer:
        await provider.close()


async def knowledge_graph(path: Path, n: int, peer: bool, _: bool) -> None:
    from mnem_mcp import MemoryService, StoreSettings, graph
    from mnem_mcp.graph_tools import GraphService

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


def child(adapter: str, subject: str, n: str, path: str) -> Json:
    """Write in ``path`` (the working directory: default layouts), then measure it and us."""
    os.chdir(path)
    started = time.perf_counter()
    write, sessions = globals()[adapter.removesuffix("_sessions")], adapter.endswith("_sessions")
    asyncio.run(write(Path(path), int(n), subject == "peer", sessions))
    seconds = time.perf_counter() - started
    resident = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    files = [os.path.join(top, name) for top, _, names in os.walk(path) for name in names]
    disk = sum(os.lstat(file).st_blocks * 512 for file in files)
    return {"disk": disk, "resident": resident, "seconds": seconds}


async def workloads(scratch: Scratch, plan: Plan) -> Json:
    rows = []
    runs = [(a, n) for a in ADAPTERS for n in plan.sizes] + [(a, plan.sessions) for a in SESSIONS]
    for (adapter, n), subject in itertools.product(runs, ("bounded", "peer")):
        progress(f"{adapter} {subject}: {n} {'sessions' if adapter in SESSIONS else 'items'}")
        with tempfile.TemporaryDirectory(dir=scratch.disk) as folder:
            found = child_json(__file__, adapter, subject, str(n), folder)
        rows.append(found | {"adapter": adapter, "subject": subject, "n": n})
    return {"rows": rows}


def both(pair: list[Json], key: str, scale: float, unit: str) -> str:
    return " / ".join(num(r[key] * scale) for r in pair) + f" {unit}"


def summarize(found: Json) -> Summary:
    table = [["adapter", "peer", "N", "disk per item", "resident", "write per item"]]
    out = Summary(table=table)  # a row per adapter and N follows
    rows = {(r["adapter"], r["subject"], r["n"]): r for r in found["rows"]}  # no "one store"
    sizes = sorted({n for adapter, _, n in rows if adapter in ADAPTERS})
    low, high = (sizes[-2], sizes[-1]) if len(sizes) > 1 else (sizes[0], sizes[0])
    for adapter, peer in (ADAPTERS | SESSIONS).items():
        mine = {n: r for (a, s, n), r in rows.items() if (a, s) == (adapter, "bounded")}
        for n, row in sorted(mine.items()):
            pair = [row, rows[(adapter, "peer", n)]]
            cells = [both(pair, "disk", 1 / 1024 / n, "KiB"), both(pair, "resident", 2**-20, "MiB")]
            table.append([adapter, peer, f"{n:,}", *cells, both(pair, "seconds", 1000 / n, "ms")])
        top, growth = mine[max(mine)], None
        if adapter in SESSIONS:
            label = f"{adapter}: a {SESSION_TURNS}-turn session in the default layout costs at most 256 KiB of disk"
            per_session, key = top["disk"] / 1024 / top["n"], f"growth.{adapter}.per_session"
            out.target(key, label, per_session, 256.0, f"{top['n']} sessions", unit=" KiB")
            continue
        if low != high and mine[low]["disk"] > 0:
            growth = math.log(top["disk"] / mine[low]["disk"]) / math.log(high / low)
        for key, label, measured, limit, where, unit in (
            ("exponent", f"disk grows at most as N^1.1 from {low:,} to {high:,} items", growth, 1.1, f"N^{num(growth or 0)}", ""),
            ("per_item", f"at most 24 KiB of disk per item at {high:,} items", top["disk"] / 1024 / top["n"], 24.0, f"{high:,} items", " KiB"),
            ("resident", f"a process that wrote {high:,} items holds at most 150 MiB", top["resident"] / 2**20, 150.0, f"{high:,} items", " MiB"),
        ):  # fmt: skip
            label, key = f"{adapter}: {label}", f"growth.{adapter}.{key}"
            out.target(key, label, measured, limit, where, unit=unit)
    return out


def draw(found: Json, path: Path) -> bool:
    """Disk and write time against N, log-log, each adapter (solid) beside its peer (dashed)."""
    from matplotlib.figure import Figure

    axes = (figure := Figure(figsize=(13, 5))).subplots(1, 2)
    for (adapter, peer), subject in itertools.product(ADAPTERS.items(), ("bounded", "peer")):
        mine = [r for r in found["rows"] if (r["adapter"], r["subject"]) == (adapter, subject)]
        style, label = ("--", f"{adapter} ({peer})") if subject == "peer" else ("-o", adapter)
        xs = [r["n"] for r in mine]
        line = axes[0].plot(xs, [r["disk"] / 2**20 for r in mine], style, label=label)[0]
        axes[1].plot(xs, [r["seconds"] for r in mine], style, color=line.get_color())
    for ax, title in zip(axes, ("disk (MiB)", "time to write them all (s)"), strict=True):
        ax.set(xscale="log", yscale="log", xlabel="items written (a turn counts as 4)")
        ax.set_title(f"growth: {title}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=6, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return True


if __name__ == "__main__":
    execute("growth", FULL, SMOKE, workloads, child)
