"""Render the JSON results (``--results DIR``, default ``benchmarks/results``) into ``SUMMARY.md``
and one PNG each: each benchmark's ``summarize`` turns its stored workloads into targets and
tables, beside the figures from before the kit's redesign (``results/before.json``)."""

import argparse
import json
from importlib import import_module
from pathlib import Path
from typing import Any

from harness import RESULTS, SCRIPTS, Summary, Target, num
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter

VERDICTS = {True: "PASS", False: "**MISS**", None: "n/a"}


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    return [*lines, *("| " + " | ".join(row) + " |" for row in rows), ""]


def value(target: Target, measured: float | None) -> str:
    return "n/a" if measured is None else f"{num(measured)}{target.unit}"


def draw(name: str, summary: Summary, path: Path) -> bool:
    """The targets as measured / limit (1 or less passes; red: missed), else the chart's bars."""
    bars = {
        t.key.split(".", 1)[1]: t.limit / t.measured if t.higher_is_better else t.measured / t.limit
        for t in summary.targets
        if t.measured
    }
    title, bars = ("measured / limit (log; 1 or less passes)", bars) if bars else summary.chart
    if not bars:
        return False
    ax = Figure(figsize=(7, 0.8 + 0.3 * len(bars))).subplots()
    colors = ["tab:red" if summary.targets and v > 1 else "tab:blue" for v in bars.values()]
    ax.barh(list(bars), list(bars.values()), color=colors)
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set(xscale="log", xlim=(min(0.1, min(bars.values()) / 2), max(10, max(bars.values()) * 2)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.set_title(f"{name}: {title}", fontsize=10)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(True, axis="x", alpha=0.3)
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=90)
    return True


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


if __name__ == "__main__":
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--results", type=Path, default=RESULTS, help="directory of the JSON results")
    folder = args.parse_args().results
    results = {n: found for n in SCRIPTS if (found := read(folder / f"{n}.json"))}
    if not results:
        raise SystemExit(f"no results in {folder}")
    before = (read(RESULTS / "before.json") or {}).get("targets", {})
    modules = {n: import_module(f"bench_{n}") for n in results}
    summaries = {n: modules[n].summarize(r["workloads"]) for n, r in results.items()}
    host = next(iter(results.values()))["machine"]
    lines = [
        "# Benchmark results\n",
        "Written by `benchmarks/report.py` from the JSON beside it; `uv run python "
        "benchmarks/run_all.py` measures everything again. Ratios are of medians against an "
        "anchor timed in the same interleaved rounds (the machine is shared and noisy).\n",
        f"- Machine: {host['cpu_count']} CPUs, {host['platform']}, Python {host['python']}",
        f"- Packages: {', '.join(f'{name} {v}' for name, v in host['packages'].items())}",
        f"- Commit: `{host['commit']}`" + " (packages/ had local changes)" * host["packages_dirty"],
    ]
    for name, result in results.items():
        machine, load, smoke = result["machine"], result["load"], result["smoke"]
        lines.append(
            f"- `{name}`: {machine['date']}, {result['elapsed_s']} s; 1-minute load average"
            f" {machine['load_average']:.2f} before, {load['mean']:.2f} mean and {load['max']:.2f}"
            " max during" + " (**smoke run: tiny sizes, the figures mean nothing**)" * smoke
        )
    rows, body = [], []
    for name, summary in summaries.items():
        own, png = getattr(modules[name], "draw", None), folder / f"{name}.png"
        drawn = own(results[name]["workloads"], png) if own else draw(name, summary, png)
        body += [f"## {name}", ""] + [f"![{name}]({name}.png)", ""] * drawn
        body += [" ".join(f"{modules[name].__doc__} {summary.note}".split()), ""]
        body += table(summary.table[0], summary.table[1:]) if summary.table else []
        for t in summary.targets:
            limit = ("≥ " if t.higher_is_better else "≤ ") + value(t, t.limit)
            cells = [before.get(t.key, ""), value(t, t.measured), t.where, VERDICTS[t.met]]
            rows.append([name, t.label, limit, *cells])
    lines += [
        "\n## Targets\n",
        "Before: the target as measured before the kit's redesign (ADR 0019), blank where it "
        "was not measured then.\n",
        *table(["benchmark", "target", "limit", "before", "measured", "at", "result"], rows),
    ]
    unmet = [t for summary in summaries.values() for t in summary.targets if not t.met]
    missed = [f"- **{t.label}** ({value(t, t.measured)}): {t.why}" for t in unmet]
    lines += ["### Misses explained", "", *missed, ""] if missed else []
    (folder / "SUMMARY.md").write_text("\n".join(lines + body).rstrip() + "\n", encoding="utf-8")
    print(f"wrote {folder / 'SUMMARY.md'}")
