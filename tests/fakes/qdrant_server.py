"""A fake Qdrant server: the REST API qdrant-client speaks to a server, over real HTTP on 127.0.0.1,
with qdrant-client's own in-memory engine (`AsyncQdrantLocal`) holding the collections.

It serves what `agents/shopping/reviews.py` calls, through the unchanged `AsyncQdrantClient(url=…)`:

- ``GET /`` (version), ``GET /collections/{name}/exists``, ``GET /collections/{name}``,
  ``PUT /collections/{name}`` (create), ``PUT /collections/{name}/index`` (payload index: recorded
  in `payload_indexes`, as the local engine has none),
- ``PUT /collections/{name}/points`` (upsert), ``POST …/points/delete``, ``POST …/points/query``,
  ``POST …/points/count``.

Bodies are parsed with qdrant-client's own REST models, so a request the real server would refuse
for its shape is refused here too (HTTP 400); a missing collection is 404 with Qdrant's error body.
With `api_key`, a request without that ``api-key`` header gets 401. `fail_next(status)` answers the
next request with that status (`heal()` forgets those not yet served). `requests` logs (method, path) of every request.

Standalone, for manual runs of several bot processes with ``QDRANT_URL``::

    python -m tests.fakes.qdrant_server --port 6333
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import TypeAdapter, ValidationError
from qdrant_client.http import models
from qdrant_client.local.async_qdrant_local import AsyncQdrantLocal

Handler = Callable[[str, web.Request], Awaitable[Any]]
_POINTS = TypeAdapter(models.PointInsertOperations)
_SELECTOR = TypeAdapter(models.PointsSelector)


class FakeQdrant:
    def __init__(self, *, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.engine = AsyncQdrantLocal(location=":memory:")
        self.payload_indexes: dict[str, dict[str, str]] = {}  # collection → field → schema
        self.requests: list[tuple[str, str]] = []
        self._faults: deque[int] = deque()
        self._runner: web.AppRunner | None = None
        self.url = ""

    def fail_next(self, status: int = 503, *, times: int = 1) -> None:
        self._faults.extend([status] * times)

    def heal(self) -> None:
        """Forget the faults not yet served."""
        self._faults.clear()

    def count(self, method: str, suffix: str) -> int:
        """How many requests of `method` had a path ending in `suffix`."""
        return sum(1 for m, path in self.requests if m == method and path.endswith(suffix))

    # --- the API ----------------------------------------------------------------------------------
    async def _exists(self, name: str, request: web.Request) -> Any:
        return {"exists": await self.engine.collection_exists(name)}

    async def _info(self, name: str, request: web.Request) -> Any:
        self._collection(name)
        return await self.engine.get_collection(name)

    async def _create(self, name: str, request: web.Request) -> Any:
        body = models.CreateCollection.model_validate(await request.json())
        if await self.engine.collection_exists(name):
            raise web.HTTPConflict(text=f"Wrong input: Collection `{name}` already exists!")
        return await self.engine.create_collection(name, vectors_config=body.vectors, metadata=body.metadata)

    async def _index(self, name: str, request: web.Request) -> Any:
        body = models.CreateFieldIndex.model_validate(await request.json())
        self._collection(name)
        self.payload_indexes.setdefault(name, {})[body.field_name] = str(getattr(body.field_schema, "value", body.field_schema))
        return models.UpdateResult(operation_id=0, status=models.UpdateStatus.COMPLETED)

    async def _upsert(self, name: str, request: web.Request) -> Any:
        body = _POINTS.validate_python(await request.json())
        if not isinstance(body, models.PointsList):
            raise web.HTTPBadRequest(text="only a list of points is served here")
        self._collection(name)
        return await self.engine.upsert(name, points=body.points)

    async def _delete(self, name: str, request: web.Request) -> Any:
        selector = _SELECTOR.validate_python(await request.json())
        self._collection(name)
        return await self.engine.delete(name, points_selector=selector)

    async def _query(self, name: str, request: web.Request) -> Any:
        body = models.QueryRequest.model_validate(await request.json())
        self._collection(name)
        return await self.engine.query_points(
            name, query=body.query, query_filter=body.filter, limit=body.limit or 10,
            with_payload=body.with_payload if body.with_payload is not None else False,
        )

    async def _count(self, name: str, request: web.Request) -> Any:
        body = models.CountRequest.model_validate(await request.json())
        self._collection(name)
        return await self.engine.count(name, count_filter=body.filter, exact=True)

    def _collection(self, name: str) -> None:
        if name not in self.engine.collections:
            raise web.HTTPNotFound(text=f"Not found: Collection `{name}` doesn't exist!")

    # --- the server -------------------------------------------------------------------------------
    def _route(self, handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def serve(request: web.Request) -> web.StreamResponse:
            self.requests.append((request.method, request.path))
            started = time.perf_counter()
            if self.api_key is not None and request.headers.get("api-key") != self.api_key:
                return _error(401, "Must provide an API key or an Authorization bearer token")
            if self._faults:
                return _error(self._faults.popleft(), "Service Unavailable: injected fault")
            try:
                result = await handler(request.match_info["name"], request)
            except web.HTTPException as exc:
                return _error(exc.status, exc.text or exc.reason)
            except (ValidationError, ValueError) as exc:
                return _error(400, f"Format error in JSON body: {str(exc)[:300]}")
            if hasattr(result, "model_dump"):
                result = result.model_dump(mode="json", exclude_none=True)
            return web.json_response({"result": result, "status": "ok", "time": time.perf_counter() - started})

        return serve

    async def start(self, port: int = 0) -> FakeQdrant:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/", _version)
        routes: list[tuple[str, str, Handler]] = [
            ("GET", "/collections/{name}/exists", self._exists),
            ("GET", "/collections/{name}", self._info),
            ("PUT", "/collections/{name}", self._create),
            ("PUT", "/collections/{name}/index", self._index),
            ("PUT", "/collections/{name}/points", self._upsert),
            ("POST", "/collections/{name}/points/delete", self._delete),
            ("POST", "/collections/{name}/points/query", self._query),
            ("POST", "/collections/{name}/points/count", self._count),
        ]
        for method, path, handler in routes:
            app.router.add_route(method, path, self._route(handler))
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.engine.close()

    async def __aenter__(self) -> FakeQdrant:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _version(request: web.Request) -> web.Response:
    return web.json_response({"title": "qdrant - vector search engine", "version": "1.15.0"})


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"status": {"error": message}, "time": 0.0}, status=status)


async def _main(port: int) -> None:
    server = await FakeQdrant().start(port)
    print(f"fake Qdrant at {server.url}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=6333)
    asyncio.run(_main(parser.parse_args().port))
