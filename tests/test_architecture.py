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


# The platforms the core must not know: every package under adapters/ but the console, the core's
# own local surface (bot/access.py trusts the person at the keyboard by its name).
PLATFORMS = sorted(p.name for p in (ROOT / "adapters").iterdir() if (p / "__init__.py").is_file() and p.name != "console")


def platform_words(path: Path, platforms: list[str]) -> list[str]:
    """Names and string constants in a module's code (not its comments or docstrings) that name a
    platform: a setting (`settings.slack_bot_token`), a key constructor, a platform's string."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.append((node.lineno, node.value))
        for field in ("id", "attr", "arg", "name"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                words.append((getattr(node, "lineno", 0), value))
    return [
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line} {word!r}"
        for line, word in words
        if any(platform in word.lower() for platform in platforms)
    ]


def test_the_core_names_no_platform() -> None:
    """A platform is one package: its settings, conversation keys and quirks live there, so adding
    one edits nothing in bot/ (comments and docstrings may still name platforms as examples)."""
    assert PLATFORMS == ["discord", "slack"]
    bad = [w for path in sorted((ROOT / "bot").rglob("*.py")) if path != COMPOSITION_ROOT for w in platform_words(path, PLATFORMS)]
    assert bad == []


def test_the_platform_reader_sees_names_and_strings_but_not_prose(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        '"""Works on Slack."""\n# and Discord\ndef f(settings):\n    """Slack\'s token."""\n'
        '    return settings.slack_bot_token, "discord", ConversationKey.discord\n',
        encoding="utf-8",
    )
    assert [w.split(" ", 1)[1] for w in platform_words(sample, ["discord", "slack"])] == [
        "'slack_bot_token'", "'discord'", "'discord'",
    ]


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


AGENT_PACKAGES = sorted(p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "agents").glob("*/agent.py"))


def test_every_agent_package_is_found() -> None:
    assert AGENT_PACKAGES == ["agents/chat", "agents/hotel", "agents/proofread", "agents/shopping"]


@pytest.mark.parametrize("package", AGENT_PACKAGES)
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
