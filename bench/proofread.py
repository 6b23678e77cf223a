"""Wall time of one /proofread review of a 20 KB article: checkers in parallel versus one after
another.

    python -m bench proofread [--kb 20] [--latency 0.3]

Two settings, one timed run each (after one untimed warm-up that loads the Japanese dictionary
and the linter):
- offline: the deterministic checkers with the offline model (technical accuracy skipped);
- model: the same article with a model behind the fake OpenAI-compatible server answering every
  call after `--latency` seconds, so the language and technical-accuracy checkers wait on it the
  way they wait on a real model.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "proofread" / "fixtures"
SOURCES = ["language_ja.md", "code_errors.md", "mixed_realistic.md", "markdown_broken.md", "links_bad.md"]


def build_article(kilobytes: int) -> str:
    """A Zenn article of about `kilobytes` KB made from the fixtures' bodies, one section each."""
    head = '---\ntitle: "ベンチマーク用の記事"\nemoji: "⏱"\ntype: "tech"\ntopics: ["python"]\npublished: true\n---\n\n'
    parts = [head, "## はじめに\n\nこの記事はベンチマーク用に作った長い記事です。\n\n"]
    size = len("".join(parts).encode())
    index = 0
    while size < kilobytes * 1000:
        text = (FIXTURES / SOURCES[index % len(SOURCES)]).read_text(encoding="utf-8")
        body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
        body = body.replace("\n## ", "\n### ").replace("```bash\ndocker build -t app .\n", "")
        section = f"## 第{index + 1}部\n\n{body.strip()}\n\n"
        parts.append(section)
        size += len(section.encode())
        index += 1
    parts.append("## まとめ\n\n以上です。\n")
    return "".join(parts)


def _scripted_model(request: Any) -> Any:
    from tests.fakes.openai_server import Reply

    name = ((request.response_format or {}).get("json_schema") or {}).get("name", "")
    answers = {
        "LanguageReview": {"findings": []},
        "TechnicalClaims": {"claims": [{"line": 9, "quote": "はじめに", "claim": "An example claim."}]},
        "ClaimVerdicts": {"verdicts": [{"claim_number": 1, "verdict": "correct", "confidence": 0.9}]},
    }
    return Reply.json(answers.get(name, {}))


async def _review_once(article: str, models: Any, settings: Any, *, parallel: bool) -> tuple[float, dict[str, Any]]:
    from agents.proofread.config import GraphConfig
    from agents.proofread.graph import ProofreadGraphBuilder

    builder = ProofreadGraphBuilder(config=GraphConfig(parallel=parallel), models=models, settings=settings)
    graph = builder.build(InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": f"bench-{parallel}-{time.monotonic_ns()}"}}
    started = time.perf_counter()
    state = await graph.ainvoke({"incoming": {"text": article, "attachment": None, "filename": None}}, config)
    return time.perf_counter() - started, state["review"]


async def _pair(article: str, models: Any, settings: Any) -> tuple[float, float, dict[str, Any]]:
    parallel, review = await _review_once(article, models, settings, parallel=True)
    sequential, _ = await _review_once(article, models, settings, parallel=False)
    return parallel, sequential, review


async def main(argv: list[str]) -> int:
    from bot.config import load_settings
    from bot.llm import ModelProvider
    from bot.offline import OfflineChatModel
    from tests.fakes.openai_server import FakeOpenAI

    parser = argparse.ArgumentParser(prog="python -m bench proofread")
    parser.add_argument("--kb", type=int, default=20, help="article size in KB (default 20)")
    parser.add_argument("--latency", type=float, default=0.3, help="fake model latency in seconds (default 0.3)")
    args = parser.parse_args(argv)
    # langchain-openai keeps parsed objects in a field typed None; pydantic warns on every call.
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)

    article = build_article(args.kb)
    offline_settings = load_settings(CONCIERGE_LLM="offline", _env_file=None)
    offline = ModelProvider(OfflineChatModel(), offline=True)
    await _review_once(article, offline, offline_settings, parallel=True)  # warm-up: dictionary, linter

    rows = []
    parallel, sequential, review = await _pair(article, offline, offline_settings)
    rows.append(("offline (no model)", parallel, sequential, offline.attempts))

    async with FakeOpenAI(latency=args.latency) as server:
        server.responder = _scripted_model
        settings = load_settings(
            OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=server.base_url, CONCIERGE_LLM="openai", _env_file=None
        )
        models = ModelProvider.from_settings(settings)
        try:
            await _review_once(article, models, settings, parallel=True)  # warm-up: the HTTP client
            warm_calls = len(server.requests)
            parallel_m, sequential_m, _ = await _pair(article, models, settings)
            calls = (len(server.requests) - warm_calls) // 2
        finally:
            await models.aclose()
    rows.append((f"model, {args.latency * 1000:.0f} ms per call", parallel_m, sequential_m, calls))

    lines = article.count("\n") + 1
    print(
        f"Article: {len(article.encode()) / 1000:.1f} KB, {lines} lines, {len(review['issues'])} issues found "
        f"(Zenn, Japanese); one timed run per cell.\n"
    )
    print("| Setting | Parallel | Sequential | Speed-up | Model calls per review |")
    print("|---|---:|---:|---:|---:|")
    for name, fast, slow, calls in rows:
        print(f"| {name} | {fast:.2f} s | {slow:.2f} s | {slow / fast:.2f}× | {calls} |")
    return 0
