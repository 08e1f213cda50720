"""Helpers for the self-checks: the repository root and stand-in commands."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def write_stub(directory: Path, name: str, body: str) -> Path:
    """An executable bash script `name` in `directory`, to put first on PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    stub = directory / name
    stub.write_text(f"#!/usr/bin/env bash\n{body}\n", encoding="utf-8")
    stub.chmod(0o755)
    return stub
