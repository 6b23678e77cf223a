"""The seams hold: the core imports no agent and no platform; agents and platforms don't import
each other. Read from the code itself (every import statement, also inside functions)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPOSITION_ROOT = ROOT / "bot" / "__main__.py"  # the one module that wires core, agents, platforms


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def arrows(package: str, forbidden: tuple[str, ...], *, skip: tuple[Path, ...] = ()) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if path in skip:
            continue
        for module in sorted(imported_modules(path)):
            if module.split(".")[0] in forbidden:
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    return bad


def test_the_core_imports_no_agent_and_no_adapter() -> None:
    assert arrows("bot", ("agents", "adapters"), skip=(COMPOSITION_ROOT,)) == []


def test_agents_import_no_adapter_and_adapters_no_agent() -> None:
    assert arrows("agents", ("adapters",)) == []
    assert arrows("adapters", ("agents",)) == []


def test_the_import_reader_sees_imports_anywhere(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agents.hotel import x\n"
        "def f():\n    from adapters.slack.app import SlackBot\n    importlib.import_module('agents.chat')\n",
        encoding="utf-8",
    )
    assert {"agents.hotel", "adapters.slack.app", "agents.chat", "os"} <= imported_modules(sample)


@pytest.mark.parametrize("package", ["agents/hotel", "agents/proofread", "agents/chat"])
def test_every_agent_package_follows_the_template(package: str) -> None:
    """agent.py holds AGENT, graph.py `build_graph`, state.py the state, prompts/ the prompts;
    __init__.py imports nothing (a worker process may import the package cheaply)."""
    folder = ROOT / package
    for name in ("agent.py", "graph.py", "state.py", "__init__.py"):
        assert (folder / name).is_file(), f"{package}/{name} is missing"
    assert any((folder / "prompts").glob("*.md"))
    graph = ast.parse((folder / "graph.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.FunctionDef) and n.name == "build_graph" for n in graph.body)
    agent = ast.parse((folder / "agent.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "AGENT" for t in n.targets) for n in agent.body)
    assert imported_modules(folder / "__init__.py") <= {"__future__"}
