"""What every benchmark script shares: timing, statistics, scratch stores and JSON output.

Figures on a shared two-core machine are noisy, so every script measures a subject
and its reference *interleaved* in the same rounds (:func:`interleave`) and reports
ratios of medians; absolute numbers are kept only as context. Stores are built once
per run on a RAM-backed scratch directory (staging a node there costs no fsync) and
copied to the on-disk work directory before anything is timed.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime
import functools
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


# --- command line and output --------------------------------------------------


def parser(description: str) -> argparse.ArgumentParser:
    """The options every benchmark script takes."""
    args = argparse.ArgumentParser(description=description)
    args.add_argument("--smoke", action="store_true", help="tiny sizes, seconds; for the tests")
    args.add_argument("--out", type=Path, default=RESULTS, help="where the JSON result goes")
    args.add_argument(
        "--workdir",
        type=Path,
        default=BENCH_DIR / ".work",
        help="on-disk directory for the stores under test (emptied after the run)",
    )
    return args


def progress(script: str, message: str) -> None:
    """One line of progress on stderr, so a long run shows where it is."""
    stamp = time.strftime("%H:%M:%S")
    print(f"[{stamp} {script}] {message}", file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPUs, load, Python, packages, commit, date."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "load_average": load_average(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": versions,
        "git": _git_state(),
    }


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (other work on the machine shows here)."""
    return [round(x, 2) for x in os.getloadavg()]


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

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        found = self._samples
        return {
            "min": round(min(found), 2),
            "mean": round(sum(found) / len(found), 2),
            "max": round(max(found), 2),
            "samples": len(found),
        }


def _git_state() -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "packages_dirty": bool(git("status", "--porcelain", "--", "packages")),
    }


def write_result(out: Path, name: str, result: dict[str, Any]) -> Path:
    """Write ``result`` as ``out/name.json`` (sorted keys, so diffs between runs are small)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


# --- statistics -------------------------------------------------------------------


def percentile(sorted_ns: list[int], q: float) -> float:
    """The ``q``-quantile (0..1) of sorted samples, linearly interpolated."""
    if len(sorted_ns) == 1:
        return float(sorted_ns[0])
    pos = q * (len(sorted_ns) - 1)
    low = int(pos)
    high = min(low + 1, len(sorted_ns) - 1)
    return sorted_ns[low] + (sorted_ns[high] - sorted_ns[low]) * (pos - low)


def summary(samples_ns: Iterable[int]) -> dict[str, float]:
    """Median, p99, mean and min of durations, in milliseconds (and the sample count)."""
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


def ratio(
    subject: Mapping[str, float], reference: Mapping[str, float], key: str = "median_ms"
) -> float:
    """``subject[key] / reference[key]``, rounded for the record."""
    return round(subject[key] / reference[key], 3)


# --- what a script reports (rendered by report.py) ----------------------------------


@dataclass(frozen=True)
class Target:
    """One target of an issue: the measured value against its limit, and why if missed."""

    label: str
    measured: float | None
    """``None`` when there is nothing to measure (``why`` says why)."""
    limit: float
    unit: str
    """``"x"`` for a ratio, ``"ms"`` for a duration."""
    where: str
    why: str = ""
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
    """One panel: lines of (x, y) points on log axes (unless ``linear``), or grouped bars.

    With ``categories``, x is an index into them and each series is one bar per category.
    """

    title: str
    xlabel: str
    ylabel: str
    series: dict[str, list[tuple[float, float]]]
    linear: bool = False
    categories: list[str] | None = None


@dataclass
class Summary:
    """What a script's results say: targets, tables and chart panels."""

    targets: list[Target] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)


def ms(value: float) -> str:
    """A duration given in ms, to three significant digits (shown in µs below 0.001 ms)."""
    return f"{value:.3g} ms" if value >= 0.001 else f"{value * 1000:.3g} µs"


def num(value: float) -> str:
    """A number with three significant digits (thousands grouped above 1,000)."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def times(value: float) -> str:
    return f"{num(value)}x"


def cell(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value).replace("_", " ")
    return f"{value:,}" if isinstance(value, int) else num(value)


def ratio_table(
    title: str,
    note: str,
    rows: list[dict[str, Any]],
    keys: list[str],
    subjects: list[str] | None = None,
    ratios: list[str] | None = None,
) -> Table:
    """Workload rows as a table: their ``keys``, each subject's median ms, then each ratio."""
    subjects = subjects or list(rows[0]["subjects"])
    ratios = ratios if ratios is not None else list(rows[0]["ratios"])
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
    """A cProfile top list (from :func:`top_functions`) as a table."""
    return Table(
        title,
        "cProfile, own time per profiled call (cProfile slows Python code more than engine "
        "calls: read as proportions).",
        ["function", "calls / op", "own ms / op", "cumulative ms / op"],
        [
            [
                f"`{r['function']}`",
                f"{r['calls_per_op']:g}",
                num(r["own_ms_per_op"]),
                num(r["cumulative_ms_per_op"]),
            ]
            for r in rows
        ],
    )


def profile_line(rows: list[dict[str, Any]], count: int = 4) -> str:
    """The top rows of a profile, as one readable line."""
    return "; ".join(
        f"`{row['function']}` x{row['calls_per_op']:g} {ms(row['own_ms_per_op'])}"
        for row in rows[:count]
    )


