"""The web site and JSON API of ``referee serve``: a Starlette (ASGI) application,
run by hypercorn's trio worker in the same trio event loop as the ladder.

Pages are rendered on the server by jinja2, which escapes every value by default;
forms work without JavaScript. Scripts authenticate with ``Authorization: Bearer
TOKEN``; people sign in with their token once and get a session cookie (HttpOnly,
SameSite=Strict, signed by a secret kept in the database), and every form that
changes state carries a CSRF token derived from that session.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import msgspec
import trio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from ..step_report import verify_summary
from .config import CompetitionConfig
from .db import Competitor, MatchRow, NameTaken, Store, Version
from .intake import Limits, Refused, unpack
from .ladder import Ladder

SESSION_COOKIE = "referee_session"
SESSION_DAYS = 30
HOUR = 3600.0
NAME_CHARS = 64
# At most this many pages are kept for one ladder generation (any query string is a
# page of its own: the bound keeps odd queries from filling the memory).
CACHE_PAGES = 2000
# Made once at start, before the server listens (see ``warm_up``): the pages of the
# bots at the top of the leaderboard and of the most recent finished matches.
WARM_BOTS = 20
WARM_MATCHES = 15


class Site:
    """What the request handlers share: the store, the ladder and the config."""

    def __init__(
        self, store: Store, ladder: Ladder, cfg: CompetitionConfig, data_dir: Path
    ) -> None:
        self.store = store
        self.ladder = ladder
        self.cfg = cfg
        self.dir = data_dir
        secret = store.get("secret")
        if secret is None:
            secret = secrets.token_hex(32)
            store.set("secret", secret)
        self.secret = bytes.fromhex(secret)
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

    # -- auth ------------------------------------------------------------------

    def _sign(self, text: str) -> str:
        return hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()

    def session_value(self, competitor: Competitor) -> str:
        body = f"{competitor.id}.{int(time.time())}"
        return f"{body}.{self._sign(body)}"

    def session_competitor(self, request: Request) -> Competitor | None:
        value = request.cookies.get(SESSION_COOKIE, "")
        parts = value.split(".")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            return None
        body = f"{parts[0]}.{parts[1]}"
        if not hmac.compare_digest(self._sign(body), parts[2]):
            return None
        if time.time() - int(parts[1]) > SESSION_DAYS * 86400:
            return None
        return self.store.competitor(int(parts[0]))

    def csrf_token(self, request: Request) -> str:
        return self._sign("csrf:" + request.cookies.get(SESSION_COOKIE, ""))[:32]

    def check_csrf(self, request: Request, form: Any) -> None:
        given = str(form.get("csrf") or "")
        if not hmac.compare_digest(given, self.csrf_token(request)):
            raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page")

    def bearer(self, request: Request) -> Competitor:
        auth = request.headers.get("authorization", "")
        if not auth.lower().startswith("bearer "):
            raise HTTPException(401, "an 'Authorization: Bearer TOKEN' header is required")
        competitor = self.store.competitor_by_token(auth[7:].strip())
        if competitor is None:
            raise HTTPException(401, "unknown token")
        return competitor

    # -- rendering -------------------------------------------------------------

    def _current_cache(self) -> dict[str, tuple[bytes, bytes, bytes]]:
        if self.cache_generation != self.ladder.generation or len(self.cache) >= CACHE_PAGES:
            self.cache.clear()
            self.cache_generation = self.ladder.generation
        return self.cache

    @staticmethod
    def _cache_key(scope: Any) -> str:
        return str(scope["path"]) + "?" + bytes(scope["query_string"]).decode("latin-1")

    async def cached(self, request: Request, make: Any) -> Response:
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
            response: Response = await make()
            return response
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

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> Response:
        me = self.session_competitor(request)
        html = self.env.get_template(template).render(
            site=self.cfg.name,
            game=self.cfg.game,
            step_word=_step_word(self.cfg.game),
            me=me,
            csrf=self.csrf_token(request) if me else "",
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

    async def read_body(self, request: Request, limit: int) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise HTTPException(413, f"the upload is over the limit of {limit >> 10} KiB")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, f"the upload is over the limit of {limit >> 10} KiB")
            chunks.append(chunk)
        return b"".join(chunks)

    # -- submissions -----------------------------------------------------------

    async def submit(
        self, competitor: Competitor, data: bytes, filename: str, name: str, command: str | None
    ) -> tuple[int, dict[str, Any]]:
        """Store, then validate an upload. (HTTP status, answer)."""
        name = name.strip()
        if not name or len(name) > NAME_CHARS or not name.isprintable():
            raise HTTPException(400, f"a bot name must be 1-{NAME_CHARS} printable characters")
        owner = self.store.bot_id(name)
        if owner is not None and owner[1] != competitor.id:
            raise HTTPException(403, f"the bot name {name!r} belongs to someone else")
        sub = self.cfg.submissions
        if not self.store.note_request(competitor.id, "upload", sub.per_hour, HOUR):
            raise HTTPException(429, f"upload limit reached: {sub.per_hour} per hour")
        limits = Limits(max_files=sub.max_files, max_unpacked=sub.max_unpacked_mib << 20)
        body = self.dir / "versions" / f"upload-body-{secrets.token_hex(8)}"
        body.parent.mkdir(parents=True, exist_ok=True)
        body.write_bytes(data)
        try:
            unpacked = await trio.to_thread.run_sync(
                unpack, body, filename or name, command, self.dir / "versions", limits
            )
        except Refused as exc:
            raise HTTPException(exc.status, f"upload refused: {exc}") from None
        finally:
            body.unlink(missing_ok=True)
        try:
            version = self.store.add_version(
                name, competitor.id, unpacked.sha256, unpacked.command, "validating"
            )
        except NameTaken as exc:
            raise HTTPException(403, str(exc)) from None
        self.ladder.touch()  # the bot's page lists the new version, being validated
        # Shielded: a client that hangs up does not cut the validation short (the
        # version would wait for a restart to be validated).
        with trio.CancelScope(shield=True):
            result = await self.ladder.validate(version)
        answer = {
            "accepted": bool(result.get("ok")),
            "bot": name,
            "version": version.number,
            "version_id": version.id,
            "sha256": unpacked.sha256,
            "command": unpacked.command,
            "validation": result,
        }
        if result.get("ok"):
            answer["message"] = (
                f"accepted, version {version.number}, validation match passed, now in the ladder"
            )
            return 200, answer
        answer["message"] = f"refused: {result.get('message')}"
        return 422, answer

    async def challenge(self, competitor: Competitor, bot: str, opponent: str) -> dict[str, Any]:
        mine = self.store.bot_by_name(bot)
        if mine is None or mine[2] != competitor.name:
            raise HTTPException(403, f"{bot!r} is not one of your bots")
        current = {v.bot_name: v for v in self.store.current_versions()}
        if bot not in current:
            raise HTTPException(409, f"{bot!r} has no validated version yet")
        if opponent not in current:
            raise HTTPException(404, f"no bot {opponent!r} on the ladder")
        limit = self.cfg.submissions.challenges_per_hour
        if not self.store.note_request(competitor.id, "challenge", limit, HOUR):
            raise HTTPException(429, f"challenge limit reached: {limit} per hour")
        mid = self.store.add_match(
            "challenge",
            current[bot].id,
            current[opponent].id,
            0,
            self.cfg.ladder.rounds,
            requested_by=competitor.id,
            status="queued",
        )
        self.ladder._wake()
        return {"match": mid, "status": "queued", "url": f"/matches/{mid}"}


def _public_outcome(outcome: dict[str, Any] | None) -> dict[str, Any] | None:
    """A match's outcome without the bots' stderr (only their owners read that)."""
    if outcome is None:
        return None
    out = json.loads(json.dumps(outcome))
    for seat in out.get("seats", []):
        verdict = seat.get("verdict") or {}
        for key in ("stderr_head", "stderr_tail"):
            verdict.pop(key, None)
        seat.pop("command", None)
    out.pop("replay", None)
    return dict(out)


def build_app(site: Site) -> Any:
    """The ASGI application: pages made for this ladder generation are sent at once,
    everything else goes through Starlette's routes."""
    store, ladder = site.store, site.ladder

    def leaderboard_json() -> dict[str, Any]:
        return {
            "name": site.cfg.name,
            "game": site.cfg.game,
            "frozen": ladder.frozen,
            "finals": site.finals["status"] if site.finals else None,
            "entries": [msgspec.to_builtins(e) for e in ladder.leaderboard],
            "matches": ladder.counts(),
        }

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "matches": ladder.counts()})

    def cached(handler: Any) -> Any:
        """``handler`` answering anonymous GETs from ``Site.cached``."""

        async def answer(request: Request) -> Response:
            async def make() -> Response:
                response: Response = await handler(request)
                return response

            return await site.cached(request, make)

        return answer

    @cached
    async def api_leaderboard(request: Request) -> Response:
        return JSONResponse(leaderboard_json())

    def _limit(request: Request, default: int = 50) -> int:
        text = request.query_params.get("limit", str(default))
        if not text.isdigit() or not 1 <= int(text) <= 1000:
            raise HTTPException(400, "limit must be a whole number from 1 to 1000")
        return int(text)

    @cached
    async def api_matches(request: Request) -> Response:
        kind = request.query_params.get("kind")
        status = request.query_params.get("status")
        if kind == "validation":
            raise HTTPException(403, "validation matches are shown to their bot's owner only")
        rows = store.matches(kind=kind, status=status, limit=_limit(request), public=True)
        names = site.versions_of_rows(rows)
        return JSONResponse([site.match_json(r, names) for r in rows])

    def _match(request: Request) -> MatchRow:
        text = request.path_params["mid"]
        row = store.match(int(text)) if text.isdigit() and len(text) < 12 else None
        if row is None:
            raise HTTPException(404, f"no match {text}")
        if row.kind == "validation":
            # A validation match shows a new version's failures: its owner's only.
            me = site.session_competitor(request)
            version = store.version(row.version0)
            if me is None or version is None or version.owner_id != me.id:
                raise HTTPException(404, f"no match {text}")
        return row

    @cached
    async def api_match(request: Request) -> Response:
        row = _match(request)
        names = site.versions_of_rows([row])
        out = site.match_json(row, names)
        out["outcome"] = _public_outcome(store.match_outcome(row.id))
        return JSONResponse(out)

    def _bot(request: Request) -> tuple[int, str, str | None]:
        found = store.bot_by_name(request.path_params["name"])
        if found is None:
            raise HTTPException(404, f"no bot {request.path_params['name']!r}")
        return found

    def bot_data(found: tuple[int, str, str | None]) -> dict[str, Any]:
        bot_id, name, owner = found
        versions = store.versions_of(bot_id)
        ids = [v.id for v in versions]
        rows = store.matches(versions=ids, limit=30)
        rows = [r for r in rows if r.kind != "validation"]
        names = site.versions_of_rows(rows)
        entry = next((e for e in ladder.leaderboard if e.bot == name), None)
        history = store.rating_history(ids)
        fault_summary: dict[str, int] = {}
        for r in rows:
            for seat, vid in enumerate((r.version0, r.version1)):
                status = r.status0 if seat == 0 else r.status1
                if vid in ids and status and status != "ok":
                    fault_summary[status] = fault_summary.get(status, 0) + 1
        return {
            "name": name,
            "owner": owner,
            "entry": msgspec.to_builtins(entry) if entry else None,
            "versions": [
                {
                    "number": v.number,
                    "id": v.id,
                    "status": v.status,
                    "created": v.created,
                    "sha256": v.sha256,
                }
                for v in versions
            ],
            "matches": [site.match_json(r, names) for r in rows],
            "history": [
                {
                    "version": h[0],
                    "after_match": h[1],
                    "games": h[2],
                    "rating": h[3],
                    "low": h[4],
                    "high": h[5],
                }
                for h in history
            ],
            "faults": fault_summary,
        }

    @cached
    async def api_bot(request: Request) -> Response:
        return JSONResponse(bot_data(_bot(request)))

    async def api_submit(request: Request) -> Response:
        competitor = site.bearer(request)
        data = await site.read_body(request, site.cfg.submissions.max_upload_kib << 10)
        q = request.query_params
        filename = q.get("filename", "bot")
        name = q.get("name") or Path(filename).name.split(".")[0]
        code, answer = await site.submit(competitor, data, filename, name, q.get("command") or None)
        return JSONResponse(answer, status_code=code)

    async def api_challenge(request: Request) -> Response:
        competitor = site.bearer(request)
        try:
            body = json.loads(await site.read_body(request, 4096) or b"{}")
        except ValueError:
            raise HTTPException(
                400, 'the body must be JSON: {"bot": ..., "opponent": ...}'
            ) from None
        if not isinstance(body, dict):
            raise HTTPException(400, "the body must be a JSON object")
        answer = await site.challenge(
            competitor, str(body.get("bot", "")), str(body.get("opponent", ""))
        )
        return JSONResponse(answer, status_code=202)

    # -- pages -------------------------------------------------------------------

    @cached
    async def index(request: Request) -> Response:
        rows = store.matches(kind="ladder", status="done", limit=15)
        names = site.versions_of_rows(rows)
        return site.page(
            request,
            "leaderboard.html",
            board=ladder.leaderboard,
            recent=[site.match_json(r, names) for r in rows],
            counts=ladder.counts(),
            frozen=ladder.frozen,
        )

    @cached
    async def bot_page(request: Request) -> Response:
        data = bot_data(_bot(request))
        return site.page(request, "bot.html", bot=data, plot=_rating_plot(data["history"]))

    @cached
    async def match_page(request: Request) -> Response:
        row = _match(request)
        names = site.versions_of_rows([row])
        outcome = _public_outcome(store.match_outcome(row.id))
        verify = None
        if row.status == "done" and row.replay:
            # A finished replay never changes: checked once, the summary is kept.
            verify = await site.replay_check(row)
        me = site.session_competitor(request)
        own_seats = [
            seat
            for seat, vid in enumerate((row.version0, row.version1))
            if me is not None and (v := names.get(vid)) is not None and v.owner_id == me.id
        ]
        return site.page(
            request,
            "match.html",
            m=site.match_json(row, names),
            outcome=outcome,
            verify=verify,
            own_seats=own_seats,
        )

    async def match_replay(request: Request) -> Response:
        row = _match(request)
        if not row.replay or not (site.dir / row.replay).is_file():
            raise HTTPException(404, "this match has no replay (yet)")
        return replay_response(site.dir / row.replay, f"match-{row.id}.jsonl")

    async def match_viewer(request: Request) -> Response:
        row = _match(request)
        if not row.replay or not (site.dir / row.replay).is_file():
            raise HTTPException(404, "this match has no replay (yet)")
        html = await trio.to_thread.run_sync(_viewer_html, site.dir / row.replay)
        if html is None:
            raise HTTPException(404, "this match's replay cannot be read")
        return HTMLResponse(html)

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return site.page(request, "login.html")
        form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        competitor = store.competitor_by_token(str(form.get("token") or "").strip())
        if competitor is None:
            return site.page(request, "login.html", status=401, error="unknown token")
        return _signed_in(competitor, "/me")

    def _signed_in(competitor: Competitor, to: str, page: Response | None = None) -> Response:
        response = page or RedirectResponse(to, status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            site.session_value(competitor),
            max_age=SESSION_DAYS * 86400,
            httponly=True,
            samesite="strict",
            secure=False,
            path="/",
        )
        return response

    async def logout(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        site.check_csrf(request, form)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    async def signup(request: Request) -> Response:
        if site.cfg.registration.mode != "open":
            raise HTTPException(403, "registration is by invitation: ask the organiser for a token")
        if request.method == "GET":
            return site.page(request, "signup.html")
        form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        name = str(form.get("name") or "").strip()
        if not name or len(name) > NAME_CHARS or not name.isprintable():
            return site.page(
                request,
                "signup.html",
                status=400,
                error=f"a name must be 1-{NAME_CHARS} printable characters",
            )
        try:
            token = store.add_competitor(name)
        except NameTaken as exc:
            return site.page(request, "signup.html", status=409, error=str(exc))
        competitor = store.competitor_by_token(token)
        assert competitor is not None
        page = site.page(request, "token.html", name=name, token=token)
        return _signed_in(competitor, "/me", page)

    def _me(request: Request) -> Competitor:
        me = site.session_competitor(request)
        if me is None:
            raise HTTPException(401, "sign in first (/login)")
        return me

    async def me_page(request: Request) -> Response:
        me = site.session_competitor(request)
        if me is None:
            return RedirectResponse("/login", status_code=303)
        bots = []
        for bot_id, name in store.bots_of(me.id):
            versions = store.versions_of(bot_id)
            rows = store.matches(versions=[v.id for v in versions], limit=20)
            names = site.versions_of_rows(rows)
            bots.append(
                {
                    "name": name,
                    "versions": [
                        {
                            **msgspec.to_builtins(v),
                            "reason": json.loads(v.reason) if v.reason else None,
                        }
                        for v in versions
                    ],
                    "matches": [
                        {
                            **site.match_json(r, names),
                            "my_seats": [
                                s
                                for s, vid in enumerate((r.version0, r.version1))
                                if vid in names and names[vid].owner_id == me.id
                            ],
                        }
                        for r in rows
                    ],
                }
            )
        challenges = store.matches(requested_by=me.id, limit=20)
        opponents = [v.bot_name for v in store.current_versions()]
        return site.page(
            request,
            "me.html",
            bots=bots,
            challenges=[site.match_json(r, site.versions_of_rows([r])) for r in challenges],
            opponents=opponents,
            limits=site.cfg.submissions,
        )

    async def me_log(request: Request) -> Response:
        me = _me(request)
        row = store.match(int(request.path_params["mid"]))
        seat = int(request.path_params["seat"])
        if row is None or seat not in (0, 1):
            raise HTTPException(404, "no such match")
        version = store.version(row.version0 if seat == 0 else row.version1)
        if version is None or version.owner_id != me.id:
            raise HTTPException(403, "that log belongs to another competitor's bot")
        log = site.dir / "logs" / f"m{row.id}" / f"m{row.id}.seat{seat}.stderr.log"
        text = log.read_text(errors="replace") if log.is_file() else ""
        if not text:
            outcome = store.match_outcome(row.id) or {}
            seats = outcome.get("seats") or [{}, {}]
            verdict = seats[seat].get("verdict") or {}
            text = (verdict.get("stderr_head") or "") + (verdict.get("stderr_tail") or "")
        return site.page(request, "log.html", m=row, seat=seat, bot=version.bot_name, text=text)

    async def me_upload(request: Request) -> Response:
        me = _me(request)
        limit = site.cfg.submissions.max_upload_kib << 10
        form = await request.form(max_files=1, max_fields=5, max_part_size=limit)
        site.check_csrf(request, form)
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise HTTPException(400, "choose a file to upload")
        data = await upload.read(limit + 1)
        if len(data) > limit:
            raise HTTPException(413, f"the upload is over the limit of {limit >> 10} KiB")
        filename = upload.filename or "bot"
        name = str(form.get("name") or "").strip() or Path(filename).name.split(".")[0]
        command = str(form.get("command") or "").strip() or None
        code, answer = await site.submit(me, data, filename, name, command)
        return site.page(request, "submitted.html", status=code, answer=answer)

    async def me_challenge(request: Request) -> Response:
        me = _me(request)
        form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        site.check_csrf(request, form)
        answer = await site.challenge(
            me, str(form.get("bot") or ""), str(form.get("opponent") or "")
        )
        return RedirectResponse(answer["url"], status_code=303)

    def finals_link(mid: str) -> str:
        return f"/finals/matches/{mid}"

    async def finals_page(request: Request) -> Response:
        if site.finals is None:
            raise HTTPException(404, "no finals have been run")
        return site.page(
            request,
            "finals.html",
            t=site.finals["summary"],
            finals_status=site.finals["status"],
            match_link=finals_link,
        )

    async def finals_match(request: Request) -> Response:
        mid = request.path_params["mid"]
        if not all(c.isalnum() or c in "-_" for c in mid):
            raise HTTPException(404, "no such finals match")
        found = [
            site.dir / "finals" / "replays" / f"{mid}{suffix}" for suffix in (".jsonl.gz", ".jsonl")
        ]
        path = next((p for p in found if p.is_file()), None)
        if site.finals is None or path is None:
            raise HTTPException(404, "no such finals match")
        html = await trio.to_thread.run_sync(_viewer_html, path)
        if html is None:
            return replay_response(path, f"{mid}.jsonl")
        return HTMLResponse(html)

    async def api_finals(request: Request) -> Response:
        if site.finals is None:
            raise HTTPException(404, "no finals have been run")
        return JSONResponse(site.finals)

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
        if _carries_body(request):
            # A refusal may come before the body was read (a bad token, a declared size
            # over the limit). The server then closes the connection, as it cannot find
            # where the next request starts; the header says so, or a client that
            # reuses the connection loses its next request.
            response.headers["connection"] = "close"
        return response

    routes = [
        Route("/", index),
        Route("/bots/{name:path}", bot_page),
        Route("/matches/{mid}", match_page),
        Route("/matches/{mid}/replay.jsonl", match_replay),
        Route("/matches/{mid}/viewer", match_viewer),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/signup", signup, methods=["GET", "POST"]),
        Route("/me", me_page),
        Route("/me/logs/{mid:int}/{seat:int}", me_log),
        Route("/me/upload", me_upload, methods=["POST"]),
        Route("/me/challenge", me_challenge, methods=["POST"]),
        Route("/finals", finals_page),
        Route("/finals/matches/{mid}", finals_match),
        Route("/api/health", health),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/matches", api_matches),
        Route("/api/matches/{mid}", api_match),
        Route("/api/bots/{name:path}", api_bot),
        Route("/api/submit", api_submit, methods=["POST"]),
        Route("/api/challenge", api_challenge, methods=["POST"]),
        Route("/api/finals", api_finals),
    ]
    application = Starlette(routes=routes, exception_handlers={HTTPException: http_error})

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if not await site.send_cached(scope, send):
            await application(scope, receive, send)

    return app


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


def replay_response(path: Path, filename: str) -> Response:
    """A replay file as stored: a gzip one is sent with ``Content-Encoding: gzip``, so
    a browser or an HTTP client saves the JSON Lines (and ``referee verify`` reads
    either, should a client keep the gzip bytes)."""
    with open(path, "rb") as f:
        packed = f.read(2) == b"\x1f\x8b"
    headers = {"Content-Encoding": "gzip"} if packed else None
    return FileResponse(path, media_type="application/x-ndjson", filename=filename, headers=headers)


def _viewer_html(path: Path) -> str | None:
    """The replay's HTML report (any game), or None if the file is no replay."""
    from ..errors import ReplayError
    from ..html_report import render_replay

    try:
        return render_replay(path)
    except ReplayError:
        return None


def _step_word(game: str) -> str:
    """What the game calls one step ("round", "turn", ...), for the pages."""
    from ..games import GAMES

    cls = GAMES.get(game)
    return "round" if cls is None else cls.step_word


def _rating_plot(history: list[dict[str, Any]], width: int = 600, height: int = 160) -> str:
    """An inline SVG of the rating over the matches (numbers only: nothing to escape)."""
    if len(history) < 2:
        return ""
    xs = [h["after_match"] for h in history]
    ys = [h["rating"] for h in history]
    lows = [h["low"] for h in history]
    highs = [h["high"] for h in history]
    x0, x1 = min(xs), max(xs) or 1
    y0, y1 = min(lows), max(highs)
    if y1 - y0 < 1:
        y1 = y0 + 1
    if x1 == x0:
        x1 = x0 + 1

    def px(x: float) -> float:
        return round(5 + (x - x0) / (x1 - x0) * (width - 10), 1)

    def py(y: float) -> float:
        return round(height - 5 - (y - y0) / (y1 - y0) * (height - 10), 1)

    band = " ".join(f"{px(x)},{py(h)}" for x, h in zip(xs, highs, strict=True))
    band += " " + " ".join(
        f"{px(x)},{py(lo)}" for x, lo in reversed(list(zip(xs, lows, strict=True)))
    )
    line = " ".join(f"{px(x)},{py(y)}" for x, y in zip(xs, ys, strict=True))
    return (
        f'<svg class="plot" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" aria-label="rating history">'
        f'<polygon points="{band}" fill="#cde" />'
        f'<polyline points="{line}" fill="none" stroke="#124" stroke-width="2" />'
        f'<text x="5" y="12" font-size="11">{y1:.0f}</text>'
        f'<text x="5" y="{height - 8}" font-size="11">{y0:.0f}</text></svg>'
    )
