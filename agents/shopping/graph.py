"""The /shop graph: deterministic paths for simple intents, staged ReAct agents for the rest.

    START → understand ─(specs, reviews, coupons, search, compare, cart)→ lookup → tools → collect → respond → finish
                       ├─(inventory, purchase, anything else)→ agent ⇄ tools → collect … → finish
                       ├─(apply a coupon)→ confirm → finish
                       └─(unclear product)→ finish (a clarifying question)
    collect ─(a cart change proposed)→ confirm ─ interrupt: the user says yes or no → finish → END

- `understand` classifies the intent with the rules (intents.py); only when they are unsure does
  it ask the model (one structured call). It resolves which product the user means.
- The deterministic path runs the intent's tool directly (no planning call) and makes exactly one
  model call, `respond`, to word the answer from the tool's result.
- The staged agents expose one stage's tool at a time (state.py: INVENTORY_STAGES,
  PURCHASE_STAGES), so a model cannot skip or reorder stages; a failed stage goes straight to the
  answer, which explains it.
- `confirm` pauses the graph on `interrupt()`; nothing is written to the cart before the answer."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import END, START
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from agents.shopping.catalog import CartError
from agents.shopping.intents import (
    DETERMINISTIC,
    Feature,
    Intent,
    Reference,
    SpecRank,
    asked_feature,
    cart_action,
    category_of,
    city_name,
    classify,
    compare_targets,
    compared_parts,
    extract_city,
    extract_coupon_code,
    extract_fulfillment,
    has_feature,
    named_products,
    product_reference,
    ranked,
    resolve,
    review_topic,
    search_filters,
    which_of,
)
from agents.shopping.models import CATALOG_CURRENCY
from agents.shopping.phrasebook import language, say, sentences, spec_parts
from agents.shopping.prompts import prompt
from agents.shopping.render import cart_data, compact, display_name, price_text, product_name
from agents.shopping.state import (
    CHANGE_STAGES,
    GENERAL_STAGES,
    INVENTORY_STAGES,
    MEMORY_PER_WORKFLOW,
    PURCHASE_STAGES,
    STAGE_TOOLS,
    ShopState,
    cache_products,
)
from agents.shopping.tools import (
    READ_TOOLS,
    ShopServices,
    asked_store,
    make_tools,
    remember_store,
    status,
    store_in_place,
)
from bot.agent import AgentDeps
from bot.faults import FaultClass, TurnFailed
from bot.history import BoundedStateGraph
from bot.locale import Language
from bot.offline.model import tool_call
from bot.tools import tool_node

log = logging.getLogger(__name__)

MAX_AGENT_ROUNDS = 6  # model calls with tools per turn before the agent must answer
WORKFLOW_OF = {
    "search": "search", "compare": "search", "other": "search",
    "specs": "product", "reviews": "product", "coupons": "product",
    "inventory": "inventory", "purchase": "purchase", "cart": "purchase", "apply_coupon": "purchase",
}
LOOKUP_TOOL = {
    "search": "search_products", "compare": "compare_products", "specs": "product_details",
    "reviews": "review_search", "coupons": "product_coupons", "cart": "view_cart",
}
NEEDS_PRODUCT = {"specs", "reviews", "coupons", "inventory", "purchase"}


def cart_reason(exc: ValueError, lang: Language, shopper_currency: str | None) -> str:
    """Why a cart change cannot be made, in the shopper's language, amounts also in their currency."""
    if not isinstance(exc, CartError):
        return str(exc)
    values = dict(exc.values)
    for key in ("min", "eligible"):
        if key in values:
            values[f"{key}_text"] = price_text(values[key], values.get("currency") or CATALOG_CURRENCY,
                                               shopper_currency or CATALOG_CURRENCY, lang)
    return say(exc.key, lang, **values)


