"""The HTML pages: the leaderboard, bots, matches with their replay viewer and
download, the finals, and a competitor's own page (``/me``) with their bots'
stderr logs and challenges. Rendered on the server by jinja2, which escapes every
value by default; forms work without JavaScript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import trio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..replay_public import write_public_replay
from .api import bot_data, challenge, find_bot, find_match, public_outcome
from .context import Site, cached, route
from .db import MatchRow


@cached
async def index(site: Site, request: Request) -> Response:
    rows = site.store.matches(kind="ladder", status="done", limit=15)
    names = site.versions_of_rows(rows)
    ladder = site.ladder
    return site.page(
        request,
        "leaderboard.html",
        board=ladder.leaderboard,
        recent=[site.match_json(r, names) for r in rows],
        counts=ladder.counts(),
        frozen=ladder.frozen,
    )


@cached
async def bot_page(site: Site, request: Request) -> Response:
    data = bot_data(site, find_bot(site, request))
    return site.page(request, "bot.html", bot=data, plot=rating_plot(data["history"]))


@cached
async def match_page(site: Site, request: Request) -> Response:
    row = find_match(site, request)
    names = site.versions_of_rows([row])
    outcome = public_outcome(site.store.match_outcome(row.id))
    verify = None
    if row.status == "done" and row.replay:
        # A finished replay never changes: checked once, the summary is kept.
        verify = await site.replay_check(row)
    me = site.sessions.current(request)
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


async def match_replay(site: Site, request: Request) -> Response:
    row = find_match(site, request)
    path = await replay_for(site, request, row)
    return replay_response(path, f"match-{row.id}.jsonl")


async def match_viewer(site: Site, request: Request) -> Response:
    row = find_match(site, request)
    path = await replay_for(site, request, row)
    html = await trio.to_thread.run_sync(viewer_html, path)
    if html is None:
        raise HTTPException(404, "this match's replay cannot be read")
    return HTMLResponse(html)


async def me_page(site: Site, request: Request) -> Response:
    store = site.store
    me = site.sessions.current(request)
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


async def me_log(site: Site, request: Request) -> Response:
    store = site.store
    me = site.sessions.required(request)
    mid, seat = request.path_params["mid"], request.path_params["seat"]
    row = store.match(mid) if 0 < mid < 1 << 62 else None
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


async def me_challenge(site: Site, request: Request) -> Response:
    me = site.sessions.required(request)
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    site.sessions.check_form(request, form)
    answer = await challenge(site, me, str(form.get("bot") or ""), str(form.get("opponent") or ""))
    return RedirectResponse(answer["url"], status_code=303)


def finals_link(mid: str) -> str:
    return f"/finals/matches/{mid}"


async def finals_page(site: Site, request: Request) -> Response:
    if site.finals is None:
        raise HTTPException(404, "no finals have been run")
    return site.page(
        request,
        "finals.html",
        t=site.finals["summary"],
        finals_status=site.finals["status"],
        match_link=finals_link,
    )


async def finals_match(site: Site, request: Request) -> Response:
    mid = request.path_params["mid"]
    if not all(c.isalnum() or c in "-_" for c in mid):
        raise HTTPException(404, "no such finals match")
    found = [
        site.dir / "finals" / "replays" / f"{mid}{suffix}" for suffix in (".jsonl.gz", ".jsonl")
    ]
    path = next((p for p in found if p.is_file()), None)
    if site.finals is None or path is None:
        raise HTTPException(404, "no such finals match")
    path = await public_copy(path, site.dir / "finals" / "public" / path.name)
    html = await trio.to_thread.run_sync(viewer_html, path)
    if html is None:
        return replay_response(path, f"{mid}.jsonl")
    return HTMLResponse(html)


def routes(site: Site) -> list[Route]:
    return [
        route(site, "/", index),
        route(site, "/bots/{name:path}", bot_page),
        route(site, "/matches/{mid}", match_page),
        route(site, "/matches/{mid}/replay.jsonl", match_replay),
        route(site, "/matches/{mid}/viewer", match_viewer),
        route(site, "/me", me_page),
        route(site, "/me/logs/{mid:int}/{seat:int}", me_log),
        route(site, "/me/challenge", me_challenge, methods=["POST"]),
        route(site, "/finals", finals_page),
        route(site, "/finals/matches/{mid}", finals_match),
    ]


# -- helpers -------------------------------------------------------------------


async def replay_for(site: Site, request: Request, row: MatchRow) -> Path:
    """The replay of ``row`` as the requester may read it: as recorded for an owner
    of one of its bots, else its public copy (no stderr, no server paths; made
    once, on the first public request, and kept: a finished replay never changes)."""
    if not row.replay or row.status != "done" or not (site.dir / row.replay).is_file():
        raise HTTPException(404, "this match has no replay (yet)")
    original = site.dir / row.replay
    me = site.sessions.current(request)
    if me is not None:
        for vid in (row.version0, row.version1):
            version = site.store.version(vid)
            if version is not None and version.owner_id == me.id:
                return original
    return await public_copy(original, site.dir / "public" / original.name)


async def public_copy(original: Path, public: Path) -> Path:
    """``public``, written from ``original`` by ``write_public_replay`` if missing."""
    if not public.is_file():
        try:
            await trio.to_thread.run_sync(write_public_replay, original, public)
        except (OSError, ValueError) as exc:
            raise HTTPException(404, f"this match's replay cannot be read: {exc}") from None
    return public


def replay_response(path: Path, filename: str) -> Response:
    """A replay file as stored: a gzip one is sent with ``Content-Encoding: gzip``, so
    a browser or an HTTP client saves the JSON Lines (and ``referee verify`` reads
    either, should a client keep the gzip bytes)."""
    with open(path, "rb") as f:
        packed = f.read(2) == b"\x1f\x8b"
    headers = {"Content-Encoding": "gzip"} if packed else None
    return FileResponse(path, media_type="application/x-ndjson", filename=filename, headers=headers)


def viewer_html(path: Path) -> str | None:
    """The replay's HTML report (any game), or None if the file is no replay."""
    from ..errors import ReplayError
    from ..html_report import render_replay

    try:
        return render_replay(path)
    except ReplayError:
        return None


def rating_plot(history: list[dict[str, Any]], width: int = 600, height: int = 160) -> str:
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