# --- timing -------------------------------------------------------------------------


async def clock(call: Awaitable[Any]) -> int:
    """Await ``call`` and return how long it took, in ns."""
    start = time.perf_counter_ns()
    await call
    return time.perf_counter_ns() - start


def clock_sync(call: Callable[[], Any]) -> int:
    """Run ``call()`` and return how long it took, in ns."""
    start = time.perf_counter_ns()
    call()
    return time.perf_counter_ns() - start


async def interleave(
    steps: Mapping[str, Step],
    rounds: int,
    *,
    warmup: int = 2,
    limits: Mapping[str, int] | None = None,
    report: Callable[[str], None] | None = None,
) -> dict[str, list[int]]:
    """Run every subject once per round, rotating the order; each subject's timed samples.

    Interleaving puts the reference and the subject under the same machine noise.
    ``limits`` caps the timed rounds of slow subjects (they still run in the first
    rounds, beside the others). The garbage collector is off while timing, as in
    :mod:`timeit`. ``report`` receives a progress line about every five seconds.
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
            if report is not None and time.monotonic() - last_report > 5:
                report(f"round {timed + 1}/{rounds}")
                last_report = time.monotonic()
    finally:
        gc.enable()
    return samples


def run(main: Awaitable[Any]) -> Any:
    """Run a benchmark coroutine on a fresh event loop."""
    return asyncio.run(main)


# --- profiles -------------------------------------------------------------------------


def top_functions(profile: cProfile.Profile, calls: int, limit: int = 8) -> list[dict[str, Any]]:
    """The ``limit`` functions with the most own time, per profiled call of the subject."""
    stats = pstats.Stats(profile)
    rows = []
    for (path, line, func), (_, ncalls, tottime, cumtime, _) in stats.stats.items():
        where = f"{_short(path)}:{line}({func})" if line else func
        rows.append(
            {
                "function": where,
                "calls_per_op": round(ncalls / calls, 2),
                "own_ms_per_op": round(tottime / calls * 1e3, 4),
                "cumulative_ms_per_op": round(cumtime / calls * 1e3, 4),
            }
        )
    rows.sort(key=lambda row: row["own_ms_per_op"], reverse=True)
    return rows[:limit]


def _short(path: str) -> str:
    for marker in ("/src/", "/site-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.basename(path)


# --- stores on disk ---------------------------------------------------------------------


class Scratch:
    """Where stores live during a run: templates in RAM, stores under test on disk.

    A template is built once (:meth:`template`) and copied for each subject
    (:meth:`copy`), so every subject starts from byte-identical stores.
    """

    def __init__(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.disk = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
        ram = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.ram = Path(tempfile.mkdtemp(prefix="mnem-bench-", dir=ram or workdir))
        self._templates: dict[str, Path] = {}
        self._copies = 0

    def template(self, key: str, build: Callable[[Path], None]) -> Path:
        """The template store ``key``, built by ``build(path)`` the first time it is asked for."""
        if key not in self._templates:
            path = self.ram / f"t{len(self._templates)}"
            build(path)
            self._templates[key] = path
        return self._templates[key]

    def copy(self, template: Path) -> Path:
        """A fresh on-disk copy of ``template``."""
        self._copies += 1
        target = self.disk / f"s{self._copies}"
        shutil.copytree(template, target)
        return target

    def fresh(self) -> Path:
        """An empty on-disk directory for a store or database."""
        self._copies += 1
        target = self.disk / f"s{self._copies}"
        target.mkdir()
        return target

    def discard(self, *paths: Path) -> None:
        """Delete stores that are no longer needed (big ones fill the disk otherwise)."""
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.disk, ignore_errors=True)
        shutil.rmtree(self.ram, ignore_errors=True)


def fill(path: Path, nodes: Iterable[tuple[str, Any]]) -> None:
    """Create a store at ``path`` holding ``nodes`` (id, JSON content), in one commit."""
    path.mkdir(parents=True, exist_ok=True)
    store = mnem.init(path)
    for node_id, content in nodes:
        store.add(node_id, content)
    store.commit("benchmark fixture", author="bench")


def disk_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (their sizes, as ``ls -l`` shows them)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def allocated_bytes(path: Path) -> int:
    """Bytes the filesystem allocated for every file under ``path`` (as ``du`` counts them)."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def child_json(args: list[str]) -> dict[str, Any]:
    """Run this Python on ``args`` and parse the JSON object it prints last on stdout."""
    return children_json([args])[0]


def children_json(runs: list[list[str]]) -> list[dict[str, Any]]:
    """:func:`child_json` for several processes at once (for figures that timing cannot spoil)."""
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


def execute(
    name: str,
    description: str,
    full: Any,
    smoke: Any,
    workloads: Callable[[Scratch, Any], Awaitable[Any]],
) -> None:
    """A benchmark script's whole run: options, plan, scratch space, timing and the JSON result."""
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
        result["workloads"] = run(workloads(scratch, plan))
    finally:
        load.stop()
        scratch.close()
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    result["machine"]["load_average_after"] = load_average()
    result["machine"]["load_during"] = load.summary()
    path = write_result(args.out, name, result)
    report = functools.partial(progress, f"bench_{name}")
    report(f"done in {result['elapsed_s']} s: {path}")
