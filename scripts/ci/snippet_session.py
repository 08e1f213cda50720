"""Run README code blocks one after another in one namespace, as a reader pastes them.

Usage: ``<venv>/bin/python -I snippet_session.py BLOCKS_JSON``

BLOCKS_JSON is a list of ``{"readme": path, "line": n, "code": text, "compile_only": bool}``.
Top-level ``await`` works as in ``python -m asyncio``, all blocks sharing one event loop.
Tracebacks name the README and its line numbers. Standard library only: it runs inside the
environment the README's install line made.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import sys
import traceback
from pathlib import Path


def main() -> int:
    blocks = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    namespace: dict[str, object] = {"__name__": "__main__"}
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        for block in blocks:
            where = f"{block['readme']}:{block['line']}"
            # Leading newlines keep the README's line numbers in tracebacks.
            source = "\n" * (block["line"] - 1) + block["code"]
            code = compile(source, block["readme"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            if block["compile_only"]:
                print(f"   compiled, not run: {where}", flush=True)
                continue
            print(f"   running {where}", flush=True)
            result = eval(code, namespace)  # the README's own code, on purpose
            if inspect.iscoroutine(result):
                loop.run_until_complete(result)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
