"""Sessions, CSRF, limits and headers of the competition server, in-process (the
real application on a data directory of its own, through httpx's ASGI
transport): login CSRF from a foreign page is refused, sign-out and expiry end a
session on the server, sign-ups and failed sign-ins are limited per address with
a Retry-After, and every response carries the security headers."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
from inprocess import ORIGIN, InProcess, config, csrf_of, run, sign_up


def test_a_foreign_page_cannot_sign_a_visitor_in_or_up(tmp_path: Path) -> None:
    """Login CSRF: an attacker's page posting the attacker's token (or a sign-up) to
    /login from the victim's browser. The browser sends the foreign Origin and has
    no form token of this server's page."""
    server = InProcess(config(tmp_path), tmp_path / "data")
    attacker_token = server.store.add_competitor("attacker")

    async def main() -> None:
        async with server.client() as victim:
            evil = {"origin": "https://evil.example"}
            r = await victim.post("/login", data={"token": attacker_token}, headers=evil)
            assert r.status_code == 403 and "another site" in r.text
            r = await victim.post("/signup", data={"name": "planted"}, headers=evil)
            assert r.status_code == 403
            # A referer from elsewhere (no Origin) is as foreign.
            r = await victim.post(
                "/login",
                data={"token": attacker_token},
                headers={"referer": "https://evil.example/page"},
            )
            assert r.status_code == 403
            # Same origin, but without the page's token (no Origin at all: a
            # non-browser client): still refused.
            r = await victim.post("/login", data={"token": attacker_token})
            assert r.status_code == 403 and "CSRF" in r.text
            r = await victim.post("/signup", data={"name": "planted", "csrf": "0" * 32})
            assert r.status_code == 403
            assert "referee_session" not in victim.cookies
            assert (await victim.get("/me", follow_redirects=False)).status_code == 303
            # The form as this server's page gives it works.
            page = await victim.get("/login")
            r = await victim.post(
                "/login",
                data={"token": attacker_token, "csrf": csrf_of(page.text)},
                headers={"origin": ORIGIN},
                follow_redirects=False,
            )
            assert r.status_code == 303

    run(main)
    assert server.store.competitor_by_name("planted") is None
    server.close()


def test_sign_out_and_expiry_end_the_session_on_the_server(tmp_path: Path) -> None:
    server = InProcess(config(tmp_path), tmp_path / "data")

    async def main() -> None:
        async with server.client() as browser:
            await sign_up(browser, "alice")
            me = await browser.get("/me")
            assert me.status_code == 200 and "alice" in me.text
            stolen = browser.cookies["referee_session"]
            r = await browser.post(
                "/logout", data={"csrf": csrf_of(me.text)}, follow_redirects=False
            )
            assert r.status_code == 303
        async with server.client(cookies={"referee_session": stolen}) as thief:
            assert (await thief.get("/me", follow_redirects=False)).status_code == 303
        # A session past its expiry opens nothing either.
        async with server.client() as browser:
            page = await browser.get("/login")
            token = server.store.add_competitor("bob")
            r = await browser.post(
                "/login",
                data={"token": token, "csrf": csrf_of(page.text)},
                follow_redirects=False,
            )
            assert r.status_code == 303
            assert (await browser.get("/me")).status_code == 200
            server.store.conn.execute("UPDATE sessions SET expires = ?", (time.time() - 1,))
            assert (await browser.get("/me", follow_redirects=False)).status_code == 303

    run(main)
    server.close()


def test_sign_ups_and_failed_sign_ins_are_limited_per_address(tmp_path: Path) -> None:
    cfg = config(tmp_path, signups_per_hour=3, failed_signins_per_hour=4)
    server = InProcess(cfg, tmp_path / "data")

    async def main() -> None:
        async with server.client() as browser:
            for i in range(3):
                await sign_up(browser, f"user{i}")
                browser.cookies.clear()
            form = await browser.get("/signup")
            r = await browser.post("/signup", data={"name": "one-more", "csrf": csrf_of(form.text)})
            assert r.status_code == 429, r.text
            assert 3000 < int(r.headers["retry-after"]) <= 3600
            for _ in range(4):
                form = await browser.get("/login")
                r = await browser.post("/login", data={"token": "rt_x", "csrf": csrf_of(form.text)})
                assert r.status_code == 401
            real = server.store.add_competitor("real")
            form = await browser.get("/login")
            r = await browser.post("/login", data={"token": real, "csrf": csrf_of(form.text)})
            assert r.status_code == 429 and int(r.headers["retry-after"]) > 3000
        # Another address is not held back.
        other = httpx.ASGITransport(app=server.app, client=("192.0.2.7", 1234))
        async with httpx.AsyncClient(transport=other, base_url=ORIGIN) as elsewhere:
            await sign_up(elsewhere, "elsewhere")

    run(main)
    assert server.store.competitor_by_name("one-more") is None
    server.close()


def test_every_429_says_when_to_come_back(tmp_path: Path) -> None:
    """The upload and challenge limits per competitor too."""
    cfg = config(tmp_path)
    server = InProcess(cfg, tmp_path / "data")
    token = server.store.add_competitor("eager")
    me = server.store.competitor_by_token(token)
    assert me is not None
    for _ in range(cfg.submissions.per_hour):
        assert server.store.note_request(me.id, "upload", cfg.submissions.per_hour, 3600)
    bot = server.store.add_version("eager-bot", me.id, "sample:x", ["x"], "active")
    for _ in range(cfg.submissions.challenges_per_hour):
        assert server.store.note_request(me.id, "challenge", 99, 3600)

    async def main() -> None:
        await server.ladder.refresh()
        async with server.client(headers={"authorization": f"Bearer {token}"}) as script:
            r = await script.post("/api/submit", params={"name": "eager-bot"}, content=b"x")
            assert r.status_code == 429 and 3000 < int(r.headers["retry-after"]) <= 3600
            r = await script.post(
                "/api/challenge", json={"bot": bot.bot_name, "opponent": "random"}
            )
            assert r.status_code == 429 and 3000 < int(r.headers["retry-after"]) <= 3600

    run(main)
    server.close()


def test_every_response_carries_the_security_headers(tmp_path: Path) -> None:
    server = InProcess(config(tmp_path), tmp_path / "data")

    async def main() -> None:
        await server.ladder.refresh()
        async with server.client() as browser:
            for path in ("/", "/", "/login", "/api/leaderboard", "/no/such/page", "/bots/x"):
                r = await browser.get(path)
                csp = r.headers["content-security-policy"]
                assert "frame-ancestors 'none'" in csp, path
                assert (
                    "script-src 'sha256-" in csp
                    and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
                )
                assert "default-src 'none'" in csp
                assert r.headers["x-content-type-options"] == "nosniff"
                assert r.headers["referrer-policy"] == "same-origin"
                assert r.headers["x-frame-options"] == "DENY"

    run(main)
    # No template has a script of its own (the only inline script is the replay
    # viewer's, allowed by its hash: see test_server_privacy), nor an event handler.
    env = server.site.env
    assert env.loader is not None
    for name in env.list_templates():
        source = env.loader.get_source(env, name)[0]
        assert "<script" not in source and not re.search(r"\son[a-z]+\s*=", source), name
    server.close()
