"""Every agent's requests put one system message first and no other anywhere: the chat templates
of many open models (Qwen, Gemma, Mistral…) reject a system message that is not first, and
llama.cpp's server or vLLM then answer 500/400 to every follow-up turn."""

from __future__ import annotations

import json

from agents.registry import registered_agents
from bot.agent import TurnInput
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply, default_responder, example_of

CONVERSATIONS = {
    "hotel": ["/hotel Paris under $200 next weekend", "cheaper ones?", "which one is closest to the Louvre?"],
    "shop": ["/shop wireless earbuds under $100", "is the first one in stock near me? I'm in Tokyo",
             "what do people say about the battery of it?", "add it to my cart", "yes"],
    "proofread": ["/proofread # タイトル\n\n## はじめに\n\nこれはテストです。することができる。\n\n## まとめ\n\n以上です。",
                  "why is that a problem?"],
    "chat": ["/chat hello", "what can you do?"],
}


def model_like(request: RecordedRequest) -> Reply:
    """Calls each offered tool once with schema-valid arguments, then answers."""
    called = {c["function"]["name"] for m in request.messages for c in m.get("tool_calls") or []}
    for tool in request.tools or []:
        function = tool["function"]
        if function["name"] not in called:
            return Reply.tool_calls([(function["name"], example_of(function.get("parameters") or {}))])
    if request.response_format:
        return default_responder(request)
    return Reply.text("An answer.")


async def test_every_agent_sends_one_system_message_and_it_comes_first(
    openai_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = model_like
    runtime = await ConversationRuntime.open(openai_settings, agents=registered_agents())
    try:
        for agent, turns in CONVERSATIONS.items():
            start = len(fake_openai.requests)
            for text in turns:
                async for _ in runtime.handle(ConversationKey.console(agent), TurnInput.typed(text)):
                    pass
            requests = [r for r in fake_openai.requests[start:] if r.path.endswith("/chat/completions")]
            assert requests, f"{agent} made no model call"
            for request in requests:
                roles = [m["role"] for m in request.messages]
                assert roles.count("system") <= 1 and ("system" not in roles or roles[0] == "system"), (
                    agent, roles, json.dumps(request.messages)[:500])
    finally:
        await runtime.close()
