"""The JSON API (``/api/...``) and the data the pages are made of: the
leaderboard, matches and bots as the public may see them, and challenges."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..replay_public import without_paths
from .context import HOUR, Site, cached, route
from .db import Competitor, MatchRow
from .sessions import too_many
from .uploads import read_body


def leaderboard_json(site: Site) -> dict[str, Any]:
    ladder = site.ladder
    return {
        "name": site.cfg.name,
        "game": site.cfg.game,
        "frozen": ladder.frozen,
        "finals": site.finals["status"] if site.finals else None,
        "entries": [msgspec.to_builtins(e) for e in ladder.leaderboard],
        "matches": ladder.counts(),
    }


def public_outcome(outcome: dict[str, Any] | None) -> dict[str, Any] | None:
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


def query_limit(request: Request, default: int = 50) -> int:
    text = request.query_params.get("limit", str(default))
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise HTTPException(400, "limit must be a whole number from 1 to 1000")
    return int(text)


def find_match(site: Site, request: Request) -> MatchRow:
    """The match of the path's ``mid`` that the requester may see (else a 404)."""
    text = request.path_params["mid"]
    row = site.store.match(int(text)) if text.isdigit() and len(text) < 12 else None
    if row is None:
        raise HTTPException(404, f"no match {text}")
    if row.kind == "validation":
        # A validation match shows a new version's failures: its owner's only.
        me = site.sessions.current(request)
        version = site.store.version(row.version0)
        if me is None or version is None or version.owner_id != me.id:
            raise HTTPException(404, f"no match {text}")
    return row


def find_bot(site: Site, request: Request) -> tuple[int, str, str | None]:
    found = site.store.bot_by_name(request.path_params["name"])
    if found is None:
        raise HTTPException(404, f"no bot {request.path_params['name']!r}")
    return found


def bot_data(site: Site, found: tuple[int, str, str | None]) -> dict[str, Any]:
    store = site.store
    bot_id, name, owner = found
    versions = store.versions_of(bot_id)
    ids = [v.id for v in versions]
    rows = store.matches(versions=ids, limit=30)
    rows = [r for r in rows if r.kind != "validation"]
    names = site.versions_of_rows(rows)
    entry = next((e for e in site.ladder.leaderboard if e.bot == name), None)
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


async def challenge(site: Site, competitor: Competitor, bot: str, opponent: str) -> dict[str, Any]:
    """Queue an unranked match of the competitor's ``bot`` against ``opponent``."""
    store = site.store
    mine = store.bot_by_name(bot)
    if mine is None or mine[2] != competitor.name:
        raise HTTPException(403, f"{bot!r} is not one of your bots")
    current = {v.bot_name: v for v in store.current_versions()}
    if bot not in current:
        raise HTTPException(409, f"{bot!r} has no validated version yet")
    if opponent not in current:
        raise HTTPException(404, f"no bot {opponent!r} on the ladder")
    limit = site.cfg.submissions.challenges_per_hour
    if not store.note_request(competitor.id, "challenge", limit, HOUR):
        wait = store.request_wait(competitor.id, "challenge", limit, HOUR)
        raise too_many(f"challenge limit reached: {limit} per hour", wait)
    mid = store.add_match(
        "challenge",
        current[bot].id,
        current[opponent].id,
        0,
        site.cfg.ladder.rounds,
        requested_by=competitor.id,
        status="queued",
    )
    site.ladder._wake()
    return {"match": mid, "status": "queued", "url": f"/matches/{mid}"}


# -- the routes ----------------------------------------------------------------


async def health(site: Site, request: Request) -> Response:
    return JSONResponse({"ok": True, "matches": site.ladder.counts()})


@cached
async def api_leaderboard(site: Site, request: Request) -> Response:
    return JSONResponse(leaderboard_json(site))


@cached
async def api_matches(site: Site, request: Request) -> Response:
    kind = request.query_params.get("kind")
    status = request.query_params.get("status")
    if kind == "validation":
        raise HTTPException(403, "validation matches are shown to their bot's owner only")
    rows = site.store.matches(kind=kind, status=status, limit=query_limit(request), public=True)
    names = site.versions_of_rows(rows)
    return JSONResponse([site.match_json(r, names) for r in rows])


@cached
async def api_match(site: Site, request: Request) -> Response:
    row = find_match(site, request)
    names = site.versions_of_rows([row])
    out = site.match_json(row, names)
    out["outcome"] = public_outcome(site.store.match_outcome(row.id))
    return JSONResponse(out)


@cached
async def api_bot(site: Site, request: Request) -> Response:
    return JSONResponse(bot_data(site, find_bot(site, request)))


async def api_challenge(site: Site, request: Request) -> Response:
    competitor = site.sessions.bearer(request)
    try:
        body = json.loads(await read_body(request, 4096) or b"{}")
    except ValueError:
        raise HTTPException(400, 'the body must be JSON: {"bot": ..., "opponent": ...}') from None
    if not isinstance(body, dict):
        raise HTTPException(400, "the body must be a JSON object")
    answer = await challenge(
        site, competitor, str(body.get("bot", "")), str(body.get("opponent", ""))
    )
    return JSONResponse(answer, status_code=202)


async def api_finals(site: Site, request: Request) -> Response:
    if site.finals is None:
        raise HTTPException(404, "no finals have been run")
    return JSONResponse(without_paths(site.finals))


def routes(site: Site) -> list[Route]:
    return [
        route(site, "/api/health", health),
        route(site, "/api/leaderboard", api_leaderboard),
        route(site, "/api/matches", api_matches),
        route(site, "/api/matches/{mid}", api_match),
        route(site, "/api/bots/{name:path}", api_bot),
        route(site, "/api/challenge", api_challenge, methods=["POST"]),
        route(site, "/api/finals", api_finals),
    ]
