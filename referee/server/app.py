"""The web site and JSON API of ``referee serve``: a Starlette (ASGI) application,
run by hypercorn's trio worker in the same trio event loop as the ladder.

The application is assembled here from the modules that each own one part:

- ``sessions``: who is asking (session cookies, CSRF tokens, bearer tokens);
- ``accounts``: the sign-up, sign-in and sign-out pages;
- ``names``: the names competitors may give themselves and their bots;
- ``uploads``: bot uploads through the form and ``/api/submit``;
- ``pages``: the HTML pages;
- ``api``: the JSON API and the data the pages are made of;
- ``context``: what they share (``Site``: the store, the ladder, the config, the
  templates and the cache of public pages).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from . import accounts, api, metrics, pages, uploads
from .context import Site
from .sessions import security_headers

__all__ = ["Site", "build_app", "warm_up"]

# Made once at start, before the server listens (see ``warm_up``): the pages of the
# bots at the top of the leaderboard and of the most recent finished matches.
WARM_BOTS = 20
WARM_MATCHES = 15


def build_app(site: Site) -> Any:
    """The ASGI application: pages made for this ladder generation are sent at once,
    everything else goes through Starlette's routes."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            response: Response = JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        else:
            response = site.page(
                request,
                "error.html",
                status=exc.status_code,
                code=exc.status_code,
                detail=exc.detail,
            )
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value  # Retry-After of a 429
        if _carries_body(request):
            # A refusal may come before the body was read (a bad token, a declared size
            # over the limit). The server then closes the connection, as it cannot find
            # where the next request starts; the header says so, or a client that
            # reuses the connection loses its next request.
            response.headers["connection"] = "close"
        return response

    routes = [
        *pages.routes(site),
        *accounts.routes(site),
        *uploads.routes(site),
        *api.routes(site),
        *metrics.routes(site),
    ]
    application = Starlette(routes=routes, exception_handlers={HTTPException: http_error})

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if not await site.send_cached(scope, send):
            await application(scope, receive, send)

    return quiet_when_the_connection_closes(metrics.instrument(security_headers(app), routes))


def quiet_when_the_connection_closes(app: Any) -> Any:
    """``app`` whose response ends quietly when hypercorn is closing its connection.

    A client may close its connection as soon as it has read a whole response (a
    refusal of an upload it has not finished sending, say) while the application's
    last message is still going out. hypercorn (0.18) then closes the socket from
    its reading task without the lock its sends take, and the application's send
    that meets it fails with trio.BusyResourceError (where a send to a connection
    already closed is dropped quietly). The client has gone either way: nothing
    more of this response can reach it, so the rest of it is dropped too instead
    of an error with a traceback in the log."""
    import trio

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        closing = False

        async def send_unless_closing(message: Any) -> None:
            nonlocal closing
            if closing:
                return
            try:
                await send(message)
            except trio.BusyResourceError:
                closing = True

        await app(scope, receive, send_unless_closing)

    return guarded


def _carries_body(request: Request) -> bool:
    length = request.headers.get("content-length", "0")
    return "transfer-encoding" in request.headers or length != "0"


async def warm_up(site: Site, app: Any) -> list[tuple[str, int]]:
    """Do, before the server listens, what its first readers would otherwise wait
    for: jinja2 compiles every template, and the public pages most readers open
    first (the leaderboard, its top bots, the recent matches, the API's lists) are
    made once through the application itself, which imports what the pages use
    lazily, reads the database's pages into memory and verifies the recent
    matches' replays. Readers who connect the moment the server listens (a
    restart under load) then find it ready, instead of queueing behind all of it.
    Returns each path with its status."""
    for name in site.env.list_templates():
        site.env.get_template(name)
    paths = ["/", "/api/leaderboard", "/api/matches", "/api/health"]
    for entry in site.ladder.leaderboard[:WARM_BOTS]:
        paths += [f"/bots/{quote(entry.bot)}", f"/api/bots/{quote(entry.bot)}"]
    for row in site.store.matches(kind="ladder", status="done", limit=WARM_MATCHES):
        paths += [f"/matches/{row.id}", f"/api/matches/{row.id}"]
    if site.finals is not None:
        paths += ["/finals", "/api/finals"]
    statuses = []
    for path in paths:
        try:
            statuses.append((path, await _get(app, path)))
        except Exception as exc:  # a reader would get a 500 there: say so, start anyway
            print(f"referee serve: warming up {path} failed: {exc!r}", flush=True)
            statuses.append((path, 500))
    return statuses


async def _get(app: Any, path: str) -> int:
    """The status of an anonymous GET of ``path`` made in-process (the body is dropped)."""
    status = 0
    raw = path.encode()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(path),
        "raw_path": raw,
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
    }
    await app(scope, receive, send)
    return status
