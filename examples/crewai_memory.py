"""A CrewAI crew whose memory is a Mnemosyne store: what it learned, when, and why.

Run offline from mnem-crewai's own environment (a scripted model, a word-hashing embedder, a
store in a temporary folder):

    cd packages/mnem-crewai && uv run python ../../examples/crewai_memory.py

Keep the store to look at afterwards with ``--store DIR``: the script then prints the
``mnem-history`` commands that show it. Every claim the script prints is also asserted, so it
doubles as a test.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

# Before crewai is imported: no telemetry, no tracing.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.memory.analyze import ExtractedMemories, MemoryAnalysis
from crewai.memory.unified_memory import Memory

from mnem_crewai import MnemosyneStorage

FACT = "The staging database is rebuilt every Sunday night."


def embed(texts: list[str]) -> list[list[float]]:
    """A stand-in for an embedding service: texts sharing words get near vectors."""
    vectors = []
    for text in texts:
        vector = [0.0] * 32
        for word in text.lower().split():
            digest = hashlib.blake2b(word.strip(".,?!").encode(), digest_size=2).digest()
            vector[digest[0] % 32] += 1.0
        vectors.append(vector)
    return vectors


class ScriptedLLM(BaseLLM):
    """A stand-in for a model service: memory's questions answered plainly, tasks by rote."""

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, *args: Any, response_model: Any = None, **kw: Any) -> Any:
        if response_model is ExtractedMemories:
            return ExtractedMemories(memories=[FACT])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(suggested_scope="/ops", categories=["schedule"], importance=0.9)
        if response_model is not None:
            return response_model()
        return "Noted." if FACT not in str(messages) else f"From memory: {FACT}"


def crew(storage: MnemosyneStorage, question: str) -> tuple[Memory, Crew]:
    memory = Memory(storage=storage, llm=ScriptedLLM(model="scripted"), embedder=embed)
    agent = Agent(
        role="Ops assistant",
        goal="Answer questions about the team's systems",
        backstory="You keep track of what the team tells you.",
        llm=ScriptedLLM(model="scripted"),
    )
    task = Task(description=question, expected_output="One sentence.", agent=agent)
    return memory, Crew(agents=[agent], tasks=[task], memory=memory)


def main(store: Path) -> None:
    storage = MnemosyneStorage(store)  # was: Memory()'s default, LanceDB
    memory, team = crew(storage, "Note this for the team: staging is rebuilt on Sunday nights")
    first = team.kickoff().raw
    print("first crew: ", first)
    assert first == "Noted."
    memory.drain_writes()

    matches = memory.recall("When is the staging database rebuilt?", depth="shallow")
    recalled = matches[0].record
    origin = storage.why(recalled.id)
    print(f"recalled:    {recalled.content} (scope {recalled.scope}, score {matches[0].score:.2f})")
    print(f"commit:      {origin.commit[:12]} at {origin.time:%Y-%m-%d %H:%M:%S} UTC")
    (made,) = storage.history()
    print(f"why:         commit {made.message!r} by {made.author}, the crew's first task")
    assert recalled.content == FACT
    assert origin.commit == made.id

    memory, team = crew(storage, "When is the staging database rebuilt?")
    answer = team.kickoff().raw
    print("second crew:", answer)
    assert answer == f"From memory: {FACT}"
    memory.close()


def print_history_commands(store: Path | None) -> None:
    """How to look at the store's history: ``mnem-history`` comes with the adapter."""
    if store is None:
        print("\nthis run's store was temporary; keep one with --store DIR, then look at it:")
        where = "DIR"
    else:
        print("\nthe crew's memory, commit by commit:")
        where = shlex.quote(str(store.resolve()))
    beside = Path(sys.executable).with_name("mnem-history")
    command = shlex.quote(str(beside)) if beside.exists() else "mnem-history"
    print(f"  {command} --store {where} log")
    print(f"  {command} --store {where} html --out history.html")


if __name__ == "__main__":
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--store", type=Path, help="keep the store in this folder")
    kept = options.parse_args().store
    if kept is None:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder) / "crew-memory")
    else:
        main(kept)
    print_history_commands(kept)
