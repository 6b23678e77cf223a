"""The first model-backed turn does not freeze the event loop on the openai SDK's lazy imports:
start-up loads them in a worker thread (ModelProvider.warm), so the first structured call imports
(almost) nothing on the loop. Checked in a fresh interpreter, where nothing is imported yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent('''
    import asyncio, sys
    from pydantic import BaseModel
    from langchain_core.messages import HumanMessage, SystemMessage
    from tests.fakes.openai_server import FakeOpenAI, Reply

    class Answer(BaseModel):
        text: str

    async def main(warm):
        async with FakeOpenAI() as server:
            from bot.config import load_settings
            from bot.llm import ModelProvider
            settings = load_settings(OPENAI_API_KEY="k", OPENAI_BASE_URL=server.base_url,
                                     CONCIERGE_DATA_DIR=sys.argv[2], _env_file=None)
            models = ModelProvider.from_settings(settings)
            if warm:
                await models.warm()
            before = set(sys.modules)
            server.script(Reply.json({"text": "ok"}))
            await models.ainvoke(lambda m: m.with_structured_output(Answer),
                                 [SystemMessage("s"), HumanMessage("u")], purpose="structured")
            print(len(set(sys.modules) - before))
            await models.aclose()

    asyncio.run(main(sys.argv[1] == "warm"))
''')


def _imported_during_first_call(mode: str, tmp_path: Path) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, mode, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def test_warming_moves_the_sdks_lazy_imports_off_the_first_call(tmp_path: Path) -> None:
    cold = _imported_during_first_call("cold", tmp_path)
    warm = _imported_during_first_call("warm", tmp_path)
    assert cold > 300  # the SDK really does load hundreds of modules lazily (else this test shows nothing)
    assert warm < 20


def test_the_offline_model_needs_no_warming(tmp_path: Path) -> None:
    import asyncio

    from bot.config import load_settings
    from bot.llm import ModelProvider

    models = ModelProvider.from_settings(load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline",
                                                       _env_file=None))
    before = set(sys.modules)
    asyncio.run(models.warm())
    assert not {m for m in set(sys.modules) - before if m.startswith("openai")}
