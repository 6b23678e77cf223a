"""Start-up imports: the offline bot does not load the OpenAI SDK (about half a second of CPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_composition_root_does_not_import_the_openai_sdk() -> None:
    probe = (
        "import sys\n"
        "from adapters.registry import platform_commands\n"
        "from agents.registry import registered_agents\n"
        "import bot.cli, bot.runtime\n"
        "registered_agents(); platform_commands()\n"
        "print('openai' in sys.modules, 'langchain_openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
