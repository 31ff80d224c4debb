"""Who is asking, and the rules every request keeps: sessions, CSRF, limits per
client address and the security headers of every response.

- Scripts authenticate with ``Authorization: Bearer TOKEN`` (no cookie: nothing a
  foreign page could make a browser send on its own).
- People sign in with their token once and get a session cookie (HttpOnly,
  SameSite=Strict): a random value whose hash is a row of the ``sessions`` table.
  Signing out deletes the row, and a row past its ``expires`` opens nothing, so an
  old cookie is worthless either way.
- Every form that changes state (sign-in and sign-up included) is checked twice:
  the browser's ``Origin`` (else ``Referer``) must be this server, and the form must
  carry the CSRF token of its page. A signed-in page's token is derived from the
  session; the sign-in and sign-up pages have no session yet, so they set a
  random form cookie and their token is derived from it (a foreign page can
  neither read that cookie nor compute the token).
- Sign-ups and failed sign-ins are limited per client address; every 429 says
  when to come back (``Retry-After``).
- Every response carries a Content-Security-Policy that runs no inline script
  but the replay viewer's own (allowed by its hash), forbids framing (the viewer
  may be framed by this site's match page only), and ``nosniff`` and a
  ``Referrer-Policy``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .config import RegistrationConfig
from .db import Competitor, Store

SESSION_COOKIE = "referee_session"
FORM_COOKIE = "referee_form"
FORM_COOKIE_S = 3600  # the sign-in and sign-up pages' forms stay usable this long
HOUR = 3600.0
_ME = "referee.competitor"  # the request's signed-in competitor, once looked up


def too_many(detail: str, wait_s: float) -> HTTPException:
    """A 429 that says when to come back."""
    return HTTPException(429, detail, headers={"Retry-After": str(max(1, round(wait_s + 0.5)))})


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class Sessions:
    """The sessions, CSRF tokens, bearer tokens and per-address limits of one server."""

    def __init__(self, store: Store, cfg: RegistrationConfig) -> None:
        self.store = store
        self.cfg = cfg
        secret = store.get("secret")
        if secret is None:
            secret = secrets.token_hex(32)
            store.set("secret", secret)
        self.secret = bytes.fromhex(secret)

    def _sign(self, text: str) -> str:
        return hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()

    # -- who is asking -----------------------------------------------------------

    def current(self, request: Request) -> Competitor | None:
        """The competitor signed in by the request's session cookie, if any."""
        if _ME not in request.scope:
            value = request.cookies.get(SESSION_COOKIE, "")
            me = self.store.session_competitor(value) if 0 < len(value) <= 100 else None
            request.scope[_ME] = me
        found: Competitor | None = request.scope[_ME]
        return found

    def required(self, request: Request) -> Competitor:
        """The signed-in competitor of a page that needs one (else a 401)."""
        me = self.current(request)
        if me is None:
            raise HTTPException(401, "sign in first (/login)")
        return me

    def bearer(self, request: Request) -> Competitor:
        """The competitor of the request's ``Authorization: Bearer`` token (else a 401)."""
        auth = request.headers.get("authorization", "")
        if not auth.lower().startswith("bearer "):
            raise HTTPException(401, "an 'Authorization: Bearer TOKEN' header is required")
        competitor = self.store.competitor_by_token(auth[7:].strip())
        if competitor is None:
            raise HTTPException(401, "unknown token")
        return competitor

    # -- CSRF --------------------------------------------------------------------

    def csrf_token(self, request: Request) -> str:
        """The token the forms of this page carry: derived from the session, or for a
        browser not signed in from its form cookie (made now if it has none, and set
        on the response by ``security_headers``)."""
        if self.current(request) is not None:
            return self._sign("csrf:" + request.cookies[SESSION_COOKIE])[:32]
        form_secret = request.cookies.get(FORM_COOKIE, "")
        if not 20 <= len(form_secret) <= 64:
            form_secret = request.scope.setdefault(
                "referee.new_form_cookie", secrets.token_urlsafe(24)
            )
        return self._sign("form:" + form_secret)[:32]

    def check_form(self, request: Request, form: Any) -> None:
        """Refuse (403) a form posted from another site, or without its page's token."""
        if not same_origin(request):
            raise HTTPException(403, "a form posted from another site is refused")
        if self.current(request) is not None:
            expected = self._sign("csrf:" + request.cookies[SESSION_COOKIE])[:32]
        else:
            form_secret = request.cookies.get(FORM_COOKIE, "")
            expected = self._sign("form:" + form_secret)[:32] if form_secret else ""
        given = str(form.get("csrf") or "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page")

    # -- signing in and out --------------------------------------------------------

    def sign_in(self, request: Request, response: Response, competitor: Competitor) -> Response:
        """``response`` with the cookie of a new session of ``competitor``."""
        lifetime = self.cfg.session_days * 86400
        response.set_cookie(
            SESSION_COOKIE,
            self.store.add_session(competitor.id, lifetime),
            max_age=int(lifetime),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    def sign_out(self, request: Request, response: Response) -> Response:
        """``response`` with the session ended on the server and its cookie deleted."""
        value = request.cookies.get(SESSION_COOKIE)
        if value:
            self.store.drop_session(value)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    # -- limits per client address ---------------------------------------------------

    def check_address(self, request: Request, kind: str, limit: int) -> None:
        """A 429 if the client's address has spent its hourly budget of ``kind``."""
        wait = self.store.address_wait(client_address(request), kind, limit, HOUR)
        if wait > 0:
            raise too_many(f"too many {kind}s from your address: at most {limit} an hour", wait)

    def count_address(self, request: Request, kind: str) -> None:
        self.store.note_address(client_address(request), kind, HOUR)


def same_origin(request: Request) -> bool:
    """Whether a browser says the request comes from one of this server's pages: its
    ``Origin`` (else its ``Referer``) names the host the request was sent to. A
    request with neither is no browser's cross-site form (browsers send ``Origin``
    with every cross-site POST); the CSRF token is checked all the same."""
    host = request.headers.get("host", "")
    for header in ("origin", "referer"):
        value = request.headers.get(header)
        if value is None:
            continue
        try:
            parts = urlsplit(value)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and bool(host) and parts.netloc == host
    return True


# -- the headers of every response ---------------------------------------------------


def _script_hash() -> str:
    """The CSP hash of the replay viewer's one inline script, as it is inlined."""
    from ..report_page import asset

    digest = hashlib.sha256(("\n" + asset("report.js") + "\n").encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def content_security_policy(frame_ancestors: str) -> str:
    # Styles: the pages and the viewer have <style> blocks and style attributes, which
    # only 'unsafe-inline' allows (a hash covers no attribute); CSS runs no script.
    return (
        f"default-src 'none'; script-src {_script_hash()}; style-src 'unsafe-inline'; "
        "img-src 'self' data:; frame-src 'self'; form-action 'self'; base-uri 'none'; "
        f"frame-ancestors {frame_ancestors}"
    )


def security_headers(app: Any) -> Any:
    """``app`` with the security headers added to every response it sends, and the
    form cookie that ``Sessions.csrf_token`` made set."""
    page_policy = content_security_policy("'none'").encode()
    viewer_policy = content_security_policy("'self'").encode()

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                # The replay viewer alone may be framed, by this site's match page.
                viewer = scope["path"].endswith("/viewer") or scope["path"].startswith(
                    "/finals/matches/"
                )
                if b"content-security-policy" not in names:
                    headers.append(
                        (b"content-security-policy", viewer_policy if viewer else page_policy)
                    )
                headers.append((b"x-frame-options", b"SAMEORIGIN" if viewer else b"DENY"))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"same-origin"))
                if message["status"] == 429 and b"retry-after" not in names:
                    headers.append((b"retry-after", b"60"))  # every 429 says when
                fresh = scope.get("referee.new_form_cookie")
                if fresh:
                    headers.append(
                        (
                            b"set-cookie",
                            f"{FORM_COOKIE}={fresh}; Max-Age={FORM_COOKIE_S}; Path=/; "
                            "HttpOnly; SameSite=strict".encode(),
                        )
                    )
                if b"set-cookie" in names or fresh:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped
