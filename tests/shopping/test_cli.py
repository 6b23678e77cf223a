"""/shop from the command line, as separate processes: `ask --json` offline with the contract's
data, `ask --resume`, `data ingest` with bad lines, and the worker's scheduled ingestion."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from agents.shopping.agent import ShopAgent
from agents.shopping.catalog import CatalogStore
from agents.shopping.settings import ShopSettings
from bot.agent import AgentEnv
from bot.config import Settings
from tests.test_cli import ROOT, ask, env_for

NEW_PRODUCT = {
    "kind": "product", "id": "kettle-901", "name": "Test Kettle 901", "category": "kitchen",
    "subcategory": "kettle", "price": 42.5, "keywords": ["kettle", "ケトル"],
    "fulfillment": [{"kind": "ship", "days": 3, "fee": 0}],
}


async def run_bot(env: dict[str, str], *args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=300)
    return proc.returncode or 0, out.decode()


async def test_ask_json_offline_shows_products_then_a_cart_change_is_confirmed_with_resume(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    code, events, _ = await ask(env, "--thread", "s", "/shop wireless earbuds under $100")
    final = events[-1]
    assert code == 0 and final["type"] == "final"
    products = final["data"]["products"]
    assert products and {"id", "name", "category", "price", "currency", "rating"} <= set(products[0])
    assert [c["title"] for c in final["cards"]] == [p["name"] for p in products]

    code, events, _ = await ask(env, "--thread", "s", "add 2 of the first one to my cart")
    pending = events[-1]["data"]["pending"]
    assert pending == {"action": "add", "product_id": products[0]["id"], "quantity": 2}
    assert [a["label"] for a in events[-1]["cards"][0]["actions"]] == ["Confirm", "Cancel"]

    code, events, _ = await ask(env, "--thread", "s", "--resume", "yes")
    cart = events[-1]["data"]["cart"]
    assert code == 0 and cart["items"][0]["quantity"] == 2 and cart["currency"] == "USD"
    assert set(cart["items"][0]) == {"product_id", "name", "quantity", "unit_price"}

    code, events, _ = await ask(env, "--thread", "s", "--resume", "yes")
    assert code == 1 and "Nothing in this conversation is waiting" in events[-1]["user_message"]


async def test_data_ingest_reports_bad_lines_loads_the_rest_and_is_idempotent(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    drop = tmp_path / "catalog.jsonl"
    drop.write_text("\n".join([
        json.dumps(NEW_PRODUCT),
        json.dumps({**NEW_PRODUCT, "id": "kettle-902", "price": -3}),
        "{not json",
        json.dumps({**NEW_PRODUCT, "id": "kettle-903", "name": "Test Kettle 903"}),
    ]) + "\n", encoding="utf-8")
    code, out = await run_bot(env, "data", "ingest", "catalog", str(drop))
    assert code == 0, out
    assert "loaded 2, unchanged 0, skipped 2 bad line(s): line 2:" in out and "line 3:" in out
    code, out = await run_bot(env, "data", "ingest", "catalog", str(drop))
    assert "loaded 0, unchanged 2" in out
    code, out = await run_bot(env, "data", "ingest", "catalog", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "cannot ingest" in out


async def test_the_worker_ingests_catalog_drops_on_its_schedule(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "drops" / "catalog"
    folder.mkdir(parents=True)
    (folder / "new.jsonl").write_text(json.dumps(NEW_PRODUCT) + "\n", encoding="utf-8")
    shop = ShopSettings(_env_file=None, CONCIERGE_SHOP_DROP_DIR=tmp_path / "drops")
    jobs = {job.name: job for job in ShopAgent(settings=shop).worker_jobs(AgentEnv(settings=settings, agent_settings=shop))}
    assert set(jobs) == {"shop catalog ingestion", "shop reviews ingestion"}
    stop = asyncio.Event()
    task = asyncio.create_task(jobs["shop catalog ingestion"].run(stop))
    store = await CatalogStore.open(settings.resolved_database_url)
    try:
        deadline = time.monotonic() + 60
        while await store.get_product("kettle-901") is None:
            assert time.monotonic() < deadline, "the worker did not ingest the drop"
            assert not task.done(), task
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        await store.close()
