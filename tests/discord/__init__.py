"""Tests of the Discord adapter, against the fake Discord in tests/fakes/discord_api.py."""
