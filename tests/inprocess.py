"""The competition server's application in-process: the real Starlette app, store
and ladder on a data directory of the test's own, driven by httpx through its
ASGI transport in a trio event loop (no port, no server process)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import msgspec
import trio
from serverkit import write_config

from referee.server.app import Site, build_app
from referee.server.command import seed_samples
from referee.server.config import CompetitionConfig, load_competition
from referee.server.db import Store
from referee.server.ladder import Ladder

ORIGIN = "http://testserver"
T = TypeVar("T")


def config(tmp_path: Path, **registration: Any) -> CompetitionConfig:
    cfg = load_competition(write_config(tmp_path, mode="open"))
    if registration:
        cfg = msgspec.structs.replace(
            cfg, registration=msgspec.structs.replace(cfg.registration, **registration)
        )
    return cfg


class InProcess:
    """A server's site and application on ``data``; ``executor`` plays its matches
    (None: a test that plays none)."""

    def __init__(self, cfg: CompetitionConfig, data: Path, executor: Any = None) -> None:
        self.store = Store(data)
        seed_samples(self.store, cfg)
        self.ladder = Ladder(self.store, cfg, data, executor, executor, 7)
        self.site = Site(self.store, self.ladder, cfg, data)
        self.app = build_app(self.site)

    def client(self, **kw: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url=ORIGIN, **kw)

    def close(self) -> None:
        self.store.close()


def run(main: Callable[[], Awaitable[T]]) -> T:
    return trio.run(main)


def csrf_of(page: str) -> str:
    """The CSRF token of the page's form ("" if it has none: the tests then see the
    server refuse or take the form, which is what they check)."""
    import re

    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    return found[1] if found else ""


async def sign_up(client: httpx.AsyncClient, name: str) -> str:
    """Sign ``client`` up through the form as a browser does; returns the token."""
    import re

    form = await client.get("/signup")
    r = await client.post(
        "/signup", data={"name": name, "csrf": csrf_of(form.text)}, headers={"origin": ORIGIN}
    )
    assert r.status_code == 200, r.text
    token = re.search(r'<pre id="token">([^<]+)</pre>', r.text)
    assert token is not None, r.text
    return token[1]
