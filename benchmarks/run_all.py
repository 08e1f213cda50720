"""Run every benchmark, each in its own process (so one's memory and handles cannot colour the
next's), then render the summary: the one command that refreshes ``benchmarks/results``."""

from __future__ import annotations

import subprocess
import sys
import time

from harness import BENCH_DIR, SCRIPTS, ignored_workdir, parser, progress


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    ignored_workdir(args.workdir)  # before the first benchmark, not after it
    started = time.monotonic()
    flags = ["--out", str(args.out), "--workdir", str(args.workdir)] + ["--smoke"] * args.smoke
    for name in SCRIPTS:
        progress(f"bench_{name}.py ...")
        subprocess.run([sys.executable, str(BENCH_DIR / f"bench_{name}.py"), *flags], check=True)
    report = [sys.executable, str(BENCH_DIR / "report.py"), "--results", str(args.out)]
    subprocess.run(report, check=True)
    progress(f"all benchmarks done in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
