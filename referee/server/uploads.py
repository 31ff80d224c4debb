"""Uploads of bots: the form on ``/me``, ``POST /api/submit`` and the status of a
competitor's latest upload (``GET /api/uploads/latest``).

An upload cannot hurt the server (docs/server.md, "Uploads"):

- every attempt counts toward the competitor's hourly budget the moment it starts,
  so one refused for its size, its rate, its archive or its validation counts too;
- at most ``in_flight_each`` uploads of one competitor and ``in_flight`` of everyone
  are received, unpacked or validated at once; more are refused before their body
  is read (429 and 503, with Retry-After);
- the body goes to a file in the data directory (``uploads/``) as it arrives,
  never into memory, and is cut off at the size limit (413) and when it arrives
  slower than ``min_rate_kib`` KiB/s after ``body_grace_s`` seconds (408);
- it is unpacked by referee/server/intake.py, refused with its reason (4xx), and the
  received file is removed whatever happens (start-up sweeps what a kill left).
"""

from __future__ import annotations

import calendar
import os
import secrets
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import trio
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .config import SubmissionConfig
from .context import HOUR, Site, route
from .db import Competitor, NameTaken, Version
from .intake import SCRATCH_PREFIX, Limits, Refused, unpack
from .ladder import ServerStopping
from .names import name_problem
from .sessions import same_origin, too_many

# Room for the upload form's other fields and the multipart framing, on top of the file.
FORM_OVERHEAD = 16 << 10
# The latest uploads of each competitor kept for ``GET /api/uploads/latest``.
KEPT_PER_COMPETITOR = 20
# What a refusal for too many uploads at once suggests waiting, in seconds.
BUSY_RETRY_S = 5
_CHUNK = 1 << 16


class _Spooled(MultiPartParser):
    # The form's file part is parsed from the received file; past this it is spooled
    # to a temporary file instead of memory.
    spool_max_size = _CHUNK


class UploadRecord(msgspec.Struct, kw_only=True):
    """One upload as the server saw it, for its competitor's status query."""

    bot: str
    state: str  # receiving, checking, accepted, refused, lost
    started: float  # time.time()
    status: int | None = None  # the HTTP status answered, once answered
    reason: str | None = None
    version: int | None = None


class Desk:
    """The uploads in flight and the latest ones of each competitor (since start)."""

    def __init__(self, cfg: SubmissionConfig) -> None:
        self.cfg = cfg
        self.in_flight = 0
        self.each: dict[int, int] = {}
        self.latest: dict[int, deque[UploadRecord]] = {}

    def enter(self, competitor: int) -> None:
        """Take a place for an upload, or refuse it (429: the competitor's own
        uploads; 503: everyone's)."""
        if self.each.get(competitor, 0) >= self.cfg.in_flight_each:
            raise HTTPException(
                429,
                f"you have {self.cfg.in_flight_each} uploads in flight already: "
                "wait for their answers",
                headers={"Retry-After": str(BUSY_RETRY_S)},
            )
        if self.in_flight >= self.cfg.in_flight:
            raise HTTPException(
                503,
                f"the server is receiving {self.cfg.in_flight} uploads already: try again shortly",
                headers={"Retry-After": str(BUSY_RETRY_S)},
            )
        self.in_flight += 1
        self.each[competitor] = self.each.get(competitor, 0) + 1

    def leave(self, competitor: int) -> None:
        self.in_flight -= 1
        left = self.each[competitor] - 1
        if left:
            self.each[competitor] = left
        else:
            del self.each[competitor]

    def record(self, competitor: int, bot: str) -> UploadRecord:
        record = UploadRecord(bot=bot, state="receiving", started=time.time())
        kept = self.latest.setdefault(competitor, deque(maxlen=KEPT_PER_COMPETITOR))
        kept.append(record)
        return record


def _count_attempt(site: Site, competitor: Competitor) -> None:
    """Count an upload toward the hourly budget as it starts: whatever becomes of it
    (refused for its size, rate, archive or validation, or accepted), it counts."""
    per_hour = site.cfg.submissions.per_hour
    if not site.store.note_request(competitor.id, "upload", per_hour, HOUR):
        wait = site.store.request_wait(competitor.id, "upload", per_hour, HOUR)
        raise too_many(f"upload limit reached: {per_hour} per hour (refused ones count too)", wait)


