"""Small talk: the agent for text no other agent claims (agent.py holds AGENT)."""
