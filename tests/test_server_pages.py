"""The server's pages over HTTP (sign-up, sign-in cookies, CSRF, the competitor's
own stderr logs, match pages with the replay viewer, challenge matches), and a
real headless chromium that signs up, uploads a bot through the form and watches
one of its matches in the replay viewer."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import needs
from serverkit import SAMPLES, Server, wait_for, write_config

NOISY_BOT = """\
import json, sys
print("<script>alert('stderr')</script> starting up", file=sys.stderr, flush=True)
hello = json.loads(sys.stdin.readline())
moves = hello["params"]["moves"]
print(json.dumps({"name": "noisy", "version": "1"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") != "turn":
        break
    print(json.dumps({"round": msg["round"], "real_move": moves[msg["round"] % len(moves)]}),
          flush=True)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("pages")
    srv = Server(write_config(base, mode="open", parallel=2), base / "data")
    try:
        yield srv
    finally:
        srv.stop()


def sign_up(server: Server, name: str) -> tuple[httpx.Client, str]:
    """A browser-like client signed up through the form; (client, token)."""
    client = httpx.Client(base_url=server.url, timeout=60.0)
    r = client.post("/signup", data={"name": name})
    assert r.status_code == 200, r.text
    token = re.search(r'<pre id="token">([^<]+)</pre>', r.text)
    assert token is not None
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    return client, token[1]


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found is not None
    return found[1]


@pytest.fixture(scope="module")
def owner(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A competitor who uploaded the noisy bot through the form."""
    client, token = sign_up(server, "<b>olga</b>")
    me = client.get("/me")
    assert me.status_code == 200
    assert "&lt;b&gt;olga&lt;/b&gt;" in me.text and "<b>olga</b>" not in me.text
    r = client.post(
        "/me/upload",
        data={"name": "noisy", "csrf": csrf_of(me.text)},
        files={"file": ("noisy.py", NOISY_BOT.encode())},
    )
    assert r.status_code == 200, r.text
    assert "accepted, version 1" in r.text
    return {"client": client, "token": token, "csrf": csrf_of(me.text)}


def noisy_match(server: Server) -> dict:
    def find() -> dict | None:
        for m in server.json("/api/matches?kind=ladder&status=done&limit=200"):
            if "noisy" in (m["bot0"], m["bot1"]):
                return dict(m)
        return None

    return dict(wait_for(find, 180, "a ladder match of the noisy bot"))


def test_forms_need_the_csrf_token(server: Server, owner: dict) -> None:
    client = owner["client"]
    r = client.post("/me/upload", data={"name": "x"}, files={"file": ("x.py", b"print(1)\n")})
    assert r.status_code == 403 and "CSRF" in r.text
    r = client.post("/me/challenge", data={"bot": "noisy", "opponent": "random", "csrf": "0" * 32})
    assert r.status_code == 403
    assert client.post("/logout", data={}).status_code == 403
    # Without the session cookie the same forms ask to sign in.
    anonymous = httpx.Client(base_url=server.url)
    r = anonymous.post("/me/upload", data={"csrf": owner["csrf"]}, files={"file": ("x.py", b"")})
    assert r.status_code == 401


def test_stderr_logs_are_the_owners_only_and_escaped(server: Server, owner: dict) -> None:
    m = noisy_match(server)
    seat = 0 if m["bot0"] == "noisy" else 1
    path = f"/me/logs/{m['id']}/{seat}"
    r = owner["client"].get(path)
    assert r.status_code == 200
    assert "&lt;script&gt;alert(&#39;stderr&#39;)&lt;/script&gt; starting up" in r.text
    assert "<script>alert(" not in r.text
    # The opponent's seat is a sample bot: not this competitor's log.
    assert owner["client"].get(f"/me/logs/{m['id']}/{1 - seat}").status_code == 403
    other, _token = sign_up(server, "peter")
    assert other.get(path).status_code == 403
    assert httpx.get(server.url + path).status_code == 401
    public = server.json(f"/api/matches/{m['id']}")
    assert "alert" not in str(public)
    page = server.get(f"/matches/{m['id']}").text
    assert "alert" not in page


def test_match_page_viewer_and_replay_download(server: Server, owner: dict) -> None:
    m = noisy_match(server)
    page = server.get(f"/matches/{m['id']}")
    assert page.status_code == 200
    assert 'id="verify" class="ok">OK: 200 rounds, chain intact' in page.text
    assert f'src="/matches/{m["id"]}/viewer"' in page.text
    viewer = server.get(f"/matches/{m['id']}/viewer")
    assert viewer.status_code == 200 and 'id="replay-data"' in viewer.text
    replay = server.get(f"/matches/{m['id']}/replay.jsonl")
    assert replay.status_code == 200
    assert replay.text.startswith('{"type":"header"') or '"header"' in replay.text.split("\n")[0]
    assert server.get("/matches/999999").status_code == 404
    assert server.get("/matches/999999/replay.jsonl").status_code == 404


def test_challenge_is_unranked(server: Server, owner: dict) -> None:
    client = owner["client"]
    r = client.post(
        "/me/challenge",
        data={"bot": "noisy", "opponent": "cycler", "csrf": owner["csrf"]},
        follow_redirects=False,
    )
    assert r.status_code == 303
    mid = int(r.headers["location"].rsplit("/", 1)[1])
    done = wait_for(
        lambda: (m := server.json(f"/api/matches/{mid}"))["status"] == "done" and m,
        180,
        "the challenge match",
    )
    assert done["kind"] == "challenge" and done["steps"] == 200
    assert "challenge" in client.get("/me").text

    # Ratings count ladder matches only.
    def settled() -> bool:
        board = server.json("/api/leaderboard")
        ladder = board["matches"].get("ladder.done", 0)
        return sum(e["games"] for e in board["entries"]) == 2 * ladder

    wait_for(settled, 60, "the leaderboard to count the ladder matches")
    # Someone else's bot cannot be entered in a challenge.
    r = client.post(
        "/me/challenge",
        data={"bot": "cycler", "opponent": "noisy", "csrf": owner["csrf"]},
    )
    assert r.status_code == 403


def test_public_pages_are_kept_but_never_a_signed_in_one(server: Server, owner: dict) -> None:
    for path in ("/", "/api/leaderboard", "/bots/noisy", "/api/matches?limit=5"):
        first = server.get(path)
        assert first.status_code == 200 and first.headers["etag"], path
        again = server.get(path, headers={"If-None-Match": first.headers["etag"]})
        # 304 unless the ladder moved on in between; then the page is made again.
        assert again.status_code == 304 or again.headers["etag"] != first.headers["etag"]
        assert server.get(path, headers={"If-None-Match": '"stale"'}).status_code == 200
    # The signed-in page names its competitor and carries the CSRF token ...
    mine = owner["client"].get("/")
    assert 'name="csrf"' in mine.text and 'href="/me"' in mine.text
    # ... and is never what an anonymous reader is sent, nor kept for them.
    assert 'name="csrf"' not in server.get("/").text
    assert 'name="csrf"' in owner["client"].get("/").text


def test_sign_in_with_a_token_and_out(server: Server, owner: dict) -> None:
    client = httpx.Client(base_url=server.url)
    assert client.get("/me", follow_redirects=False).status_code == 303
    assert client.post("/login", data={"token": "rt_wrong"}).status_code == 401
    r = client.post("/login", data={"token": owner["token"]}, follow_redirects=False)
    assert r.status_code == 303
    me = client.get("/me")
    assert "noisy" in me.text
    out = client.post("/logout", data={"csrf": csrf_of(me.text)}, follow_redirects=False)
    assert out.status_code == 303
    assert client.get("/me", follow_redirects=False).status_code == 303
    # A forged cookie is no session.
    client.cookies.set("referee_session", "1.1700000000.deadbeef")
    assert client.get("/me", follow_redirects=False).status_code == 303


# -- a real browser ---------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@needs(
    CHROMIUM is None or CHROMEDRIVER is None,
    "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
)
def test_browser_signs_up_uploads_and_watches_a_replay(server: Server, tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    wait = WebDriverWait(driver, 120)
    try:
        driver.get(server.url + "/signup")
        driver.find_element(By.NAME, "name").send_keys("browser-user")
        driver.find_element(By.CSS_SELECTOR, "form[action='/signup'] button").click()
        assert driver.find_element(By.ID, "token").text.startswith("rt_")
        driver.get(server.url + "/me")
        bot = tmp_path / "cbot"
        bot.write_bytes((SAMPLES / "bin" / "cycler_c").read_bytes())
        form = driver.find_element(By.ID, "upload")
        form.find_element(By.NAME, "name").send_keys("browser-bot")
        form.find_element(By.NAME, "file").send_keys(str(bot))
        form.find_element(By.CSS_SELECTOR, "button").click()
        answer = wait.until(lambda d: d.find_element(By.ID, "answer"))
        assert "accepted, version 1" in answer.text
        driver.get(server.url + "/")
        link = driver.find_element(By.CSS_SELECTOR, "#leaderboard a[href='/bots/browser-bot']")
        assert link.text == "browser-bot"

        def browser_bot_match() -> int | None:
            for m in server.json("/api/matches?kind=ladder&status=done&limit=200"):
                if "browser-bot" in (m["bot0"], m["bot1"]):
                    return int(m["id"])
            return None

        mid = wait_for(browser_bot_match, 180, "a ladder match of browser-bot")
        link.click()
        driver.find_element(By.CSS_SELECTOR, f"a[href='/matches/{mid}']").click()
        assert "OK:" in driver.find_element(By.ID, "verify").text
        driver.switch_to.frame(driver.find_element(By.ID, "viewer"))
        status = wait.until(
            lambda d: (
                (s := d.find_element(By.ID, "status")).get_attribute("data-ready") == "yes" and s
            )
        )
        assert status.get_attribute("data-error") is None
        assert status.get_attribute("data-rounds") == "200"
        ink = dict(item.split(":") for item in status.get_attribute("data-ink").split(","))
        assert ink and all(int(v) > 500 for v in ink.values()), ink
    finally:
        driver.quit()
