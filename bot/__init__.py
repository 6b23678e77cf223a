"""Concierge core: platform-agnostic conversation runtime for LangGraph agents."""
