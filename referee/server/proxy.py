"""The visitor's address and scheme behind a reverse proxy (``--trust-proxy``).

hypercorn hands the application the TCP peer as the client and the scheme it
listens with; it reads no X-Forwarded-* header. Behind a TLS-terminating proxy
every visitor would then be the proxy (one address for every per-address limit)
and every request plain http. The proxy says who and how in X-Forwarded-For and
X-Forwarded-Proto, but anyone can send those headers: they are believed only from
the addresses given to ``--trust-proxy``, and only their last entry (the one the
proxy itself added; anything before it is what the visitor claimed).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any


def parse_addresses(texts: Sequence[str]) -> frozenset[str]:
    """The proxies' addresses, normalised; ValueError names a bad one."""
    out = set()
    for text in texts:
        try:
            out.add(str(ipaddress.ip_address(text.strip())))
        except ValueError:
            raise ValueError(f"--trust-proxy {text!r} is not an IP address") from None
    return frozenset(out)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    found = None
    for key, value in scope.get("headers", ()):
        if key == name:
            found = value  # the last one, as the proxy appends
    return None if found is None else found.decode("latin-1")


def forwarded(app: Any, trusted: frozenset[str]) -> Any:
    """``app`` seeing, for requests from a trusted proxy, the visitor's address
    (the last X-Forwarded-For entry) and scheme (X-Forwarded-Proto)."""
    if not trusted:
        return app

    async def from_proxy(scope: Any, receive: Any, send: Any) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client and client[0] in trusted:
            scope = dict(scope)
            chain = _header(scope, b"x-forwarded-for")
            if chain:
                last = chain.split(",")[-1].strip()
                try:
                    scope["client"] = (str(ipaddress.ip_address(last)), 0)
                except ValueError:
                    pass  # not an address: keep the proxy's
            proto = (_header(scope, b"x-forwarded-proto") or "").strip().lower()
            if proto in ("http", "https"):
                scope["scheme"] = proto
        await app(scope, receive, send)

    return from_proxy
