"""What every benchmark script shares: timing, statistics, scratch stores, JSON and report records.

A subject and its reference are timed in the same rounds (:func:`interleave`) and reported as
ratios of medians, so machine noise hits both alike. Stores are built once per run on a RAM
disk and copied to the on-disk work directory before anything is timed.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime
import gc
import importlib.metadata
import json
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mnem

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results"
SCRIPTS = ("concurrency", "layout", "history", "autogen", "langgraph", "mcp")  # bench_<name>.py
PACKAGES = (
    "mnem-agents",
    "mnem-adapter-kit",
    "mnem-autogen",
    "mnem-langgraph",
    "mnem-mcp",
    "autogen-core",
    "autogen-agentchat",
    "autogen-ext",
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-checkpoint-sqlite",
    "mcp",
    "matplotlib",
)

Step = Callable[[int], Awaitable[int]]
"""One timed call of a subject; gets the call number (warm-ups included, from 0), returns ns."""


# --- command line, machine and output ----------------------------------------------------


def parser(description: str, out: Path = RESULTS, workdir: bool = True) -> argparse.ArgumentParser:
    """``--smoke``, ``--out`` (default ``out``) and, with ``workdir``, ``--workdir``."""
    args = argparse.ArgumentParser(description=description)
    args.add_argument("--smoke", action="store_true", help="tiny sizes, seconds; for the tests")
    args.add_argument("--out", type=Path, default=out, help="where the JSON result goes")
    if workdir:
        args.add_argument(
            "--workdir",
            type=Path,
            default=BENCH_DIR / ".work",
            help="on-disk directory for the stores under test (emptied after the run)",
        )
    return args


def progress(message: str) -> None:
    """A line on stderr, with the time and the name of the running script."""
    script = Path(sys.argv[0]).stem
    print(f"[{time.strftime('%H:%M:%S')} {script}] {message}", file=sys.stderr, flush=True)


def versions(names: Iterable[str]) -> dict[str, str | None]:
    """The installed version of each distribution (``None`` when it is not installed)."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def git(*args: str) -> str:
    """What ``git ARGS`` prints in the repository ("" if git fails or is missing)."""
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPUs, load, Python, packages, commit, date."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "load_average": load_average(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": versions(PACKAGES),
        "git": {
            "commit": git("rev-parse", "HEAD") or None,
            "packages_dirty": bool(git("status", "--porcelain", "--", "packages")),
        },
    }


class LoadSampler:
    """The 1-minute load average, sampled every few seconds while a script runs."""

    def __init__(self, every: float = 5.0) -> None:
        self._samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self._samples.append(os.getloadavg()[0])

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        found = self._samples
        return {
            "min": round(min(found), 2),
            "mean": round(sum(found) / len(found), 2),
            "max": round(max(found), 2),
            "samples": len(found),
        }


def write_json(path: Path, result: dict[str, Any], **options: Any) -> Path:
    """``result`` as JSON at ``path`` (``options`` go to :func:`json.dumps`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, **options) + "\n", encoding="utf-8")
    return path


# --- statistics ----------------------------------------------------------------------------


def percentile(sorted_ns: list[int], q: float) -> float:
    """The ``q``-quantile (0..1) of sorted samples, linearly interpolated."""
    if len(sorted_ns) == 1:
        return float(sorted_ns[0])
    pos = q * (len(sorted_ns) - 1)
    low = int(pos)
    high = min(low + 1, len(sorted_ns) - 1)
    return sorted_ns[low] + (sorted_ns[high] - sorted_ns[low]) * (pos - low)


def summary(samples_ns: Iterable[int]) -> dict[str, float]:
    """Count, and median, p99, mean and min in ms."""
    ordered = sorted(samples_ns)
    if not ordered:
        raise ValueError("no samples")
    ms = 1e-6
    return {
        "count": len(ordered),
        "median_ms": round(percentile(ordered, 0.5) * ms, 5),
        "p99_ms": round(percentile(ordered, 0.99) * ms, 5),
        "mean_ms": round(sum(ordered) / len(ordered) * ms, 5),
        "min_ms": round(ordered[0] * ms, 5),
    }


def summaries(samples: Mapping[str, list[int]]) -> dict[str, dict[str, float]]:
    return {name: summary(found) for name, found in samples.items()}


def ratio(
    subject: Mapping[str, float], reference: Mapping[str, float], key: str = "median_ms"
) -> float:
    return round(subject[key] / reference[key], 3)


def ratios(stats: Mapping[str, Mapping[str, float]], *pairs: str) -> dict[str, float]:
    """Each ``"subject/reference"`` of ``pairs``: the ratio of their medians."""
    split = [(pair, *pair.split("/")) for pair in pairs]
    return {pair: ratio(stats[subject], stats[reference]) for pair, subject, reference in split}


# --- what a script reports (rendered by report.py) ------------------------------------------


@dataclass(frozen=True)
class Target:
    """One target: the measured value (``None``: nothing to measure) against its limit."""

    label: str
    measured: float | None
    limit: float
    where: str
    why: str = ""  # shown when the target is not met
    unit: str = "x"  # "x" for a ratio, "ms" for a duration
    higher_is_better: bool = False

    @property
    def met(self) -> bool | None:
        if self.measured is None:
            return None
        if self.higher_is_better:
            return self.measured >= self.limit
        return self.measured <= self.limit


@dataclass(frozen=True)
class Table:
    title: str
    note: str
    headers: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Chart:
    """One panel: lines of (x, y) points on log axes (unless ``linear``), or grouped bars
    (with ``categories``: x is an index into them)."""

    title: str
    xlabel: str
    ylabel: str
    series: dict[str, list[tuple[float, float]]]
    linear: bool = False
    categories: list[str] | None = None


@dataclass
class Summary:
    targets: list[Target] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)


def ms(value: float) -> str:
    """A duration in ms, three significant digits (in µs below 0.001 ms)."""
    return f"{value:.3g} ms" if value >= 0.001 else f"{value * 1000:.3g} µs"


def num(value: float) -> str:
    """Three significant digits (thousands grouped from 1,000 up)."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def times(value: float) -> str:
    return f"{num(value)}x"


