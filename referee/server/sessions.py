"""Who is asking: session cookies, CSRF tokens and bearer tokens.

Scripts authenticate with ``Authorization: Bearer TOKEN``; people sign in with
their token once and get a session cookie (HttpOnly, SameSite=Strict, signed by a
secret kept in the database), and every form that changes state carries a CSRF
token derived from that session. The pages that sign a competitor up, in and out
are in ``accounts``."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .db import Competitor, Store

SESSION_COOKIE = "referee_session"
SESSION_DAYS = 30


class Sessions:
    """The session cookies, CSRF tokens and bearer tokens of one server."""

    def __init__(self, store: Store) -> None:
        self.store = store
        secret = store.get("secret")
        if secret is None:
            secret = secrets.token_hex(32)
            store.set("secret", secret)
        self.secret = bytes.fromhex(secret)

    def _sign(self, text: str) -> str:
        return hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()

    def _value(self, competitor: Competitor) -> str:
        body = f"{competitor.id}.{int(time.time())}"
        return f"{body}.{self._sign(body)}"

    def current(self, request: Request) -> Competitor | None:
        """The competitor signed in by the request's session cookie, if any."""
        value = request.cookies.get(SESSION_COOKIE, "")
        parts = value.split(".")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            return None
        body = f"{parts[0]}.{parts[1]}"
        if not hmac.compare_digest(self._sign(body), parts[2]):
            return None
        if time.time() - int(parts[1]) > SESSION_DAYS * 86400:
            return None
        return self.store.competitor(int(parts[0]))

    def required(self, request: Request) -> Competitor:
        """The signed-in competitor of a page that needs one (else a 401)."""
        me = self.current(request)
        if me is None:
            raise HTTPException(401, "sign in first (/login)")
        return me

    def csrf_token(self, request: Request) -> str:
        return self._sign("csrf:" + request.cookies.get(SESSION_COOKIE, ""))[:32]

    def check_csrf(self, request: Request, form: Any) -> None:
        given = str(form.get("csrf") or "")
        if not hmac.compare_digest(given, self.csrf_token(request)):
            raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page")

    def bearer(self, request: Request) -> Competitor:
        """The competitor of the request's ``Authorization: Bearer`` token (else a 401)."""
        auth = request.headers.get("authorization", "")
        if not auth.lower().startswith("bearer "):
            raise HTTPException(401, "an 'Authorization: Bearer TOKEN' header is required")
        competitor = self.store.competitor_by_token(auth[7:].strip())
        if competitor is None:
            raise HTTPException(401, "unknown token")
        return competitor

    def sign_in(self, response: Response, competitor: Competitor) -> Response:
        """``response`` with the cookie that signs ``competitor`` in."""
        response.set_cookie(
            SESSION_COOKIE,
            self._value(competitor),
            max_age=SESSION_DAYS * 86400,
            httponly=True,
            samesite="strict",
            secure=False,
            path="/",
        )
        return response

    def sign_out(self, request: Request, response: Response) -> Response:
        """``response`` with the session cookie deleted."""
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response
