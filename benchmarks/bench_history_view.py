"""How fast ``mnem-history html`` is on a 3,000-commit store, and how fast its page answers.

    uv run python benchmarks/bench_history_view.py            # -> results/history_view.json
    uv run python benchmarks/bench_history_view.py --smoke    # 60 commits, figures meaningless

Targets: generating the page takes at most 5 s; the page is interactive in headless
Chromium within 2 s. The store is written by the real adapters (AutoGen items added and
cleared, LangGraph items put and deleted across ten namespaces, MCP nodes revised).
Generation is timed as a user runs it, in a new process (the kit's history caches start
empty); a second process times each phase, the engine's per-commit reads (what a commit
missing from the kit's change record costs) and counts the commits the record covers. The
browser part needs Debian's ``chromium`` and the npm package ``playwright-core``
(``scripts/ci/browser.sh`` installs both).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from harness import RESULTS, Scratch, disk_bytes, git, parser, progress, versions, write_json

TARGET_GENERATE_S = 5.0
TARGET_INTERACTIVE_S = 2.0
TOOLS = Path(os.environ.get("MNEM_BROWSER_TOOLS", Path.home() / ".cache" / "mnem-browser"))
PLAYWRIGHT_CORE = Path(
    os.environ.get("MNEM_PLAYWRIGHT_CORE", TOOLS / "node_modules" / "playwright-core")
)
CHROMIUM = os.environ.get("MNEM_CHROMIUM", "/usr/bin/chromium")


async def build_store(path: Path, commits: int) -> None:
    """``commits`` commits by the three adapters, in a fixed pseudo-random mix."""
    from autogen_core.memory import MemoryContent

    from mnem_autogen import MnemosyneMemory
    from mnem_langgraph import MnemosyneStore
    from mnem_mcp import StoreSettings
    from mnem_mcp.memory import MemoryService
    from mnem_mcp.models import NewNode, ProvenanceIn

    pick = random.Random(7)
    notes = MnemosyneMemory("assistant", path)
    odd = MnemosyneMemory('team:ü/<b>"50%"', path)
    graph = MnemosyneStore(path)
    service = MemoryService(StoreSettings(path=path))
    users = [f"user{i}" for i in range(10)]
    made = 0
    step = 0
    while made < commits:
        step += 1
        lane = step % 10
        if lane < 3:
            memory = notes if lane < 2 else odd
            if step % 400 == 0:
                if not await memory.items():
                    continue
                await memory.clear()
            else:
                fact = f"fact {step}: the user likes {pick.choice(['tea', 'jazz', 'rain'])}"
                await memory.add(MemoryContent(content=fact, mime_type="text/plain"))
        elif lane < 8:
            namespace = ("memories", pick.choice(users))
            key = f"k{pick.randrange(6)}"
            if step % 97 == 0 and await graph.aget(namespace, key) is not None:
                await graph.adelete(namespace, key)
            else:
                value = {"fact": f"value {step}", "n": step, "_meta": {"source": f"step {step}"}}
                await graph.aput(namespace, key, value)
        else:
            node = NewNode(
                node_id=f"user/{pick.choice(['city', 'name', 'job', 'pet'])}",
                content={"v": step},
                provenance=ProvenanceIn(source="chat", note=f"turn {step}"),
            )
            await service.remember([node], None, "remember")
        made += 1
        if made % 500 == 0:
            progress(f"built {made}/{commits} commits")
    await notes.close()
    await odd.close()
    graph.close()
    service.close()


PHASES = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    from mnem_adapter_kit import attach, changelog
    from mnem_adapter_kit.view import cli, page
    from mnem_adapter_kit.view.readers import Readers, FOREIGN
    from mnem_adapter_kit.view.timeline import head_of, walk_steps
    t1 = time.perf_counter()
    readers = Readers.installed()
    t2 = time.perf_counter()
    client = attach(sys.argv[1], create=False)
    out = {"import_s": t1 - t0, "readers_s": t2 - t1}

    def generate(prefix):
        a, a_cpu = time.perf_counter(), time.process_time()
        head = head_of(client)
        b = time.perf_counter()
        b_cpu = time.process_time()
        steps = list(walk_steps(client, readers, head.chain))
        c, c_cpu = time.perf_counter(), time.process_time()
        origins = cli.merged_origins(client, steps)
        d = time.perf_counter()
        data = page.page_data(client.root, head, steps, origins, [*readers.names, FOREIGN])
        html = page.render(data, "bench")
        e = time.perf_counter()
        page.write_page(sys.argv[2], html)
        f, f_cpu = time.perf_counter(), time.process_time()
        out.update({
            prefix + "chain_s": b - a, prefix + "walk_s": c - b, prefix + "merge_origins_s": d - c,
            prefix + "render_s": e - d, prefix + "write_s": f - e, prefix + "total_s": f - a,
            prefix + "walk_cpu_s": c_cpu - b_cpu, prefix + "total_cpu_s": f_cpu - a_cpu,
        })
        return head

    head = generate("cold_")
    generate("warm_")
    ids = [entry.id for entry in head.chain]
    parents = {e.id: e.parents[0] for e in head.chain if e.parents}
    sample = [c for c in ids[:: max(1, len(ids) // 60)] if c in parents][:60]
    calls = {"resolve_full_id": [], "changed_by": [], "diff_with_first_parent": [], "state_at": []}
    with client.session() as engine:
        for c in sample:  # interleaved, so a change of load hits every kind of call alike
            for name, call in (
                ("resolve_full_id", lambda: engine.resolve(c)),
                ("changed_by", lambda: engine.changed_by(c)),
                ("diff_with_first_parent", lambda: engine.diff(parents[c], c)),
                ("state_at", lambda: engine.state_at(c)),
            ):
                a = time.perf_counter()
                call()
                calls[name].append((time.perf_counter() - a) * 1000)
        out["nodes_at_head"] = len(engine.state_at(ids[0])) if ids else 0
    median = lambda xs: sorted(xs)[len(xs) // 2] if xs else None
    out["engine_ms_per_call_median"] = {name: median(xs) for name, xs in calls.items()}
    if sample:
        share = 2 * median(calls["resolve_full_id"]) / median(calls["diff_with_first_parent"])
        out["resolve_share_of_diff"] = share
    out["commits_on_chain"] = len(ids)
    out["commits_in_change_record"] = len(changelog.read(sys.argv[1]))
    client.close()
    print(json.dumps(out))
    """
)


