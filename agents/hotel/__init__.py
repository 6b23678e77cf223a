"""/hotel: a ReAct travel assistant that searches a local hotel database and recommends hotels
(agent.py holds AGENT)."""
