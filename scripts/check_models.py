"""Run every agent against the configured OpenAI-compatible server and print what happened.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=x CONCIERGE_MODEL=my-model \
        .venv/bin/python scripts/check_models.py [--data-dir DIR]

For each agent it runs a short scripted conversation (a request and follow-ups) through the real
runtime and prints one row per turn: model calls, their finish reasons, whether the planner had to
make a tool call for the model, and the outcome (the final answer's start, or the failure). Not
part of CI: it needs a real model server (see docs/models.md for the ones verified and how).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.registry import registered_agents  # noqa: E402
from bot.agent import TurnInput  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.conversation import ConversationKey  # noqa: E402
from bot.events import Failure, Final  # noqa: E402
from bot.llm import PLANNER_FOOTER, TRUNCATION_NOTE, ModelProvider, finish_reason  # noqa: E402
from bot.runtime import ConversationRuntime  # noqa: E402

CONVERSATIONS: dict[str, list[str]] = {
    "chat": ["/chat hello, what can you do?"],
    "hotel": ["/hotel Paris under $200 next weekend", "cheaper ones?", "which one is closest to the Louvre?"],
    "shop": ["/shop wireless earbuds under $100", "what do people say about the battery of the first one?",
             "is it in stock near me? I'm in Tokyo", "add it to my cart", "yes"],
    "proofread": ["/proofread # Test article\n\n## Intro\n\nThis is is a short article about Python 3.7 "
                  "released in 2030.\n\n```\nprint('hi')\n```\n", "explain issue 1"],
}


class Recorder:
    """Wraps ModelProvider.ainvoke to count calls and collect finish reasons per turn."""

    def __init__(self, models: ModelProvider) -> None:
        self.reasons: list[str] = []
        original = models.ainvoke

        async def ainvoke(*args: Any, **kwargs: Any) -> Any:
            try:
                result = await original(*args, **kwargs)
            except Exception as exc:
                self.reasons.append(f"error:{getattr(exc, 'fault', None) or type(exc).__name__}")
                raise
            raw = result.get("raw") if isinstance(result, dict) else result
            reason = finish_reason(raw)
            if reason is None:  # the planner's tool call (it has no finish reason), or parsed output
                reason = "planner" if getattr(raw, "tool_calls", None) else "parsed"
            self.reasons.append(reason)
            return result

        models.ainvoke = ainvoke  # type: ignore[method-assign]


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a fresh temporary directory")
    parser.add_argument("--agents", default=",".join(CONVERSATIONS), help="comma-separated agent names")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="concierge-models-"))
    settings = load_settings(CONCIERGE_DATA_DIR=data_dir, CONCIERGE_LLM="openai")
    agents = registered_agents(settings.agent_plugins)
    models = ModelProvider.from_settings(settings, skills=[s for a in agents for s in a.offline_skills])
    recorder = Recorder(models)
    runtime = await ConversationRuntime.open(settings, agents=agents, models=models)
    print(f"model {settings.model} at {settings.openai_base_url or 'api.openai.com'}\n")
    print(f"{'agent':<10} {'turn':<42} {'calls':>5} {'s':>6}  {'finish reasons':<28} outcome")
    outcomes: collections.Counter[str] = collections.Counter()
    try:
        for name in args.agents.split(","):
            for text in CONVERSATIONS.get(name, []):
                recorder.reasons = []
                started = time.monotonic()
                events = [e async for e in runtime.handle(ConversationKey.console(f"check-{name}"), TurnInput.typed(text))]
                last: Any = events[-1] if events else None
                elapsed = time.monotonic() - started
                if isinstance(last, Final):
                    flags = [f for f, mark in (("truncated", TRUNCATION_NOTE), ("planner", PLANNER_FOOTER))
                             if mark.strip() in last.text]
                    outcome = "final" + (f" [{', '.join(flags)}]" if flags else "") + ": " + last.text[:60].replace("\n", " ")
                    outcomes["final"] += 1
                elif isinstance(last, Failure):
                    outcome = f"FAILURE {last.kind}: {last.user_message[:60]}"
                    outcomes[f"failure:{last.kind}"] += 1
                else:
                    outcome = "no answer"
                    outcomes["none"] += 1
                counts = collections.Counter(recorder.reasons)
                reasons = ", ".join(f"{k}×{v}" for k, v in counts.items())
                print(f"{name:<10} {text[:42].replace(chr(10), ' '):<42} {len(recorder.reasons):>5} {elapsed:>6.1f}  "
                      f"{reasons:<28} {outcome}")
    finally:
        await runtime.close()
        await models.aclose()
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    return 0 if set(outcomes) == {"final"} else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