def mib(size: float) -> str:
    return num(size / 2**20)


def cell(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value).replace("_", " ")
    return f"{value:,}" if isinstance(value, int) else num(value)


def columns(
    title: str, note: str, rows: Iterable[Any], cells: Mapping[str, Callable[[Any], str]]
) -> Table:
    """A table with a column per entry of ``cells``: its header, and how a row shows in it."""
    return Table(title, note, list(cells), [[show(row) for show in cells.values()] for row in rows])


def ratio_table(
    title: str,
    note: str,
    rows: list[dict[str, Any]],
    keys: list[str],
    subjects: list[str] | None = None,
) -> Table:
    """Workload rows: their ``keys``, each subject's median ms, then each ratio."""
    subjects = subjects or list(rows[0]["subjects"])
    ratios = list(rows[0]["ratios"])
    return Table(
        title,
        note,
        [*keys, *(f"{s.replace('_', ' ')} ms" for s in subjects), *ratios],
        [
            [cell(row[key]) for key in keys]
            + [
                num(row["subjects"][s]["median_ms"]) if s in row["subjects"] else ""
                for s in subjects
            ]
            + [times(row["ratios"][q]) if q in row["ratios"] else "" for q in ratios]
            for row in rows
        ],
    )


def profile_table(title: str, rows: list[dict[str, Any]]) -> Table:
    """A cProfile top list (:func:`top_functions`)."""
    return columns(
        title,
        "cProfile, own time per profiled call (cProfile slows Python code more than engine "
        "calls: read as proportions).",
        rows,
        {
            "function": lambda r: f"`{r['function']}`",
            "calls / op": lambda r: f"{r['calls_per_op']:g}",
            "own ms / op": lambda r: num(r["own_ms_per_op"]),
            "cumulative ms / op": lambda r: num(r["cumulative_ms_per_op"]),
        },
    )


def profile_line(rows: list[dict[str, Any]], count: int = 4) -> str:
    """The top rows of a profile, as one line."""
    return "; ".join(
        f"`{row['function']}` x{row['calls_per_op']:g} {ms(row['own_ms_per_op'])}"
        for row in rows[:count]
    )


