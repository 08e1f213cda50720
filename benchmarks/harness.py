"""What every benchmark shares: a subject and its anchor are timed in the same rounds, in
rotating order, and compared as ratios of medians; stores are built once in RAM and copied to
the on-disk work directory per subject, so each starts from the same bytes and really fsyncs."""

import argparse
import asyncio
import contextlib
import functools
import gc
import importlib.metadata
import inspect
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple, TypeVar

import mnem

from mnem_adapter_kit.testing.observe import observe as observe  # for the benchmarks too

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results"
# bench_<name>.py, and the package families whose versions a result names
SCRIPTS = ("autogen", "langgraph", "mcp", "openai_agents", "agent_framework", "concurrency", "history", "growth")  # fmt: skip
FAMILIES = {"mnem", "autogen", "langgraph", "mcp", "openai", "agent", "matplotlib", "crewai", "lancedb"}  # fmt: skip
Plan = SimpleNamespace  # a benchmark's sizes and rounds: its FULL and SMOKE, in its JSON
T = TypeVar("T")
Json = dict[str, Any]  # what a benchmark measured, as its JSON holds it
Samples = dict[str, list[int]]  # each subject's timed ns
Step = Callable[[int], Awaitable[int]]  # a timed call: gets the call number (from 0), returns ns
Ops = Mapping[str, Callable[[int], Any]]  # each subject's operation, given the call number
Hook = Callable[[str, int], Any] | None  # an untimed call before each: given subject, call number
Workloads = Callable[["Scratch", Plan], Coroutine[Any, Any, Json]]
Written = tuple[str, list[mnem.NodeChange]]  # one commit: the volume it went to, what it changed


def progress(message: str) -> None:  # stderr is line-buffered: each line shows as it is written
    print(f"[{time.strftime('%H:%M:%S')} {Path(sys.argv[0]).stem}] {message}", file=sys.stderr)


def summary(samples_ns: Iterable[int]) -> dict[str, float]:
    found = sorted(ns / 1e6 for ns in samples_ns)
    p99 = statistics.quantiles(found, n=100, method="inclusive")[98] if len(found) > 1 else found[0]
    median, mean = statistics.median(found), statistics.fmean(found)
    return {"count": len(found), "median_ms": median, "p99_ms": p99, "mean_ms": mean}


def case(name: str, samples: Samples, *pairs: str, **more: Any) -> Json:
    """A row: its name, each subject's statistics, the ratios ``pairs`` of medians, ``more``."""
    stats = {subject: summary(found) for subject, found in samples.items() if found}
    med = {subject: found["median_ms"] for subject, found in stats.items()}
    split = ((pair, *pair.split("/")) for pair in pairs)
    ratios = {pair: round(med[s] / med[a], 3) for pair, s, a in split if s in med and a in med}
    return {"case": name, "subjects": stats, "ratios": ratios, **more}


