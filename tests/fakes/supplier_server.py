"""A fake hotel supplier on 127.0.0.1 speaking the wire format of docs/hotel-data.md, with injectable faults."""

from __future__ import annotations

import hashlib
import random
from collections import deque
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

from aiohttp import web

from agents.hotel.seed import demo_hotels

Fault = Literal["429", "500", "503", "400", "disconnect", "garbage"]


@dataclass
class LoggedRequest:
    path: str
    hotel_ids: list[str]
    start: str | None
    end: str | None
    status: int  # 0 when the connection was dropped


@dataclass
class _Injected:
    fault: Fault
    retry_after: str | None


@dataclass
class FakeSupplier:
    """Serves deterministic rates that differ from the demo seed, and remembers what it served.

    `version` changes every price (bump it to simulate a market move between runs);
    `currency_override` serves a wrong currency for chosen hotels.
    """

    version: int = 1
    currency_override: dict[str, str] = field(default_factory=dict)
    requests: list[LoggedRequest] = field(default_factory=list)
    served: dict[tuple[str, date], tuple[float, bool]] = field(default_factory=dict)
    _faults: deque[_Injected] = field(default_factory=deque)
    _random: tuple[float, list[_Injected], random.Random] | None = None
    _runner: web.AppRunner | None = None
    base_url: str = ""

    def inject(self, fault: Fault, *, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next `times` requests with `fault` instead of rates."""
        for _ in range(times):
            self._faults.append(_Injected(fault, retry_after))

    def fail_randomly(self, rate: float, faults: list[Fault], *, seed: int = 0, retry_after: str | None = "0.2") -> None:
        """From now on answer about `rate` of the requests with one of `faults` (429s with
        `retry_after`), chosen by a generator seeded with `seed`."""
        self._random = (rate, [_Injected(f, retry_after if f == "429" else None) for f in faults], random.Random(seed))

    def rate(self, hotel_id: str, night: date) -> tuple[float, bool]:
        digest = hashlib.sha256(f"{self.version}|{hotel_id}|{night}".encode()).digest()
        price = 50 + int.from_bytes(digest[:4], "big") % 45_000 / 100  # 50.00 – 499.99
        return round(price, 2), digest[4] >= 20  # about 8% sold out

    async def _availability(self, request: web.Request) -> web.StreamResponse:
        try:
            body: dict[str, Any] = await request.json()
            ids = [str(i) for i in body["hotel_ids"]]
            start, end = date.fromisoformat(body["start"]), date.fromisoformat(body["end"])
        except (ValueError, KeyError, TypeError):
            self.requests.append(LoggedRequest(request.path, [], None, None, 400))
            return web.json_response({"error": "bad request"}, status=400)
        entry = LoggedRequest(request.path, ids, body["start"], body["end"], 200)
        self.requests.append(entry)
        injected = self._faults.popleft() if self._faults else None
        if injected is None and self._random is not None:
            share, faults, rng = self._random
            injected = rng.choice(faults) if rng.random() < share else None
        if injected is not None:
            if injected.fault == "disconnect":
                entry.status = 0
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            if injected.fault == "garbage":
                return web.Response(body=b'{"rates": [{"hotel_id": ', content_type="application/json")
            entry.status = int(injected.fault)
            headers = {"Retry-After": injected.retry_after} if injected.retry_after else {}
            return web.json_response({"error": f"injected {injected.fault}"}, status=entry.status,
                                     headers=headers)
        catalog = demo_hotels()
        rates: list[dict[str, Any]] = []
        unknown: list[str] = []
        for hotel_id in ids:
            hotel = catalog.get(hotel_id)
            if hotel is None:
                unknown.append(hotel_id)
                continue
            night = start
            while night < end:
                price, available = self.rate(hotel_id, night)
                self.served[(hotel_id, night)] = (price, available)
                rates.append({
                    "hotel_id": hotel_id,
                    "date": night.isoformat(),
                    "price": price,
                    "currency": self.currency_override.get(hotel_id, hotel.currency),
                    "available": available,
                })
                night += timedelta(days=1)
        return web.json_response({"rates": rates, "unknown_hotel_ids": unknown})

    async def start(self) -> FakeSupplier:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post("/v1/availability", self._availability)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSupplier:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]