def worst(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The row with the highest ratio ``key``."""
    return max(rows, key=lambda row: row["ratios"][key])


def median_line(rows: list[dict[str, Any]], x: str, subject: str) -> list[tuple[float, float]]:
    """A chart line: each row's ``x`` against the median ms of ``subject``."""
    return [(row[x], row["subjects"][subject]["median_ms"]) for row in rows]


# --- timing ----------------------------------------------------------------------------------


async def clock(call: Awaitable[Any]) -> int:
    """Await ``call``; the ns it took."""
    start = time.perf_counter_ns()
    await call
    return time.perf_counter_ns() - start


def clock_sync(call: Callable[[], Any]) -> int:
    start = time.perf_counter_ns()
    call()
    return time.perf_counter_ns() - start


def sync_step(call: Callable[[int], Any]) -> Step:
    """A step that times a blocking ``call(call number)``."""

    async def step(i: int) -> int:
        return clock_sync(lambda: call(i))

    return step


async def interleave(
    steps: Mapping[str, Step],
    rounds: int,
    *,
    warmup: int = 2,
    limits: Mapping[str, int] | None = None,
    label: str | None = None,
    collect: bool = False,
) -> dict[str, list[int]]:
    """Run every subject once per round, rotating the order; each subject's timed samples.

    Interleaving puts the reference and the subject under the same machine noise.
    ``limits`` caps the timed rounds of slow subjects (they still run in the first
    rounds, beside the others). The garbage collector is off while timing, as in
    :mod:`timeit` (with ``collect``, it runs between rounds). With a ``label``, a progress
    line about every five seconds.
    """
    names = list(steps)
    caps = {name: (limits or {}).get(name, rounds) for name in names}
    samples: dict[str, list[int]] = {name: [] for name in names}
    last_report = time.monotonic()
    gc.collect()
    gc.disable()
    try:
        for call in range(warmup + rounds):
            timed = call - warmup
            shift = call % len(names)
            for name in names[shift:] + names[:shift]:
                if timed >= caps[name]:
                    continue
                took = await steps[name](call)
                if timed >= 0:
                    samples[name].append(took)
            if collect:
                gc.collect()
            if label is not None and time.monotonic() - last_report > 5:
                progress(f"{label}: round {timed + 1}/{rounds}")
                last_report = time.monotonic()
    finally:
        gc.enable()
    return samples


async def profile(
    calls: int, op: Callable[[], Awaitable[Any]], before: Callable[[], Awaitable[Any]] | None = None
) -> list[dict[str, Any]]:
    """cProfile ``op`` (not ``before``, which runs untimed ahead of each call)."""
    found = cProfile.Profile()
    for _ in range(calls):
        if before is not None:
            await before()
        found.enable()
        await op()
        found.disable()
    return top_functions(found, calls)


def top_functions(profile: cProfile.Profile, calls: int, limit: int = 8) -> list[dict[str, Any]]:
    """The ``limit`` functions with the most own time, per profiled call of the subject."""
    rows = []
    for (path, line, func), (_, ncalls, tottime, cumtime, _) in pstats.Stats(profile).stats.items():
        short = next((path.split(m, 1)[1] for m in ("/src/", "/site-packages/") if m in path), None)
        rows.append(
            {
                "function": f"{short or os.path.basename(path)}:{line}({func})" if line else func,
                "calls_per_op": round(ncalls / calls, 2),
                "own_ms_per_op": round(tottime / calls * 1e3, 4),
                "cumulative_ms_per_op": round(cumtime / calls * 1e3, 4),
            }
        )
    rows.sort(key=lambda row: row["own_ms_per_op"], reverse=True)
    return rows[:limit]


# --- stores, child processes and the whole run -------------------------------------------------


class Scratch:
    """Where stores live during a run: templates in RAM, copies under test on disk, so every
    subject starts from byte-identical stores."""

    def __init__(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.disk = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
        ram = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.ram = Path(tempfile.mkdtemp(prefix="mnem-bench-", dir=ram or workdir))
        self._templates: dict[str, Path] = {}
        self._copies = 0

    def template(self, key: str, build: Callable[[Path], None]) -> Path:
        """The template ``key``, built by ``build(path)`` the first time it is asked for."""
        if key not in self._templates:
            path = self.ram / f"t{len(self._templates)}"
            build(path)
            self._templates[key] = path
        return self._templates[key]

    def fresh(self, template: Path | None = None) -> Path:
        """A new on-disk directory: a copy of ``template``, or empty."""
        self._copies += 1
        target = self.disk / f"s{self._copies}"
        if template is None:
            target.mkdir()
        else:
            shutil.copytree(template, target)
        return target

    def discard(self, *paths: Path) -> None:
        """Delete stores no longer needed (big ones fill the disk otherwise)."""
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        self.discard(self.disk, self.ram)


def fill(path: Path, nodes: Iterable[tuple[str, Any]]) -> None:
    """A store at ``path`` holding ``nodes`` (id, JSON content), in one commit."""
    path.mkdir(parents=True, exist_ok=True)
    store = mnem.init(path)
    for node_id, content in nodes:
        store.add(node_id, content)
    store.commit("benchmark fixture", author="bench")


def disk_bytes(path: Path) -> int:
    """File sizes under ``path``, as ``ls -l`` shows them."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def allocated_bytes(path: Path) -> int:
    """Blocks allocated under ``path``, as ``du`` counts them."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def children_json(runs: list[list[str]]) -> list[dict[str, Any]]:
    """Run this Python on each of ``runs`` at once; the JSON object each prints last."""
    procs = [
        subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True, cwd=REPO)
        for args in runs
    ]
    found = []
    for args, proc in zip(runs, procs, strict=True):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, args, out)
        found.append(json.loads(out.strip().splitlines()[-1]))
    return found


def child_json(args: list[str]) -> dict[str, Any]:
    return children_json([args])[0]


async def call_tool(client: Any, name: str, **arguments: Any) -> Any:
    """One MCP tool call that must succeed."""
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content}")
    return result


def execute(
    name: str,
    description: str,
    full: Any,
    smoke: Any,
    workloads: Callable[[Scratch, Any], Awaitable[Any]],
) -> None:
    """A script's whole run: options, plan, scratch space, timing and the JSON result."""
    args = parser(description).parse_args()
    plan = smoke if args.smoke else full
    started = time.monotonic()
    result: dict[str, Any] = {
        "benchmark": name,
        "smoke": args.smoke,
        "machine": machine(),
        "plan": asdict(plan),
    }
    scratch = Scratch(args.workdir)
    load = LoadSampler()
    try:
        result["workloads"] = asyncio.run(workloads(scratch, plan))
    finally:
        during = load.stop()
        scratch.close()
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    result["machine"]["load_average_after"] = load_average()
    result["machine"]["load_during"] = during
    path = write_json(args.out / f"{name}.json", result, indent=1, sort_keys=True)
    progress(f"done in {result['elapsed_s']} s: {path}")