async def read_body(request: Request, limit: int, seconds: float) -> bytes:
    """A small body (a JSON request), refused with a 413 once it is over ``limit``
    bytes and dropped (408) if it has not all come within ``seconds``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the body is over the limit of {limit} bytes")
    chunks, size = [], 0
    with trio.move_on_after(seconds):
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, f"the body is over the limit of {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    raise HTTPException(408, f"the body did not arrive within {seconds:g} s: dropped")


def _too_big(site: Site) -> HTTPException:
    limit = site.cfg.submissions.max_upload_kib
    return HTTPException(413, f"the upload is over the limit of {limit} KiB")


async def receive_body(site: Site, request: Request, limit: int, record: UploadRecord) -> Path:
    """Write the request's body to a new file under ``uploads/`` as it arrives and
    return it: refused (413) once over ``limit`` bytes, and dropped (408) when it
    arrives slower than the configured minimum rate. The caller removes the file."""
    sub = site.cfg.submissions
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_big(site)
    directory = site.dir / "uploads"
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"{SCRATCH_PREFIX}{secrets.token_hex(8)}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    rate = sub.min_rate_kib << 10
    started = trio.current_time()
    received = 0
    chunks: AsyncIterator[bytes] = request.stream().__aiter__()
    try:
        # Unbuffered: what has arrived is in the file (and nowhere else) at once.
        with os.fdopen(fd, "wb", buffering=0) as out:
            while True:
                # However it is sent, the body so far must have come at the minimum
                # rate (after the grace period): a trickle is dropped, not waited for.
                deadline = started + sub.body_grace_s + received / rate
                with trio.move_on_at(deadline):
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        return path
                    received += len(chunk)
                    if received > limit:
                        raise _too_big(site)
                    view = memoryview(chunk)
                    while view:
                        view = view[out.write(view) or 0 :]
                    continue
                took = trio.current_time() - started
                raise HTTPException(
                    408,
                    f"the upload arrived too slowly ({received:,} bytes in {took:.0f} s; "
                    f"at least {sub.min_rate_kib} KiB/s after the first "
                    f"{sub.body_grace_s:g} s): dropped",
                )
    except ClientDisconnect:
        os.unlink(path)
        record.state = "lost"
        record.reason = f"the connection closed after {received:,} bytes of the upload"
        raise HTTPException(400, record.reason) from None
    except BaseException:
        os.unlink(path)
        raise


async def _read_form(request: Request, body: Path) -> FormData:
    """The upload form, parsed from the received body."""

    async def stream() -> AsyncGenerator[bytes, None]:
        with open(body, "rb") as f:
            while chunk := f.read(_CHUNK):
                yield chunk

    parser = _Spooled(request.headers, stream(), max_files=1, max_fields=5, max_part_size=4096)
    try:
        return await parser.parse()
    except MultiPartException as exc:
        raise HTTPException(400, f"the form cannot be read: {exc.message}") from None


def _check_name(site: Site, competitor: Competitor, name: str) -> str:
    name = name.strip()
    problem = name_problem(name, "a bot name")
    if problem is not None:
        raise HTTPException(400, problem)
    owner = site.store.bot_id(name)
    if owner is not None and owner[1] != competitor.id:
        raise HTTPException(403, f"the bot name {name!r} belongs to someone else")
    return name


async def submit(
    site: Site,
    competitor: Competitor,
    body: Path,
    filename: str,
    name: str,
    command: str | None,
    record: UploadRecord,
) -> tuple[int, dict[str, Any]]:
    """Unpack and store, then validate a received upload. (HTTP status, answer)."""
    name = _check_name(site, competitor, name)
    record.bot = name
    record.state = "checking"
    sub = site.cfg.submissions
    limits = Limits(max_files=sub.max_files, max_unpacked=sub.max_unpacked_mib << 20)
    try:
        unpacked = await trio.to_thread.run_sync(
            unpack, body, filename or name, command, site.dir / "versions", limits
        )
    except Refused as exc:
        raise HTTPException(exc.status, f"upload refused: {exc}") from None
    try:
        version = site.store.add_version(
            name, competitor.id, unpacked.sha256, unpacked.command, "validating"
        )
    except NameTaken as exc:
        raise HTTPException(403, str(exc)) from None
    record.version = version.number
    site.ladder.touch()  # the bot's page lists the new version, being validated
    # A client that hangs up does not cut the validation short; a server that stops
    # does (the version is validated when it starts again).
    try:
        result = await site.ladder.validate_detached(version)
    except ServerStopping as exc:
        raise HTTPException(503, str(exc)) from None
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
    record.reason = str(result.get("message"))
    return 422, answer


async def _upload(
    site: Site,
    desk: Desk,
    competitor: Competitor,
    request: Request,
    name: str | None,
    limit: int,
    handle: Any,
) -> Response:
    """What both ways of uploading share: the budget, the bot's name (if known before
    the body), the caps on uploads in flight, the body received to a file, the record
    of what became of it; ``handle(body, record)`` does the rest and answers."""
    _count_attempt(site, competitor)
    # A name given beside the body is checked before the body is read.
    bot = "" if name is None else _check_name(site, competitor, name)
    desk.enter(competitor.id)
    record = desk.record(competitor.id, bot)
    try:
        body = await receive_body(site, request, limit, record)
        try:
            response: Response = await handle(body, record)
        finally:
            body.unlink(missing_ok=True)
    except HTTPException as exc:
        if record.state != "lost":
            record.state = "refused"
            record.reason = str(exc.detail)
        record.status = exc.status_code
        raise
    except BaseException:
        if record.state in ("receiving", "checking") and record.version is None:
            record.state = "lost"
            record.reason = "the server stopped before it answered"
        raise
    finally:
        desk.leave(competitor.id)
    record.status = response.status_code
    record.state = "accepted" if response.status_code == 200 else "refused"
    return response


def _latest_stored(site: Site, competitor: Competitor, bot: str | None) -> dict[str, Any] | None:
    """The competitor's newest stored version (of ``bot``), as an upload record: what
    a restarted server knows of an upload it received before."""
    newest: Version | None = None
    for bot_id, name in site.store.bots_of(competitor.id):
        if bot is not None and name != bot:
            continue
        versions = site.store.versions_of(bot_id)
        if versions and (newest is None or versions[-1].id > newest.id):
            newest = versions[-1]
    if newest is None:
        return None
    state, reason = _stored_state(newest)
    created = calendar.timegm(time.strptime(newest.created, "%Y-%m-%dT%H:%M:%SZ"))
    return {
        "bot": newest.bot_name,
        "state": state,
        "version": newest.number,
        "reason": reason,
        "status": None,
        "age_s": round(max(0.0, time.time() - created), 1),
    }


def _stored_state(version: Version) -> tuple[str, str | None]:
    """(state, reason) of a stored version: its validation decides."""
    states = {"validating": "checking", "active": "accepted", "refused": "refused"}
    reason = None
    if version.reason:
        try:
            reason = str(msgspec.json.decode(version.reason).get("message"))
        except (msgspec.DecodeError, AttributeError):
            reason = version.reason
    return states.get(version.status, version.status), reason


def _stored_version(site: Site, competitor: Competitor, bot: str, number: int) -> Version | None:
    found = site.store.bot_id(bot)
    if found is None or found[1] != competitor.id:
        return None
    return next((v for v in site.store.versions_of(found[0]) if v.number == number), None)


def routes(site: Site) -> list[Route]:
    desk = Desk(site.cfg.submissions)
    sub = site.cfg.submissions

    async def me_upload(site: Site, request: Request) -> Response:
        me = site.sessions.required(request)
        if not same_origin(request):  # before it counts toward the owner's budget
            raise HTTPException(403, "a form posted from another site is refused")
        limit = sub.max_upload_kib << 10

        async def handle(body: Path, record: UploadRecord) -> Response:
            form = await _read_form(request, body)
            site.sessions.check_form(request, form)
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise HTTPException(400, "choose a file to upload")
            filename = upload.filename or "bot"
            name = str(form.get("name") or "").strip() or Path(filename).name.split(".")[0]
            command = str(form.get("command") or "").strip() or None
            received = body.with_name(body.name + "-file")
            try:
                with open(received, "wb") as out:
                    while chunk := await upload.read(_CHUNK):
                        out.write(chunk)
                await form.close()
                if received.stat().st_size > limit:  # the body's cap allows for the form
                    raise _too_big(site)
                code, answer = await submit(site, me, received, filename, name, command, record)
            finally:
                received.unlink(missing_ok=True)
            return site.page(request, "submitted.html", status=code, answer=answer)

        return await _upload(site, desk, me, request, None, limit + FORM_OVERHEAD, handle)

    async def api_submit(site: Site, request: Request) -> Response:
        competitor = site.sessions.bearer(request)
        q = request.query_params
        filename = q.get("filename", "bot")
        name = q.get("name") or Path(filename).name.split(".")[0]
        command = q.get("command") or None

        async def handle(body: Path, record: UploadRecord) -> Response:
            code, answer = await submit(site, competitor, body, filename, name, command, record)
            return JSONResponse(answer, status_code=code)

        return await _upload(
            site, desk, competitor, request, name, sub.max_upload_kib << 10, handle
        )

    async def api_latest_upload(site: Site, request: Request) -> Response:
        """What became of the competitor's latest upload (of the bot ``?name=``):
        received, being checked, accepted or refused (with the reason), or lost."""
        competitor = site.sessions.bearer(request)
        bot = request.query_params.get("name") or None
        kept = [r for r in desk.latest.get(competitor.id, ()) if bot is None or r.bot == bot]
        upload: dict[str, Any] | None
        if kept:
            record = kept[-1]
            upload = msgspec.to_builtins(record)
            upload["age_s"] = round(time.time() - record.started, 1)
            del upload["started"]
            if record.version is not None:
                # Stored: its version's validation decides, whether or not the
                # answer reached the client.
                version = _stored_version(site, competitor, record.bot, record.version)
                if version is not None:
                    upload["state"], upload["reason"] = _stored_state(version)
        else:
            upload = _latest_stored(site, competitor, bot)
        return JSONResponse({"upload": upload})

    return [
        route(site, "/me/upload", me_upload, methods=["POST"]),
        route(site, "/api/submit", api_submit, methods=["POST"]),
        route(site, "/api/uploads/latest", api_latest_upload),
    ]
