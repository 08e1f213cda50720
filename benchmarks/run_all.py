"""Run every benchmark, each in its own process (so one's memory and handles cannot colour the
next's), then render the summary: the one command that refreshes ``benchmarks/results``."""

import subprocess
import sys
import time

from harness import BENCH_DIR, SCRIPTS, parser, progress

if __name__ == "__main__":
    args = parser(__doc__ or "").parse_args()  # refuses a --workdir git would see, before any run
    started = time.monotonic()
    flags = ["--out", str(args.out), "--workdir", str(args.workdir)] + ["--smoke"] * args.smoke
    for name in SCRIPTS:
        progress(f"bench_{name}.py ...")
        subprocess.run([sys.executable, str(BENCH_DIR / f"bench_{name}.py"), *flags], check=True)
    report = [sys.executable, str(BENCH_DIR / "report.py"), "--results", str(args.out)]
    subprocess.run(report, check=True)
    progress(f"all benchmarks done in {time.monotonic() - started:.0f} s")