async def settle(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


async def clock(call: Callable[..., Any], *args: Any) -> int:
    """The ns ``call(*args)`` takes, sync or async (then only its awaiting)."""
    start = time.perf_counter_ns()
    result = call(*args)
    if inspect.isawaitable(result):
        start = time.perf_counter_ns()
        await result
    return time.perf_counter_ns() - start


async def interleave(steps: Mapping[str, Step], rounds: int, warmup: int = 2) -> Samples:
    """Run every subject once per round, rotating the order, the GC off; their timed samples."""
    names = list(steps)
    samples: Samples = {name: [] for name in names}
    gc.collect()
    gc.disable()
    try:
        for call in range(warmup + rounds):
            shift = call % len(names)
            for name in names[shift:] + names[:shift]:
                samples[name].append(await steps[name](call))
    finally:
        gc.enable()
    return {name: found[warmup:] for name, found in samples.items()}  # past the warm-up


async def compare(
    name: str, ops: Ops, rounds: int, *pairs: str, count: int = 0, before: Hook = None, **more: Any
) -> Json:
    """The row of ``ops`` timed in the same rounds, after untimed ``before(name, call)``s; with
    ``count``, the first op's engine calls (``count`` calls)."""
    if count:
        more["engine"] = await engine_calls(functools.partial(next(iter(ops.values())), 0), count)

    async def step(who: str, call: int) -> int:
        if before is not None:
            await settle(before(who, call))
        return await clock(ops[who], call)

    steps = {who: functools.partial(step, who) for who in ops}
    return case(name, await interleave(steps, rounds), *pairs, **more)


@contextlib.asynccontextmanager
async def using(adapter: T, warm: Callable[[T], Any] | None = None) -> AsyncIterator[T]:
    """``adapter`` after its first, untimed call ``warm``; closed (sync or async) afterwards."""
    if warm is not None:
        await settle(warm(adapter))
    yield adapter
    await settle(adapter.close())  # type: ignore[attr-defined]


class Scratch:
    """Where stores live during a run: templates in RAM, copies under test on disk."""

    def __init__(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.disk = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
        ram = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.ram = Path(tempfile.mkdtemp(prefix="mnem-bench-", dir=ram or workdir))
        self._templates: dict[str, Path] = {}

    async def template(self, key: str, build: Callable[[Path], Any]) -> Path:
        """The template ``key``, built by ``build(path)`` (sync or async) the first time."""
        if key not in self._templates:
            await settle(build(path := self.ram / f"t{len(self._templates)}"))
            self._templates[key] = path
        return self._templates[key]

    def fresh(self, template: Path | None = None) -> Path:
        """A new on-disk directory: a copy of ``template``, or empty."""
        target = Path(tempfile.mkdtemp(prefix="s", dir=self.disk))
        return Path(shutil.copytree(template, target, dirs_exist_ok=True)) if template else target

    def discard(self, *paths: Path) -> None:
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)


def opener(make: Callable[..., T], *args: Any, warm: Callable[[T], Any]) -> Callable[[Path], Any]:
    """How :func:`against_raw` opens a copy: ``make(*args, path)``, after an untimed ``warm``."""
    return lambda path: using(make(*args, path), warm)


async def against_raw(
    scratch: Scratch,
    template: Path,
    opened: Callable[[Path], contextlib.AbstractAsyncContextManager[T]],
    write: Callable[[T, int], Any],
    first: int,
    rounds: int,
    name: str,
    who: str = "adapter",
    store: Callable[[Path], Path] = Path,
    **more: Any,
) -> Json:
    """Writes (``write(adapter, first + call)``) on a copy of ``template`` against a raw engine
    commit of what each wrote in a rehearsal on another copy (``store``: the engine store)."""
    rehearsal = scratch.fresh(template)
    async with opened(rehearsal) as adapter:
        numbers = iter(range(first, first + rounds + 3))
        engine = await engine_calls(lambda: write(adapter, next(numbers)), rounds + 2)
    changes = commits_after(store(rehearsal), store(template))  # each write's, warm-ups too
    mine, floor = scratch.fresh(template), scratch.fresh(template)
    raw, engines = store(floor), dict[str, mnem.Store]()
    async with opened(mine) as adapter:
        ops = {
            who: lambda call: write(adapter, first + call),
            "raw_commit": lambda call: replay(raw, engines, changes[call]),
        }
        row = await compare(name, ops, rounds, f"{who}/raw_commit", engine=engine, **more)
    scratch.discard(rehearsal, mine, floor)
    return row


def by_size(bench: Callable[[Scratch, Plan, int], Awaitable[Json]], label: str) -> Workloads:
    """Workloads running ``bench(scratch, plan, n)`` at each of ``plan.sizes``, lists joined."""

    async def workloads(scratch: Scratch, plan: Plan) -> Json:
        found: Json = {}
        for n in plan.sizes:
            progress(f"{label}: n={n}")
            for key, rows in (await bench(scratch, plan, n)).items():
                found.setdefault(key, []).extend(rows)
        return found

    return workloads


class Event(NamedTuple):
    kind: str  # call, section, turn, open, refused, drop
    what: str  # the engine method of a call
    start: int
    end: int
    label: str

    @property
    def took(self) -> int:
        return self.end - self.start


class Recorder:
    """The kit's events while ``observe(recorder)``, filed under their thread's ``local.label``."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.events: list[Event] = []

    def __call__(self, kind: str, what: str, start: int, end: int) -> None:
        self.events.append(Event(kind, what, start, end, getattr(self.local, "label", "")))

    def of(self, kind: str, label: str | None = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and label in (None, e.label)]

    def longest(self, kind: str, label: str | None = None) -> Event:
        return max(self.of(kind, label), key=lambda e: e.took, default=Event(kind, "-", 0, 0, ""))

    def engine(self, label: str | None = None, per: int = 1) -> dict[str, dict[str, float]]:
        """Engine calls per method, per ``per`` operations: calls and ms, the most time first."""
        methods: dict[str, list[int]] = {}
        for e in self.of("call", label):
            methods.setdefault(e.what, []).append(e.took)
        return {
            name: {"calls": round(len(took) / per, 2), "ms": round(sum(took) / 1e6 / per, 4)}
            for name, took in sorted(methods.items(), key=lambda kv: -sum(kv[1]))
        }


async def engine_calls(op: Callable[[], Any], calls: int = 10) -> dict[str, dict[str, float]]:
    """The engine calls per call of ``op`` (sync or async) after a first, untimed and uncounted."""
    recorder = Recorder()
    for call in range(calls + 1):
        with observe(recorder) if call else contextlib.nullcontext():
            await settle(op())
    return recorder.engine(per=calls)


def calls_line(engine: Mapping[str, Mapping[str, float]]) -> str:
    return "; ".join(f"`{m}` x{c['calls']:g} {ms(c['ms'])}" for m, c in engine.items()) or "none"


def fill(path: Path, nodes: Iterable[tuple[str, Any]]) -> None:
    """A store at ``path`` holding ``nodes`` (id, JSON content), in one raw engine commit."""
    path.mkdir(parents=True, exist_ok=True)
    store = mnem.init(path)
    for node_id, content in nodes:
        store.add(node_id, content)
    store.commit("benchmark fixture", author="bench")


def commits_after(path: Path, template: Path) -> list[Written]:
    """What each commit in the store ``path`` made after its copy ``template`` changed, and where,
    oldest first; its volumes (ADR 0028): its ``.mnem``, then each ``.mnem-volumes/<n>``."""
    found = []
    for volume in [path, *sorted(path.glob(".mnem-volumes/*"))]:
        where, engine, mine = str(volume.relative_to(path)), mnem.open(volume), []
        since = mnem.open(template / where).head_commit() if (template / where).is_dir() else None
        for commit in engine.log(first_parent=True):
            if commit.id == since or not commit.parents:
                break
            mine.append((commit.time, where, list(engine.diff(commit.parents[0], commit.id))))
        found += mine[::-1]  # then sorted by time, stably: a volume's own order stays
    return [(where, changes) for _, where, changes in sorted(found, key=lambda each: each[0])]


def replay(path: Path, engines: dict[str, mnem.Store], written: Written) -> None:
    """``written`` committed again by the raw engine on the copy ``path``: the floor of a write."""
    where, changes = written
    engine = engines.get(where)
    if engine is None:
        folder = path / where
        if not (folder / ".mnem").is_dir():  # a volume the write began, made outside the
            with tempfile.TemporaryDirectory(dir=path.parent) as made:  # store (init refuses
                mnem.init(made)  # a folder inside one), then moved in
                folder.mkdir(parents=True, exist_ok=True)
                os.rename(Path(made) / ".mnem", folder / ".mnem")
        engine = engines[where] = mnem.open(folder)
    for change in changes:
        if (node := change.new) is None:
            engine.rm(change.id)
        else:
            more = {k: getattr(node, k) for k in ("content_kind", "provenance", "event_time")}
            engine.add(node.id, node.content, **more)
    engine.commit("replayed", author="bench")


def child_json(script: str, *args: str) -> Json:
    """What the ``child(*args)`` given to ``script``'s :func:`execute` returns, in a new process."""
    run = [sys.executable, script, "--child", *args]
    done = subprocess.run(run, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


async def call_tool(client: Any, name: str, **arguments: Any) -> Any:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content}")
    return result


@dataclass(frozen=True)
class Target:
    """A measured value (``None``: not measured) against its limit; ``key`` as in before.json."""

    key: str
    label: str
    measured: float | None
    limit: float
    where: str
    why: str = ""  # shown when the target is missed
    unit: str = "x"  # "x" for a ratio, " ms" or " s" for a duration
    higher_is_better: bool = False

    @property
    def met(self) -> bool | None:
        got, limit = self.measured, self.limit
        return None if got is None else (got >= limit if self.higher_is_better else got <= limit)


@dataclass
class Summary:
    targets: list[Target] = field(default_factory=list)
    table: list[list[str]] = field(default_factory=list)  # its header first
    note: str = ""  # beside the module's docstring
    chart: tuple[str, dict[str, float]] = ("", {})  # title, bars: when there is no target

    def target(self, *args: Any, **kwargs: Any) -> None:
        self.targets.append(Target(*args, **kwargs))

    def per_row(
        self, key: str, label: str, rows: list[Any], pair: str, limit: float, why: str = ""
    ) -> None:
        """A target per row: ratio ``pair``; the row's size ``n`` or ``k`` ends the key, fills ``{}``."""
        for row in rows:
            size = next(s for s in ("n", "k") if s in row)
            at, n = row[size], f"{row[size]:,}"
            measured, why_n = row["ratios"][pair], because(row, why)
            self.target(f"{key}.{at}", label.format(n), measured, limit, f"{size}={n}", why_n)

    def rows(self, rows: list[Json]) -> "Summary":
        """The table: rows ``{"case", "subjects": stats, "ratios", "engine"?}``, a line each."""
        shown = {name: cell for name, cell in CELLS.items() if any(cell[0] in r for r in rows)}
        cells = [[r["case"], *(f(r) if k in r else "" for k, f in shown.values())] for r in rows]
        self.table = [["case", *shown], *cells]
        return self


def num(value: float) -> str:
    """Three significant digits (thousands grouped from 1,000 up)."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def ms(value: float) -> str:
    return f"{num(value)} ms" if value >= 0.001 or value == 0 else f"{num(value * 1000)} µs"


def medians(row: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} {ms(s['median_ms'])}" for name, s in row["subjects"].items())


CELLS: dict[str, tuple[str, Callable[[Mapping[str, Any]], str]]] = {  # header: (key, its cell)
    "medians": ("subjects", medians),
    "ratios": ("ratios", lambda r: ", ".join(f"{p} {num(v)}x" for p, v in r["ratios"].items())),
    "engine calls per call": ("engine", lambda r: calls_line(r["engine"])),
}


def because(row: Mapping[str, Any], more: str = "") -> str:
    """Why a row's target is where it is: its medians, engine calls, and ``more``."""
    calls = f" Engine calls per call: {calls_line(row['engine'])}." if "engine" in row else ""
    return f"Medians: {medians(row)}.{calls}" + (more and f" {more}")


def execute(name: str, full: Plan, smoke: Plan, workloads: Workloads, child: Any = None) -> None:
    """Parse the options, run ``workloads`` in a scratch space, write ``<out>/<name>.json``; or
    with ``--child``, print what ``child`` returns (for :func:`child_json`)."""
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(asyncio.run(settle(child(*sys.argv[2:])))))
        return
    args = parser(sys.modules["__main__"].__doc__ or "").parse_args()
    started, plan, load = time.monotonic(), smoke if args.smoke else full, [os.getloadavg()[0]]
    run = functools.partial(subprocess.run, cwd=BENCH_DIR, capture_output=True, text=True)
    found = ((d.metadata["Name"], d.version) for d in importlib.metadata.distributions())
    result: Json = {"benchmark": name, "smoke": args.smoke}
    result["machine"] = {  # what the figures were measured on
        "date": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": dict(sorted((n, v) for n, v in found if n.split("-")[0] in FAMILIES)),
        "commit": run(["git", "rev-parse", "HEAD"]).stdout.strip()[:12],
        "packages_dirty": bool(run(["git", "status", "--porcelain", "--", "../packages"]).stdout),
    }
    sampling = threading.Event()

    def sample() -> None:  # the 1-minute load average every 5 s
        while not sampling.wait(5):
            load.append(os.getloadavg()[0])

    threading.Thread(target=sample, daemon=True).start()
    scratch = Scratch(args.workdir)
    try:
        result["workloads"] = asyncio.run(workloads(scratch, plan))
    finally:
        sampling.set()
        scratch.discard(scratch.disk, scratch.ram)
    result |= {"plan": vars(plan), "elapsed_s": round(time.monotonic() - started, 1)}
    result["load"] = {"mean": round(statistics.fmean(load), 2), "max": max(load)}
    path = args.out / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    progress(f"done in {result['elapsed_s']} s: {path}")


def parser(description: str) -> argparse.ArgumentParser:
    def ignored_workdir(given: str) -> Path:
        """``given``, unless git would see stores there (refused before anything is written)."""
        path = Path(given)
        try:
            check = ["git", "check-ignore", "-q", str(path.resolve() / "store")]
            probe = subprocess.run(check, cwd=BENCH_DIR, capture_output=True)
        except OSError:  # no git: not a checkout anyone commits from
            return path
        if probe.returncode == 1:
            raise SystemExit(
                f"--workdir {path}: git does not ignore it, so a run's stores could be committed;"
                f" use the default ({BENCH_DIR / '.work'}), a folder outside the repository, or"
                " one that .gitignore covers"
            )
        return path  # 0: ignored; 128: outside the repository, or not a git checkout

    args = argparse.ArgumentParser(description=description)
    args.add_argument("--smoke", action="store_true", help="tiny sizes, seconds; for the tests")
    args.add_argument("--out", type=Path, default=RESULTS, help="where the JSON results go")
    where = "where stores under test live (git-ignored, or outside the repository)"
    args.add_argument("--workdir", type=ignored_workdir, default=BENCH_DIR / ".work", help=where)
    return args