def run(*args: str) -> str:
    """What this Python prints, run on ``args``."""
    done = subprocess.run([sys.executable, *args], check=True, capture_output=True, text=True)
    return done.stdout


def timed_command(*args: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``python -m mnem_adapter_kit.view ARGS`` in a new process
    (on a loaded machine the wall clock also counts the time others held the cores)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run("-m", "mnem_adapter_kit.view", *args)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


DRIVER = textwrap.dedent(
    """
    const { chromium } = require(process.argv[2]);
    const [executablePath, file, runs] = process.argv.slice(3);
    const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"];
    (async () => {
      const browser = await chromium.launch({ executablePath, args: ARGS });
      const out = [];
      for (let i = 0; i < Number(runs); i++) {
        const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
        const started = Date.now();
        await page.goto("file://" + file);
        await page.waitForSelector('html[data-ready="true"]');
        const ready = Date.now();
        const readyInPage = await page.evaluate(() => window.historyViewReadyAt);
        const clickAt = Date.now();
        await page.click("#timeline li.row:nth-child(3)");
        await page.waitForSelector("#timeline li.row:nth-child(3) .detail");
        const answered = Date.now();
        await page.waitForSelector('html[data-complete="true"]');
        const complete = Date.now();
        const rows = await page.locator("#timeline li.row").count();
        await page.click('nav button[data-view="items"]');
        await page.click("#items li.row:nth-child(1)");
        await page.waitForSelector("#item-panel h2");
        const itemShown = Date.now();
        await page.click('nav button[data-view="diff"]');
        await page.waitForSelector("#diff-summary:not(:empty)");
        const diffShown = Date.now();
        out.push({
          ready_in_page_ms: readyInPage, goto_to_ready_ms: ready - started,
          first_click_answered_ms: answered - clickAt, all_rows_listed_ms: complete - started,
          rows, open_item_ms: itemShown - complete, open_diff_ms: diffShown - itemShown,
        });
        await page.close();
      }
      console.log(JSON.stringify({ version: browser.version(), runs: out }));
      await browser.close();
    })().catch((e) => { console.error(e); process.exit(1); });
    """
)


def browser(page_file: Path, runs: int) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None or not os.path.exists(CHROMIUM) or not PLAYWRIGHT_CORE.is_dir():
        return {"skipped": "needs node, chromium and playwright-core (scripts/ci/browser.sh)"}
    with tempfile.TemporaryDirectory() as folder:
        driver = Path(folder) / "driver.cjs"
        driver.write_text(DRIVER)
        done = subprocess.run(
            [node, str(driver), str(PLAYWRIGHT_CORE), CHROMIUM, str(page_file), str(runs)],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    found: dict[str, Any] = json.loads(done.stdout)
    samples = found["runs"]
    found["median"] = {
        key: statistics.median(run[key] for run in samples) for key in samples[0] if key != "rows"
    }
    found["rows"] = samples[0]["rows"]
    return found


def environment() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions(
            ("mnem-agents", "mnem-adapter-kit", "mnem-autogen", "mnem-langgraph", "mnem-mcp")
        ),
        "commit": git("rev-parse", "--short", "HEAD"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def main() -> None:
    out = RESULTS / "history_view.json"
    args = parser(__doc__.splitlines()[0], out, workdir=False).parse_args()
    commits, runs = (60, 1) if args.smoke else (3000, 3)
    before = environment()
    with tempfile.TemporaryDirectory(prefix="bench-history-view-") as folder:
        work, scratch = Path(folder), Scratch(Path(folder))
        try:
            progress(f"building a {commits}-commit store with the three adapters")
            started = time.perf_counter()
            template = scratch.template(
                "store", lambda path: asyncio.run(build_store(path, commits))
            )
            built_s = time.perf_counter() - started
            store = scratch.fresh(template)
        finally:
            scratch.discard(scratch.ram)
        size = disk_bytes(store / ".mnem")
        progress("cold generation, as a user runs it")
        page_file = work / "history.html"
        generate_s, generate_cpu_s = timed_command(
            "--store", str(store), "html", "--out", str(page_file)
        )
        html_bytes = page_file.stat().st_size
        progress(f"  {generate_s:.2f} s ({generate_cpu_s:.2f} s of CPU), {html_bytes / 1e6:.2f} MB")
        log_s, log_cpu_s = timed_command("--store", str(store), "log", "-n", "20")
        progress("phases and engine calls, in a new process")
        detail: dict[str, Any] = json.loads(run("-c", PHASES, str(store), str(work / "again.html")))
        progress("the page in headless Chromium")
        seen = browser(page_file, runs)
    interactive_s = seen["median"]["goto_to_ready_ms"] / 1000 if "median" in seen else None
    walk_s = detail["cold_walk_s"]
    result = {
        "what": "mnem-history html on a store written by the three adapters",
        "targets": {"generate_s": TARGET_GENERATE_S, "interactive_s": TARGET_INTERACTIVE_S},
        "met": {
            "generate": generate_s <= TARGET_GENERATE_S,
            "generate_cpu": generate_cpu_s <= TARGET_GENERATE_S,
            "interactive": None if interactive_s is None else interactive_s <= TARGET_INTERACTIVE_S,
        },
        "store": {
            "commits": detail["commits_on_chain"],
            "nodes_at_head": detail["nodes_at_head"],
            "size_bytes": size,
            "build_s": built_s,
        },
        "generation": {
            "cold_cli_s": generate_s,
            "cold_cli_cpu_s": generate_cpu_s,
            "html_bytes": html_bytes,
            "log_20_cold_cli_s": log_s,
            "log_20_cold_cli_cpu_s": log_cpu_s,
            "phases": detail,
        },
        "browser": seen,
        "interactive_s": interactive_s,
        "environment": {"before": before, "after_load_average": list(os.getloadavg())},
    }
    progress(f"wrote {write_json(args.out, result, indent=2)}")
    summary = {"generate_s": generate_s, "generate_cpu_s": generate_cpu_s}
    print(json.dumps({**summary, "interactive_s": interactive_s, "walk_s": walk_s}))


if __name__ == "__main__":
    main()
