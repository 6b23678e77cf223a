"""/proofread: a Markdown tech-article proofreader (Zenn, Qiita, plain; Japanese or English)."""

from __future__ import annotations

from typing import Any

__all__ = ["AGENT", "ProofreadAgent"]


def __getattr__(name: str) -> Any:
    # Imported lazily so that the linter's worker process, which imports this package, does not
    # load LangGraph and the rest of the agent.
    if name in __all__:
        from agents.proofread.agent import ProofreadAgent

        globals().update(ProofreadAgent=ProofreadAgent, AGENT=ProofreadAgent())
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
