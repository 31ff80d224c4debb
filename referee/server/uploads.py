"""Uploads of bots: the form on ``/me`` and ``POST /api/submit``. An upload is
read (up to the size limit), unpacked into a new version, and validated by one
match before it joins the ladder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .context import HOUR, Site, route
from .db import Competitor, NameTaken
from .intake import Limits, Refused, unpack
from .ladder import ServerStopping
from .names import name_problem
from .sessions import too_many


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused with a 413 once it is over ``limit`` bytes."""
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


async def submit(
    site: Site,
    competitor: Competitor,
    data: bytes,
    filename: str,
    name: str,
    command: str | None,
) -> tuple[int, dict[str, Any]]:
    """Store, then validate an upload. (HTTP status, answer)."""
    name = name.strip()
    problem = name_problem(name, "a bot name")
    if problem is not None:
        raise HTTPException(400, problem)
    owner = site.store.bot_id(name)
    if owner is not None and owner[1] != competitor.id:
        raise HTTPException(403, f"the bot name {name!r} belongs to someone else")
    sub = site.cfg.submissions
    if not site.store.note_request(competitor.id, "upload", sub.per_hour, HOUR):
        wait = site.store.request_wait(competitor.id, "upload", sub.per_hour, HOUR)
        raise too_many(f"upload limit reached: {sub.per_hour} per hour", wait)
    limits = Limits(max_files=sub.max_files, max_unpacked=sub.max_unpacked_mib << 20)
    try:
        unpacked = await trio.to_thread.run_sync(
            unpack, data, filename or name, command, site.dir / "versions", limits
        )
    except Refused as exc:
        raise HTTPException(400, f"upload refused: {exc}") from None
    try:
        version = site.store.add_version(
            name, competitor.id, unpacked.sha256, unpacked.command, "validating"
        )
    except NameTaken as exc:
        raise HTTPException(403, str(exc)) from None
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
    return 422, answer


async def me_upload(site: Site, request: Request) -> Response:
    me = site.sessions.required(request)
    limit = site.cfg.submissions.max_upload_kib << 10
    form = await request.form(max_files=1, max_fields=5, max_part_size=limit)
    site.sessions.check_form(request, form)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise HTTPException(400, "choose a file to upload")
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"the upload is over the limit of {limit >> 10} KiB")
    filename = upload.filename or "bot"
    name = str(form.get("name") or "").strip() or Path(filename).name.split(".")[0]
    command = str(form.get("command") or "").strip() or None
    code, answer = await submit(site, me, data, filename, name, command)
    return site.page(request, "submitted.html", status=code, answer=answer)


async def api_submit(site: Site, request: Request) -> Response:
    competitor = site.sessions.bearer(request)
    data = await read_body(request, site.cfg.submissions.max_upload_kib << 10)
    q = request.query_params
    filename = q.get("filename", "bot")
    name = q.get("name") or Path(filename).name.split(".")[0]
    code, answer = await submit(site, competitor, data, filename, name, q.get("command") or None)
    return JSONResponse(answer, status_code=code)


def routes(site: Site) -> list[Route]:
    return [
        route(site, "/me/upload", me_upload, methods=["POST"]),
        route(site, "/api/submit", api_submit, methods=["POST"]),
    ]
