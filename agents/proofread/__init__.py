"""/proofread: a Markdown tech-article proofreader (Zenn, Qiita, plain; Japanese or English)."""

from agents.proofread.agent import ProofreadAgent

AGENT = ProofreadAgent()

__all__ = ["AGENT", "ProofreadAgent"]
