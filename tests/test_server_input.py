"""Never a 500 on input: Hypothesis drives every route of the competition server
(in-process: the real application, store and ladder) with odd paths, ids, query
values, forms and bodies, signed in and not, and no answer is a 5xx nor an
exception out of the application. Names keep to the documented safe set, and
the data directory is its owner's only."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inprocess import ORIGIN, InProcess, config, csrf_of, sign_up

from referee.server.names import name_problem
from referee.tournament.executor import MatchFailed


class NoMatches:
    """An executor that plays nothing: a validation match fails to start (the
    upload is refused with the reason), as when every worker is gone."""

    async def submit(self, job: Any) -> Any:
        raise MatchFailed("no matches are played in this test")

    async def aclose(self) -> None:
        pass


ROUTES = [
    ("GET", "/"),
    ("GET", "/bots/{name}"),
    ("GET", "/matches/{id}"),
    ("GET", "/matches/{id}/replay.jsonl"),
    ("GET", "/matches/{id}/viewer"),
    ("GET", "/login"),
    ("POST", "/login"),
    ("POST", "/logout"),
    ("GET", "/signup"),
    ("POST", "/signup"),
    ("GET", "/me"),
    ("GET", "/me/logs/{id}/{seat}"),
    ("POST", "/me/upload"),
    ("POST", "/me/challenge"),
    ("GET", "/finals"),
    ("GET", "/finals/matches/{name}"),
    ("GET", "/api/health"),
    ("GET", "/api/leaderboard"),
    ("GET", "/api/matches"),
    ("GET", "/api/matches/{id}"),
    ("GET", "/api/bots/{name}"),
    ("POST", "/api/submit"),
    ("POST", "/api/challenge"),
    ("GET", "/api/finals"),
    ("GET", "/{name}"),
    ("PUT", "/api/submit"),
    ("DELETE", "/me"),
]

odd_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30
) | st.sampled_from(["..", ".", "%2e%2e", "%00", "a/b", "\u202e", "-1", "0", " ", "%"])
ids = (
    st.integers(-(10**25), 10**25).map(str)
    | st.sampled_from(["1", "2", "3", "99999999999999999999", "1e3", "0x10", "١"])
    | odd_text
)
query_keys = st.sampled_from(
    ["limit", "kind", "status", "name", "filename", "command", "x", "limit[]"]
)
query_values = ids | st.sampled_from(["validation", "ladder", "done", "bot.tar.gz", ""])
form_keys = st.sampled_from(["name", "token", "csrf", "bot", "opponent", "command", "file", "z"])


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """One odd request's parts; it is sent to every route (see ``ROUTES``)."""
    # Percent-encoded as a client must send them (the server decodes them again);
    # "." and ".." raw too, as path steps.
    encode = draw(st.sampled_from([lambda x: quote(x, safe=""), lambda x: quote(x, safe="./")]))
    request: dict[str, Any] = {
        "name": encode(draw(odd_text)),
        "id": encode(draw(ids)),
        "seat": draw(st.sampled_from(["0", "1", "2", "-1", "00", "99999999999999999999"])),
        "params": draw(st.dictionaries(query_keys, query_values, max_size=3)),
        "signed_in": draw(st.booleans()),
        "bearer": draw(st.booleans()),
        "real_csrf": draw(st.booleans()),
    }
    body = draw(st.sampled_from(["form", "multipart", "json", "bytes", "none"]))
    if body == "form":
        request["data"] = draw(st.dictionaries(form_keys, odd_text, max_size=4))
    elif body == "multipart":
        request["data"] = draw(st.dictionaries(form_keys, odd_text, max_size=3))
        request["files"] = {draw(form_keys): (draw(odd_text) or "f", draw(st.binary(max_size=64)))}
    elif body == "json":
        request["json"] = draw(
            st.recursive(
                st.none() | st.booleans() | st.integers() | odd_text,
                lambda inner: (
                    st.lists(inner, max_size=3) | st.dictionaries(form_keys, inner, max_size=3)
                ),
                max_leaves=6,
            )
        )
    elif body == "bytes":
        request["content"] = draw(st.binary(max_size=200))
    return request


