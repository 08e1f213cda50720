"""The installed adapters register their readers, and reading a store loads no framework."""

from __future__ import annotations

import json
import subprocess
import sys


def test_every_adapter_registers_a_reader_that_loads_without_its_framework() -> None:
    script = (
        "import json, sys\n"
        "from mnem_adapter_kit.view._readers import Readers\n"
        "found = Readers.installed()\n"
        "heavy = [m for m in ('autogen_core', 'langgraph', 'mcp', 'agents', 'mnem_autogen',"
        " 'mnem_langgraph', 'mnem_mcp', 'mnem_openai_agents', 'agent_framework',"
        " 'mnem_agent_framework') if m in sys.modules]\n"
        "print(json.dumps({'names': found.names, 'failures': found.failures, 'heavy': heavy}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "names": ["agent-framework", "autogen", "langgraph", "mcp", "openai-agents"],
        "failures": [],
        "heavy": [],
    }
