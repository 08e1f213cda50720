"""A real crew remembers through MnemosyneStorage, and a crew in another process recalls it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from mnem_crewai import MnemosyneStorage

FACT = "The project codename is Bluebird."
HERE = Path(__file__).parent

CREW = textwrap.dedent(
    """
    import sys
    from crewai import Agent, Crew, Task
    from crewai.memory.unified_memory import Memory
    from fakes import ScriptedLLM, embed
    from mnem_crewai import MnemosyneStorage

    store, fact, question = sys.argv[1:4]
    memory = Memory(
        storage=MnemosyneStorage(store), llm=ScriptedLLM(model="scripted", fact=fact), embedder=embed
    )
    agent = Agent(
        role="Archivist",
        goal="Keep track of project facts",
        backstory="You remember what the team tells you.",
        llm=ScriptedLLM(model="scripted", fact=sys.argv[4] if len(sys.argv) > 4 else ""),
    )
    task = Task(description=question, expected_output="One sentence.", agent=agent)
    result = Crew(agents=[agent], tasks=[task], memory=memory).kickoff()
    memory.close()
    print("ANSWER:", result.raw)
    """
)


def kickoff(store: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    done = subprocess.run(
        [sys.executable, "-c", CREW, str(store), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=True,
    )
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("ANSWER:")]
    return line.removeprefix("ANSWER:").strip()


def test_a_crew_remembers_and_a_later_process_recalls(tmp_path: Path) -> None:
    store = tmp_path / "crew-memory"
    first = kickoff(store, FACT, f"Note this for the team: {FACT}")
    assert first == "Done."

    storage = MnemosyneStorage(store)
    (saved,) = storage.list_records()
    assert (saved.content, saved.scope, saved.categories) == (FACT, "/facts", ["fact"])
    origin = storage.why(saved.id)
    assert origin.commit == storage.history()[0].id
    assert len(saved.embedding or []) == 64
    storage.close()

    second = kickoff(store, "", "What is the project codename?", FACT)
    assert second == f"I remember: {FACT}"