def _text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def _this_round(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    out: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        out.append(message)
    return list(reversed(out))


class ShopNodes:
    def __init__(self, deps: AgentDeps, shop: ShopServices, *, force_react: bool = False) -> None:
        self.deps = deps
        self.models = deps.models
        self.shop = shop
        self.force_react = force_react
        self.tools_by_name = make_tools(shop)
        self.tools = tool_node(list(self.tools_by_name.values()), retries=deps.settings.tool_retries, sequential=True)

    # --- understand ---------------------------------------------------------------------------
    async def understand(self, state: ShopState) -> dict[str, Any]:
        turn = dict(state.get("turn") or {})
        text = turn["text"]
        context = state.get("tool_context") or {}
        lang = language(context)
        store = await self.shop.ready()
        update: dict[str, Any] = {}
        notes: list[str] = []
        if state.get("awaiting"):  # the user moved on instead of answering the confirmation
            notes.append(say("earlier_change_dropped", lang))
            update["awaiting"] = None
        rules = classify(text)
        intent = rules.intent
        if not rules.confident:
            status(say("status_reading", lang))
            try:
                guess = await self.models.ainvoke(
                    lambda m: m.with_structured_output(Intent), [SystemMessage(prompt("classify")), HumanMessage(text)],
                    config={"tags": ["nostream"]}, purpose="structured",
                )
                intent = guess.intent if isinstance(guess, Intent) else Intent.model_validate(guess).intent
            except (TurnFailed, ValueError) as exc:
                # A reply cut off at the output limit (after its retry) or not the JSON asked for
                # says nothing; the rules' unsure guess still answers the turn. Other failures end it.
                if isinstance(exc, TurnFailed) and exc.fault is not FaultClass.TRUNCATED \
                        and not isinstance(exc.__cause__, ValueError):
                    raise
                log.warning("intent reply unusable (%s): going with the rules' %s", exc, intent)
        turn["city"] = extract_city(text)
        if turn["city"] and state.get("current_product_id") and (intent == "other" or (
                intent == "reviews" and len(topic := review_topic(text)) <= 20 and extract_city(topic) == turn["city"])):
            intent = "inventory"  # "Osaka", 「大阪で」「東京はどう？」: where to look for the product asked about
        turn["intent"] = intent
        turn["fulfillment"] = extract_fulfillment(text)
        if intent == "purchase":
            turn["action"] = cart_action(text)
        shown = list(state.get("shown") or [])
        if shown and intent in NEEDS_PRODUCT | {"other", "search", "compare"} and not category_of(text) \
                and (feature := asked_feature(text)):
            turn["answer"] = await self._with_feature(store, feature, shown, lang)  # "which one is waterproof?"
            turn["route"], turn["workflow"] = "finish", "product"
            turn["note"] = sentences(list(notes), lang) or None
            return {**update, "turn": turn}
        ref = product_reference(text)
        product_id, question = await self._product(
            store, text, ref, intent, shown, state.get("current_product_id"), lang, notes
        )
        if intent == "inventory" and not ref.given and product_id in (None, state.get("current_product_id")) \
                and category_of(text):
            # "wireless earbuds in stock in Shibuya": no product yet, so a search (each result with its stock)
            intent, product_id, question = "search", None, None
            turn["intent"] = intent
        turn["product_id"] = product_id
        if intent == "compare":  # exactly the products named or pointed at, in the shopper's order
            named = [named_products(part, await store.search_products(part, limit=10)) for part in compared_parts(text)]
            turn["product_ids"], question = compare_targets(text, shown, state.get("current_product_id"), lang, named)
        city_note: str | None = None  # said unless a store named in the message says more
        if turn["city"] or turn["fulfillment"]:
            prefs = await store.get_prefs(context["user_id"])
            changes = {k: v for k, v in (("city", turn["city"]), ("fulfillment", turn["fulfillment"])) if v}
            if any(getattr(prefs, k) != v for k, v in changes.items()):
                if "city" in changes and prefs.city != changes["city"]:
                    city_note = say("city_saved", lang, city=city_name(changes["city"], lang))
                if "city" in changes:
                    changes.update(latitude=None, longitude=None, store_id=None)
                await store.set_prefs(prefs.model_copy(update=changes))
        if (asked := await asked_store(store, text)) is not None:
            turn["store_id"] = asked.id  # the stock answer says what this store has, even none
            if await remember_store(store, context["user_id"], asked):
                notes.append(say("store_saved", lang, store=asked.name))
                city_note = None
        elif intent == "inventory" and (there := store_in_place(await store.stores(), text)) is not None:
            turn["store_id"] = there.id  # "in stock in Shibuya?": the Shibuya store first, not saved as theirs
        if city_note:
            notes.append(city_note)
        workflow = WORKFLOW_OF.get(intent, "search")
        turn["workflow"] = workflow
        if question is None and intent == "apply_coupon":
            question = await self._coupon(store, text, context, turn, lang)
        if question is not None:
            turn["answer"] = question  # `finish` puts the notes before it
            turn["route"] = "finish"
        elif intent == "apply_coupon":
            turn["route"] = "confirm"
            update["awaiting"] = turn["data"]["pending"]
        elif intent in DETERMINISTIC and not self.force_react:
            turn["route"] = "lookup"
        else:
            turn["stages"] = list(
                INVENTORY_STAGES if intent == "inventory"
                else (PURCHASE_STAGES if turn.get("action") == "add" else CHANGE_STAGES) if intent == "purchase"
                else GENERAL_STAGES
            )
            turn["route"] = "agent"
        turn["note"] = sentences(list(notes), lang) or None
        memory = (state.get("memory") or {}).get(workflow) or []
        history: list[BaseMessage] = [
            HumanMessage(m["text"]) if m["role"] == "user" else AIMessage(m["text"]) for m in memory
        ]
        return {**update, "turn": turn,
                "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *history, HumanMessage(text)]}

    async def _product(
        self, store: Any, text: str, ref: Reference, intent: str, shown: list[dict[str, Any]], current: str | None,
        lang: Language, notes: list[str],
    ) -> tuple[str | None, str | None]:
        """The product the turn is about (`ref`: how the text points at it), or a clarifying question
        (`notes`: what the answer says first)."""
        if intent not in NEEDS_PRODUCT:
            return current, None
        if ref.rank is not None:
            return await self._first_on(store, ref.rank, shown, lang, notes)
        if not ref.given:
            named = named_products(text, await store.search_products(text, limit=20))
            if len(named) == 1:
                return named[0].id, None
            if named:  # one model name, several brands: which of them, by a name that tells them apart
                return None, which_of(named, lang)
        product_id, question = resolve(ref, shown, current, lang)
        if product_id and await store.get_product(product_id) is None:
            return None, say("unknown_product_id", lang, id=product_id)
        if product_id is None and question is None:
            question = say("which_product", lang)
        return product_id, question

    @staticmethod
    async def _with_feature(store: Any, feature: Feature, shown: list[dict[str, Any]], lang: Language) -> str:
        """Which of the products shown have a quality, by their place in the list."""
        products = {p.id: p for p in await store.get_products([p["id"] for p in shown])}
        verdicts = [(i + 1, products[p["id"]], has_feature(feature, products[p["id"]].specs))
                    for i, p in enumerate(shown) if p["id"] in products]
        if all(has is None for _, _, has in verdicts):
            return say("rank_unlisted", lang, count=len(shown))
        name = feature.name_ja if lang == "ja" else feature.name[:1].upper() + feature.name[1:]
        having = [f"{n}. {product_name(p, lang)}" for n, p, has in verdicts if has]
        if not having:
            return say("feature_none", lang, count=len(shown), feature=name)
        return say("feature_some", lang, count=len(shown), feature=name, n=len(having),
                   products=("、" if lang == "ja" else "; ").join(having))

    @staticmethod
    async def _first_on(
        store: Any, rank: SpecRank, shown: list[dict[str, Any]], lang: Language, notes: list[str]
    ) -> tuple[str | None, str | None]:
        """The product shown that ranks first on a spec ("which is the lightest?"), said in a note;
        a question when nothing is shown, none of them lists the spec, or two tie."""
        if not shown:
            return None, say("which_product", lang)
        found = ranked(rank, await store.get_products([p["id"] for p in shown]))
        if not found:
            return None, say("rank_unlisted", lang, count=len(shown))
        (first, key, value), runner = found[0], found[1] if len(found) > 1 else None
        if runner is not None and runner[2] == value:
            return None, say("tie", lang, first=product_name(first, lang), second=product_name(runner[0], lang))
        label, shown_value = spec_parts(key, first.specs[key], lang)
        notes.append(say("ranks_first", lang, count=len(shown), name=product_name(first, lang), spec=label,
                         value=shown_value, word=say("most" if rank.most else "least", lang)))
        return first.id, None

    async def _coupon(
        self, store: Any, text: str, context: dict[str, Any], turn: dict[str, Any], lang: Language
    ) -> str | None:
        code = extract_coupon_code(text)
        if not code:
            return say("which_coupon", lang)
        coupon = await store.get_coupon(code)
        if coupon is None:
            return say("unknown_coupon", lang, code=code)
        today = self.shop.today(context)
        if coupon.expires < today:
            return say("coupon_expired", lang, code=coupon.code, date=coupon.expires.isoformat())
        # a coupon the cart cannot take (empty, no item of its categories, below its minimum spend)
        # is said now: no confirmation is asked for a change that cannot happen
        try:
            await store.check_coupon(context["user_id"], coupon.code, today=today)
        except CartError as exc:
            return say("coupon_refused", lang, code=coupon.code, error=cart_reason(exc, lang, context.get("currency")))
        applied = (await store.get_cart(context["user_id"])).coupon
        if applied == coupon.code:
            return say("coupon_already", lang, code=coupon.code)
        turn["data"] = {**turn.get("data", {}), "pending": {
            "action": "apply_coupon", "product_id": None, "quantity": 0, "code": coupon.code,
            "name": f"coupon {coupon.code}", "description": coupon.description,
            **({"note": say("coupon_replaces", lang, old=applied)} if applied else {}),  # one coupon per order
        }}
        return None

    @staticmethod
    def after_understand(state: ShopState) -> str:
        return str((state.get("turn") or {}).get("route") or "finish")

    # --- the deterministic path ---------------------------------------------------------------
    async def lookup(self, state: ShopState) -> dict[str, Any]:
        """Run the intent's tool directly: a tool call the graph makes, not the model."""
        turn = state["turn"]
        intent = turn["intent"]
        context = state.get("tool_context") or {}
        args: dict[str, Any] = {}
        if intent == "search":
            filters = search_filters(turn["text"], context.get("currency", "USD"))
            args = {"query": turn["text"], **filters}
        elif intent == "reviews":
            args = {"question": review_topic(turn["text"])}
        elif intent == "compare" and turn.get("product_ids"):
            args = {"product_ids": turn["product_ids"]}
        return {"messages": [AIMessage(content="", tool_calls=[tool_call(LOOKUP_TOOL[intent], args)])]}

    async def respond(self, state: ShopState) -> dict[str, Any]:
        """The one model call of a deterministic path: word the answer from the tool's result."""
        status(say("status_writing", language(state.get("tool_context"))))
        system = SystemMessage(prompt("format", intent=state["turn"]["intent"]))
        reply = await self.models.ainvoke(lambda m: m, [system, *state.get("messages", [])])
        return {"messages": [reply]}

    # --- tool results -------------------------------------------------------------------------
    async def collect(self, state: ShopState) -> dict[str, Any]:
        """Fold this round's tool results into the turn; advance the stage when its tool succeeded."""
        turn = dict(state["turn"])
        found, data = dict(turn.get("found") or {}), dict(turn.get("data") or {})
        stages = list(turn.get("stages") or [])
        update: dict[str, Any] = {}
        failed = False
        for message in _this_round(state.get("messages") or []):
            artifact = message.artifact if isinstance(message.artifact, dict) else {}
            if message.status == "error" or "error" in artifact:
                failed = True
                continue
            if "product_level" in artifact:  # product-level state, kept across turns (state.py)
                update["products"] = cache_products(update.get("products", state.get("products")),
                                                    artifact["product_level"])
                artifact = {k: v for k, v in artifact.items() if k != "product_level"}
            found.update(artifact)
            for key in ("products", "reviews", "cart", "coupons"):
                if key in artifact:
                    data[key] = artifact[key]
            if "pending" in artifact:
                data["pending"] = artifact["pending"]
                update["awaiting"] = artifact["pending"]
            if stages and turn["stage"] < len(stages) and message.name in STAGE_TOOLS.get(stages[turn["stage"]], ()):
                turn["stage"] += 1
        turn["rounds"] = turn.get("rounds", 0) + 1
        if failed and stages:
            turn["failed"] = True  # the agent answers now and explains
        turn["found"], turn["data"] = found, data
        return {**update, "turn": turn}

    @staticmethod
    def after_collect(state: ShopState) -> str:
        turn = state["turn"]
        if turn.get("route") == "lookup":
            return "respond"
        stages = turn.get("stages") or []
        if not turn.get("failed") and turn["stage"] < len(stages) and stages[turn["stage"]] == "confirm":
            return "confirm"
        return "agent"

    # --- the staged agents --------------------------------------------------------------------
    def stage_tools(self, turn: dict[str, Any]) -> list[str]:
        stages = turn.get("stages") or []
        if turn.get("failed") or turn.get("rounds", 0) >= MAX_AGENT_ROUNDS or turn["stage"] >= len(stages):
            return []
        stage = stages[turn["stage"]]
        if stage == "answer":
            return list(READ_TOOLS)
        return list(STAGE_TOOLS.get(stage, ()))

    async def agent(self, state: ShopState) -> dict[str, Any]:
        turn = state["turn"]
        names = self.stage_tools(turn)
        stages = turn.get("stages") or []
        stage = stages[turn["stage"]] if turn["stage"] < len(stages) else "explain"
        system = SystemMessage(prompt(turn["workflow"], stage=stage, stages=" → ".join(stages)))
        messages = [system, *state.get("messages", [])]
        if names:
            tools = [self.tools_by_name[n] for n in names]
            reply = await self.models.ainvoke(lambda m: m.bind_tools(tools), messages)
        else:
            status(say("status_writing", language(state.get("tool_context"))))
            reply = await self.models.ainvoke(lambda m: m, messages)
        return {"messages": [reply]}

    @staticmethod
    def after_agent(state: ShopState) -> str:
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "finish"

    # --- confirmation -------------------------------------------------------------------------
    async def confirm(self, state: ShopState) -> dict[str, Any]:
        """Pause until the user confirms; only then write the cart."""
        turn = dict(state["turn"])
        pending: dict[str, Any] = (turn.get("data") or {}).get("pending") or state.get("awaiting") or {}
        context = state.get("tool_context") or {}
        lang = language(context)
        shopper_currency = context.get("currency") or CATALOG_CURRENCY
        # the question is asked in the request's language and shows prices in the shopper's currency
        answer = interrupt({**pending, "language": lang, "currency": shopper_currency})
        store = self.shop.store
        user = context["user_id"]
        data = dict(turn.get("data") or {})
        if str(answer).strip().lower() not in ("yes", "y", "confirm", "はい"):
            cart = await store.get_cart(user)
            turn["answer"] = say("cart_unchanged", lang)
            data["cart"] = cart_data(cart)
            data.pop("pending", None)
            turn["data"], turn["confirmed"] = data, False
            return {"turn": turn, "awaiting": None}
        status(say("status_updating_cart", lang))
        name = display_name(pending, lang) if pending.get("name") else ""
        try:
            if pending["action"] == "add":
                cart = await store.cart_add(user, pending["product_id"], pending["quantity"])
                done = say("added", lang, quantity=pending["quantity"], name=name)
            elif pending["action"] == "set":
                cart = await store.cart_set(user, pending["product_id"], pending["quantity"])
                done = say("quantity_set", lang, quantity=pending["quantity"], name=name)
            elif pending["action"] == "remove":
                cart = await store.cart_remove(user, pending["product_id"])
                done = say("removed", lang, name=name)
            else:
                cart = await store.cart_apply_coupon(user, pending["code"], today=self.shop.today(context))
                done = say("coupon_applied", lang, code=pending["code"])
        except ValueError as exc:  # CartError: the cart is unchanged
            cart = await store.get_cart(user)
            done = say("cart_error", lang, error=cart_reason(exc, lang, shopper_currency))
        data["cart"] = cart_data(cart)
        data.pop("pending", None)
        total = price_text(cart.total, cart.currency, shopper_currency, lang)
        turn["answer"] = sentences([done, say("cart_total", lang, total=total)], lang)
        turn["data"], turn["confirmed"] = data, True
        return {"turn": turn, "awaiting": None}

    # --- finish -------------------------------------------------------------------------------
    async def finish(self, state: ShopState) -> dict[str, Any]:
        """Record the answer, what was shown and the current product; keep memory per workflow."""
        turn = dict(state["turn"])
        messages = state.get("messages") or []
        if not turn.get("answer"):
            last = next((m for m in reversed(messages) if isinstance(m, AIMessage) and not m.tool_calls), None)
            turn["answer"] = _text(last) if last is not None and _text(last) else \
                say("no_answer", language(state.get("tool_context")))
        if turn.get("note"):
            turn["answer"] = sentences([turn["note"], turn["answer"]], language(state.get("tool_context")))
        update: dict[str, Any] = {"turn": turn}
        products = (turn.get("data") or {}).get("products") or []
        listed = {p["id"] for p in state.get("shown") or []}
        # a comparison of products from the list keeps the list: "the third" still means its third
        if turn["intent"] in ("search", "compare") and products and not (
                turn["intent"] == "compare" and {p["id"] for p in products} <= listed):
            update["shown"] = products
        cart_lines = ((turn.get("data") or {}).get("cart") or {}).get("items") or []
        if turn["intent"] == "cart" and cart_lines:  # the list seen last is the cart: "the first one" is its first line
            found = await (await self.shop.ready()).get_products([i["product_id"] for i in cart_lines])
            update["shown"] = [compact(p) for p in found]
        current = turn.get("product_id") or (products[0]["id"] if len(products) == 1 else None)
        if current:
            update["current_product_id"] = current
        memory = {k: list(v) for k, v in (state.get("memory") or {}).items()}
        lines = memory.setdefault(turn.get("workflow") or "search", [])
        lines += [{"role": "user", "text": turn["text"][:500]}, {"role": "assistant", "text": turn["answer"][:800]}]
        memory[turn.get("workflow") or "search"] = lines[-MEMORY_PER_WORKFLOW:]
        update["memory"] = memory
        update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES)]  # this turn's traffic is not replayed
        return update


def build_graph(deps: AgentDeps, shop: ShopServices, *, force_react: bool = False) -> CompiledStateGraph:
    nodes = ShopNodes(deps, shop, force_react=force_react)
    builder = BoundedStateGraph(ShopState, deps.history_window)
    builder.add_node("understand", nodes.understand)
    builder.add_node("lookup", nodes.lookup)
    builder.add_node("tools", nodes.tools)
    builder.add_node("collect", nodes.collect)
    builder.add_node("respond", nodes.respond)
    builder.add_node("agent", nodes.agent)
    builder.add_node("confirm", nodes.confirm)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "understand")
    builder.add_conditional_edges("understand", nodes.after_understand,
                                  {"lookup": "lookup", "agent": "agent", "confirm": "confirm", "finish": "finish"})
    builder.add_edge("lookup", "tools")
    builder.add_edge("tools", "collect")
    builder.add_conditional_edges("collect", nodes.after_collect, {"respond": "respond", "confirm": "confirm", "agent": "agent"})
    builder.add_edge("respond", "finish")
    builder.add_conditional_edges("agent", nodes.after_agent, {"tools": "tools", "finish": "finish"})
    builder.add_edge("confirm", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=deps.checkpointer, name="shop")