def test_no_request_gets_a_5xx(tmp_path: Path) -> None:
    server = InProcess(config(tmp_path), tmp_path / "data", NoMatches())
    owner = server.store.add_competitor("owner")
    state: dict[str, Any] = {}

    async def setup() -> None:
        await server.ladder.refresh()
        async with server.client() as browser:
            await sign_up(browser, "browser")
            page = await browser.get("/me")
            state["cookies"] = dict(browser.cookies)
            state["csrf"] = csrf_of(page.text)

    trio.run(setup)

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(requests())
    def check(request: dict[str, Any]) -> None:
        headers = {"origin": ORIGIN}
        if request.pop("bearer"):
            headers["authorization"] = f"Bearer {owner}"
        cookies = state["cookies"] if request.pop("signed_in") else None
        if request.pop("real_csrf") and isinstance(request.get("data"), dict):
            request["data"]["csrf"] = state["csrf"]
        parts = {k: request.pop(k) for k in ("name", "id", "seat")}

        async def main() -> None:
            # raise_app_exceptions (the default): an exception out of the
            # application fails the test here, as a traceback in the server's log.
            transport = httpx.ASGITransport(app=server.app)
            async with httpx.AsyncClient(
                transport=transport, base_url=ORIGIN, cookies=cookies, headers=headers
            ) as client:
                for method, template in ROUTES:
                    url = template.format(**parts)
                    response = await client.request(method, url, **request)
                    assert response.status_code < 500, (method, url, request, response.text)

        trio.run(main)

    check()
    server.close()


def test_the_20_digit_log_id_is_a_404_not_a_500(tmp_path: Path) -> None:
    """Found at 443f509: /me/logs/<20 digits>/0 overflowed SQLite's integer."""
    server = InProcess(config(tmp_path), tmp_path / "data")

    async def main() -> None:
        async with server.client() as browser:
            await sign_up(browser, "reader")
            r = await browser.get("/me/logs/99999999999999999999/0")
            assert r.status_code == 404

    trio.run(main)
    server.close()


@pytest.mark.parametrize(
    "name",
    ["..", ".", "...", "x/y", "/etc", "a\\b", "a?b", "a#b", "a%2e", "\u202egnp.exe", "a\u200db"]
    + ["tab\there", "nl\n", "\x00", " lead", "trail ", "", "x" * 65],
)
def test_unsafe_names_are_refused(tmp_path: Path, name: str) -> None:
    assert name_problem(name, "a bot name") is not None


@pytest.mark.parametrize("name", ["py-bot", "<b>olga<b>", "Ölçü 2", "bot_v1.2", "李", "x" * 64])
def test_safe_names_are_taken(name: str) -> None:
    assert name_problem(name, "a bot name") is None


def test_unsafe_names_are_refused_by_the_server(tmp_path: Path) -> None:
    server = InProcess(config(tmp_path), tmp_path / "data", NoMatches())
    token = server.store.add_competitor("namer")

    async def main() -> None:
        async with server.client(headers={"authorization": f"Bearer {token}"}) as script:
            for name in ("..", "x/y", "a\u202eb"):
                r = await script.post("/api/submit", params={"name": name}, content=b"x")
                assert r.status_code == 400, (name, r.text)
        async with server.client() as browser:
            form = await browser.get("/signup")
            r = await browser.post("/signup", data={"name": "..", "csrf": csrf_of(form.text)})
            assert r.status_code == 400

    trio.run(main)
    assert server.store.bot_id("..") is None and server.store.competitor_by_name("..") is None
    server.close()


def test_the_data_directory_is_its_owners_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = InProcess(config(tmp_path), data)
    server.store.add_competitor("someone")  # a write: the WAL exists now
    mode = {p.name: stat.S_IMODE(p.stat().st_mode) for p in data.iterdir()}
    assert stat.S_IMODE(data.stat().st_mode) == 0o711  # the bots' uids pass through
    for name in ("server.sqlite", "server.sqlite-wal", "server.sqlite-shm"):
        assert mode[name] == 0o600, (name, oct(mode[name]))
    for name in ("logs", "replays", "public", "finals"):
        assert mode[name] == 0o700, (name, oct(mode[name]))
    assert mode["versions"] == 0o711
    server.close()
