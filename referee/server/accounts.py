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
    if request.method == "GET":
        return site.page(request, "login.html")
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    competitor = site.store.competitor_by_token(str(form.get("token") or "").strip())
    if competitor is None:
        return site.page(request, "login.html", status=401, error="unknown token")
    return site.sessions.sign_in(RedirectResponse("/me", status_code=303), competitor)


async def logout(site: Site, request: Request) -> Response:
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    site.sessions.check_csrf(request, form)
    return site.sessions.sign_out(request, RedirectResponse("/", status_code=303))


async def signup(site: Site, request: Request) -> Response:
    if site.cfg.registration.mode != "open":
        raise HTTPException(403, "registration is by invitation: ask the organiser for a token")
    if request.method == "GET":
        return site.page(request, "signup.html")
    form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
    name = str(form.get("name") or "").strip()
    problem = name_problem(name, "a name")
    if problem is not None:
        return site.page(request, "signup.html", status=400, error=problem)
    try:
        token = site.store.add_competitor(name)
    except NameTaken as exc:
        return site.page(request, "signup.html", status=409, error=str(exc))
    competitor = site.store.competitor_by_token(token)
    assert competitor is not None
    page = site.page(request, "token.html", name=name, token=token)
    return site.sessions.sign_in(page, competitor)


def routes(site: Site) -> list[Route]:
    return [
        route(site, "/login", login, methods=["GET", "POST"]),
        route(site, "/logout", logout, methods=["POST"]),
        route(site, "/signup", signup, methods=["GET", "POST"]),
    ]
