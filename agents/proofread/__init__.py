"""/proofread: a Markdown tech-article proofreader (Zenn, Qiita, plain; Japanese or English).

agent.py holds AGENT. This module imports nothing, so that the linter's worker process, which
imports this package, does not load LangGraph and the rest of the agent."""
