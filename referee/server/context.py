"""What the request handlers of ``referee serve`` share: the store, the ladder,
the config, the page templates and the cache of public pages (``Site``), and
``route``, which binds a handler of (site, request) to a path."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import trio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..step_report import verify_summary
from .config import CompetitionConfig
from .db import MatchRow, Store, Version
from .ladder import Ladder
from .sessions import SESSION_COOKIE, Sessions

HOUR = 3600.0
# At most this many pages are kept for one ladder generation (any query string is a
# page of its own: the bound keeps odd queries from filling the memory).
CACHE_PAGES = 2000

Handler = Callable[["Site", Request], Awaitable[Response]]


class Site:
    """What the request handlers share: the store, the ladder and the config."""

    def __init__(
        self, store: Store, ladder: Ladder, cfg: CompetitionConfig, data_dir: Path
    ) -> None:
        self.store = store
        self.ladder = ladder
        self.cfg = cfg
        self.dir = data_dir
        self.sessions = Sessions(store, cfg.registration)
        self.finals: Any = None  # set by the finals module when they run
        # Public pages as sent, for the ladder generation ``cache_generation``:
        # path and query -> (body, content type, ETag). See ``Site.cached``.
        self.cache: dict[str, tuple[bytes, bytes, bytes]] = {}
        self.cache_generation = -1
        # Matches whose replay is being verified, so readers who ask at once wait for
        # that one check instead of each starting their own (see ``replay_check``).
        self.verifying: dict[int, trio.Event] = {}
        self.env = Environment(
            loader=PackageLoader("referee.server", "templates"),
            autoescape=select_autoescape(["html"]),
            auto_reload=False,  # the templates do not change while the server runs
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["signed"] = lambda x: f"{x:+.0f}"

    # -- the cache of public pages ------------------------------------------------

    def _current_cache(self) -> dict[str, tuple[bytes, bytes, bytes]]:
        if self.cache_generation != self.ladder.generation or len(self.cache) >= CACHE_PAGES:
            self.cache.clear()
            self.cache_generation = self.ladder.generation
        return self.cache

    @staticmethod
    def _cache_key(scope: Any) -> str:
        return str(scope["path"]) + "?" + bytes(scope["query_string"]).decode("latin-1")

    async def cached(self, request: Request, make: Callable[[], Awaitable[Response]]) -> Response:
        """The response of ``await make()``, made once per ladder generation for
        anonymous readers.

        Everything an anonymous GET shows changes only with the ladder (a match
        starts or ends, ratings or versions change), and the ladder counts those
        changes in ``generation``: a page made once is sent as it is to every reader
        until the next change (``send_cached``, before any routing), and a reader
        who sends its ETag back gets a 304. A signed-in request (a session cookie)
        is always made afresh: its page names the competitor and may show what only
        they may see, so it is never kept either."""
        if request.method != "GET" or SESSION_COOKIE in request.cookies:
            return await make()
        generation = self.ladder.generation
        response = await make()
        if response.status_code != 200 or not isinstance(response.body, bytes):
            return response
        body = bytes(response.body)
        content_type = next(
            (v for k, v in response.raw_headers if k == b"content-type"), b"text/plain"
        )
        etag = ('"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"').encode()
        if generation == self.ladder.generation:  # nothing changed while it was made
            self._current_cache()[self._cache_key(request.scope)] = (body, content_type, etag)
        response.headers["etag"] = etag.decode()
        response.headers["cache-control"] = "no-cache"
        return response

    async def send_cached(self, scope: Any, send: Any) -> bool:
        """Answer an anonymous GET from the pages made for this generation; False
        if it is not one (the application makes it, see ``cached``)."""
        if scope["type"] != "http" or scope["method"] != "GET":
            return False
        if_none_match = b""
        for name, value in scope["headers"]:
            if name == b"cookie" and SESSION_COOKIE.encode() in value:
                return False
            if name == b"if-none-match":
                if_none_match = value
        hit = self._current_cache().get(self._cache_key(scope))
        if hit is None:
            return False
        body, content_type, etag = hit
        headers = [(b"etag", etag), (b"cache-control", b"no-cache")]
        if etag in if_none_match:
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return True
        headers += [(b"content-type", content_type), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return True

    # -- rendering -------------------------------------------------------------

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> Response:
        """``template`` rendered; its forms carry the CSRF token of a signed-in
        competitor's session (a page for anyone else passes ``csrf`` itself)."""
        me = self.sessions.current(request)
        if me is not None:
            context.setdefault("csrf", self.sessions.csrf_token(request))
        html = self.env.get_template(template).render(
            site=self.cfg.name,
            game=self.cfg.game,
            step_word=step_word(self.cfg.game),
            me=me,
            registration=self.cfg.registration.mode,
            finals=self.finals is not None,
            **context,
        )
        return HTMLResponse(html, status_code=status)

    async def replay_check(self, row: MatchRow) -> str:
        """The verify line of a finished match's replay, checked once and kept.

        The check replays the whole match in a thread. Readers of a match page that
        is not kept yet arrive together (a match has just finished, or the server
        has just started), and each running its own check would have every such
        thread contend for the interpreter with the event loop that serves all the
        other pages; the first reader's check is awaited by the others instead."""
        assert row.replay
        while True:
            summary = self.store.verify_summary(row.id)
            if summary is not None:
                return summary
            pending = self.verifying.get(row.id)
            if pending is None:
                break
            await pending.wait()  # and read the stored result (or check again if it failed)
        done = self.verifying[row.id] = trio.Event()
        try:
            summary = await trio.to_thread.run_sync(verify_summary, self.dir / row.replay)
            self.store.set_verify_summary(row.id, summary)
        finally:
            del self.verifying[row.id]
            done.set()
        return summary

    def match_json(self, row: MatchRow, names: dict[int, Version]) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(row)
        for seat, vid in enumerate((row.version0, row.version1)):
            v = names.get(vid)
            out[f"bot{seat}"] = v.bot_name if v else None
            out[f"bot{seat}_version"] = v.number if v else None
        return out

    def versions_of_rows(self, rows: list[MatchRow]) -> dict[int, Version]:
        ids = {r.version0 for r in rows} | {r.version1 for r in rows}
        out = {}
        for vid in ids:
            v = self.store.version(vid)
            if v is not None:
                out[vid] = v
        return out


def route(site: Site, path: str, handler: Handler, methods: list[str] | None = None) -> Route:
    """A Starlette route calling ``handler(site, request)``."""

    async def endpoint(request: Request) -> Response:
        return await handler(site, request)

    endpoint.__name__ = endpoint.__qualname__ = handler.__name__
    return Route(path, endpoint, methods=methods, name=handler.__name__)


def cached(handler: Handler) -> Handler:
    """``handler`` answering anonymous GETs from ``Site.cached``."""

    async def answer(site: Site, request: Request) -> Response:
        async def make() -> Response:
            return await handler(site, request)

        return await site.cached(request, make)

    answer.__name__ = answer.__qualname__ = handler.__name__
    return answer


def step_word(game: str) -> str:
    """What the game calls one step ("round", "turn", ...), for the pages."""
    from ..games import GAMES

    cls = GAMES.get(game)
    return "round" if cls is None else cls.step_word
