"""The kit's door stays small: adapters import only its public names, and it has no import circle.

Public is ``__all__`` of ``mnem_adapter_kit`` and of its public modules (every module
whose name has no part starting with ``_``, each declaring ``__all__``). Everything
that uses the kit from outside it is checked: every adapter's source and tests, the
cross-adapter tests, examples, benchmarks and scripts.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT = "mnem_adapter_kit"
KIT_SOURCE = ROOT / "packages" / "mnem-adapter-kit" / "src" / KIT
USERS = [
    *(path for path in (ROOT / "packages").glob("mnem-*") if path.name != "mnem-adapter-kit"),
    ROOT / "tests",
    ROOT / "examples",
    ROOT / "benchmarks",
    ROOT / "scripts",
]


def kit_imports(source: Path) -> Iterator[tuple[int, str, str | None]]:
    """Every ``(line, module, name)`` of ``source`` that imports from the kit (name None: a module)."""
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == KIT or node.module.startswith(KIT + "."):
                for alias in node.names:
                    yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == KIT or alias.name.startswith(KIT + "."):
                    yield node.lineno, alias.name, None


def is_public_module(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


def exported(module: str) -> set[str]:
    names = getattr(importlib.import_module(module), "__all__", None)
    assert names is not None, f"the public module {module} declares no __all__"
    return set(names)


def refusals(source: Path) -> Iterator[str]:
    for line, module, name in kit_imports(source):
        where = f"{source.relative_to(ROOT)}:{line}"
        if not is_public_module(module):
            yield f"{where} imports the private module {module}"
        elif not _is_module(module):
            yield f"{where} imports {module}, which does not exist"
        elif (
            name is not None
            and name not in exported(module)
            and not _is_public_submodule(module, name)
        ):
            yield f"{where} imports {name}, which {module} does not declare public"


def _is_public_submodule(module: str, name: str) -> bool:
    return is_public_module(name) and _is_module(f"{module}.{name}")


def _is_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def test_everything_outside_the_kit_imports_only_its_public_names() -> None:
    found = [
        refusal
        for user in USERS
        for source in sorted(user.rglob("*.py"))
        if ".venv" not in source.relative_to(user).parts  # mnem-crewai's own environment
        for refusal in refusals(source)
    ]
    assert found == []


def test_the_kit_declares_about_fifteen_names_at_its_top() -> None:
    assert len(exported(KIT) - {"__version__"}) <= 16


def test_no_kit_module_imports_another_in_a_circle() -> None:
    graph = {module: set(_kit_dependencies(path)) for module, path in _kit_modules()}
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            module, path = stack.pop()
            for neighbour in graph.get(module, ()):
                if neighbour == start:
                    cycles.append(" -> ".join([*path, start]))
                elif neighbour not in path:
                    stack.append((neighbour, [*path, neighbour]))
    assert cycles == []


def _kit_modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(KIT_SOURCE.rglob("*.py")):
        parts = list(path.relative_to(KIT_SOURCE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _kit_dependencies(path: Path) -> Iterator[str]:
    """The kit modules ``path`` imports, relative imports resolved, ``TYPE_CHECKING`` ones too."""
    package = list(path.relative_to(KIT_SOURCE.parent).with_suffix("").parts)[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - node.level + 1]
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
        elif node.module and node.module.split(".")[0] == KIT:
            module = node.module
        else:
            continue
        for alias in node.names:
            submodule = KIT_SOURCE.parent.joinpath(*f"{module}.{alias.name}".split("."))
            found = submodule.is_dir() or submodule.with_suffix(".py").exists()
            yield f"{module}.{alias.name}" if found else module


@pytest.mark.parametrize(
    "module",
    [
        "mnem_adapter_kit.errors",
        "mnem_adapter_kit.formats",
        "mnem_adapter_kit.formats.knowledge_graph",
        "mnem_adapter_kit.formats.langgraph",
        "mnem_adapter_kit.formats.mcp",
        "mnem_adapter_kit.formats.sessions",
        "mnem_adapter_kit.history",
        "mnem_adapter_kit.numbered",
        "mnem_adapter_kit.view",
    ],
)
def test_each_public_module_says_what_it_offers(module: str) -> None:
    assert exported(module)
