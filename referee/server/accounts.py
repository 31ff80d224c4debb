"""The pages that sign a competitor up, in and out (the rules they keep are in
``sessions``)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from .context import Site, route
from .db import NameTaken
from .names import name_problem


async def login(site: Site, request: Request) -> Response:
    sessions = site.sessions
    if request.method == "GET":
        return site.page(request, "login.html", csrf=sessions.csrf_token(request))
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    sessions.check_form(request, form)
    limit = site.cfg.registration.failed_signins_per_hour
    sessions.check_address(request, "failed sign-in", limit)
    competitor = site.store.competitor_by_token(str(form.get("token") or "").strip())
    if competitor is None:
        sessions.count_address(request, "failed sign-in")
        return site.page(
            request,
            "login.html",
            status=401,
            error="unknown token",
            csrf=sessions.csrf_token(request),
        )
    if sessions.current(request) is not None:  # a session already open ends here
        sessions.sign_out(request, Response())
    return sessions.sign_in(request, RedirectResponse("/me", status_code=303), competitor)


async def logout(site: Site, request: Request) -> Response:
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    site.sessions.check_form(request, form)
    return site.sessions.sign_out(request, RedirectResponse("/", status_code=303))


async def signup(site: Site, request: Request) -> Response:
    sessions = site.sessions
    if site.cfg.registration.mode != "open":
        raise HTTPException(403, "registration is by invitation: ask the organiser for a token")
    if request.method == "GET":
        return site.page(request, "signup.html", csrf=sessions.csrf_token(request))
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    sessions.check_form(request, form)
    sessions.check_address(request, "sign-up", site.cfg.registration.signups_per_hour)
    name = str(form.get("name") or "").strip()
    problem = name_problem(name, "a name")
    if problem is not None:
        return site.page(
            request, "signup.html", status=400, error=problem, csrf=sessions.csrf_token(request)
        )
    try:
        token = site.store.add_competitor(name)
    except NameTaken as exc:
        return site.page(
            request, "signup.html", status=409, error=str(exc), csrf=sessions.csrf_token(request)
        )
    sessions.count_address(request, "sign-up")
    competitor = site.store.competitor_by_token(token)
    assert competitor is not None
    page = site.page(request, "token.html", name=name, token=token)
    return sessions.sign_in(request, page, competitor)


def routes(site: Site) -> list[Route]:
    return [
        route(site, "/login", login, methods=["GET", "POST"]),
        route(site, "/logout", logout, methods=["POST"]),
        route(site, "/signup", signup, methods=["GET", "POST"]),
    ]
