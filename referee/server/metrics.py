"""What ``referee serve`` counts, for ``/metrics`` (Prometheus' text exposition
format, version 0.0.4) and for one structured log line (JSON) per request and per
match on the server's standard output.

Counters and histograms live in this process (they start at zero when the server
starts, as Prometheus expects of counters); the gauges are read when scraped (the
matches in the database by kind and status, the queue). Label values come from
small fixed sets (a route's pattern, never the path asked for; a refusal's reason
from ``REFUSALS``), so no visitor can make the exposition grow.

Other modules call ``count_refusal(reason)``, ``observe_request(...)``,
``match_finished(...)`` and ``observe_validation_wait(s)``: plain synchronous
functions, no I/O besides the log line.
"""

from __future__ import annotations

import bisect
import contextvars
import json
import math
import re
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

# Seconds. A page is made in milliseconds; uploads wait for their validation match.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
WAIT_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
MATCH_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

# Why an upload was refused before it could play (its validation's own verdicts are
# counted as "validation"). Any other reason given is counted as "other".
REFUSALS = (
    "auth",  # no or unknown token, not signed in, CSRF
    "rate_limit",  # uploads per hour, uploads in flight
    "too_large",  # the body over max_upload_kib
    "stalled",  # the body too slow or never finished
    "bad_archive",  # unreadable, unsafe or over a limit when unpacked
    "bad_name",  # the bot's name
    "bad_command",  # the command, or none could be guessed
    "name_taken",  # another competitor's bot
    "validation",  # stored, but its validation match refused it
    "other",
)
METHODS = ("GET", "HEAD", "POST")
_LABEL_SAFE = re.compile(r"[^A-Za-z0-9_:/{}.\-]")


class Histogram:
    def __init__(self, buckets: Sequence[float]) -> None:
        self.bounds = tuple(buckets)
        self.counts = [0] * (len(self.bounds) + 1)  # the last: over every bound (+Inf)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def lines(self, name: str, labels: str) -> Iterable[str]:
        sep = "," if labels else ""
        cumulative = 0
        for bound, n in zip((*self.bounds, math.inf), self.counts, strict=True):
            cumulative += n
            le = "+Inf" if bound == math.inf else _number(bound)
            yield f'{name}_bucket{{{labels}{sep}le="{le}"}} {cumulative}'
        yield f"{name}_sum{_braces(labels)} {_number(self.sum)}"
        yield f"{name}_count{_braces(labels)} {cumulative}"


class Registry:
    def __init__(self) -> None:
        self.started = time.time()
        self.requests: dict[tuple[str, str, str], int] = {}  # (route, method, status class)
        self.latency: dict[str, Histogram] = {}  # route
        self.refusals: dict[str, int] = {r: 0 for r in REFUSALS}
        self.matches: dict[tuple[str, str], int] = {}  # (kind, status)
        self.match_seconds: dict[str, Histogram] = {}  # kind
        self.validation_wait = Histogram(WAIT_BUCKETS)
        self.log = True  # one JSON line per request and per match on stdout

    def render(self, gauges: dict[str, Any] | None = None) -> str:
        out: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            out.append(f"# HELP {name} {text}")
            out.append(f"# TYPE {name} {kind}")

        family("referee_start_time_seconds", "gauge", "When this server process started.")
        out.append(f"referee_start_time_seconds {_number(round(self.started, 3))}")
        family("referee_http_requests_total", "counter", "Requests answered, by route.")
        for (route, method, status), n in sorted(self.requests.items()):
            labels = f'route="{route}",method="{method}",status="{status}"'
            out.append(f"referee_http_requests_total{{{labels}}} {n}")
        family(
            "referee_http_request_duration_seconds",
            "histogram",
            "Time from a request's arrival to the end of its answer, by route.",
        )
        for route, hist in sorted(self.latency.items()):
            out.extend(hist.lines("referee_http_request_duration_seconds", f'route="{route}"'))
        family("referee_upload_refusals_total", "counter", "Uploads refused, by reason.")
        for reason, n in self.refusals.items():
            out.append(f'referee_upload_refusals_total{{reason="{reason}"}} {n}')
        family(
            "referee_matches_finished_total",
            "counter",
            "Matches this process finished (done) or gave up (failed), by kind.",
        )
        for (kind, status), n in sorted(self.matches.items()):
            out.append(f'referee_matches_finished_total{{kind="{kind}",status="{status}"}} {n}')
        family("referee_match_duration_seconds", "histogram", "Wall time of a match, by kind.")
        for kind, hist in sorted(self.match_seconds.items()):
            out.extend(hist.lines("referee_match_duration_seconds", f'kind="{kind}"'))
        family(
            "referee_validation_wait_seconds",
            "histogram",
            "Time a stored upload waited for its validation match to start.",
        )
        out.extend(self.validation_wait.lines("referee_validation_wait_seconds", ""))
        for name, (kind, text, values) in (gauges or {}).items():
            family(name, kind, text)
            for labels, value in values:
                out.append(f"{name}{_braces(labels)} {_number(value)}")
        return "\n".join(out) + "\n"


REGISTRY = Registry()


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if value == math.inf:
        return "+Inf"
    return repr(float(value))


def _braces(labels: str) -> str:
    return "{" + labels + "}" if labels else ""


def label(value: str) -> str:
    """A label value as the exposition format wants it (quotes and backslashes
    escaped; only our own pattern strings reach here, cleaned anyway)."""
    return _LABEL_SAFE.sub("_", value)[:100]


# -- what the other modules call --------------------------------------------------


# Whether the request being answered counted its refusal itself (see ``instrument``).
_refusal_counted: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "refusal_counted", default=False
)
UPLOAD_ROUTES = ("/api/submit", "/me/upload")
# A refused upload whose handler did not say why, by its status.
_REFUSAL_BY_STATUS = {
    401: "auth",
    403: "auth",
    413: "too_large",
    429: "rate_limit",
    422: "validation",
}


def count_refusal(reason: str) -> None:
    """Count one refused upload; ``reason`` is one of REFUSALS (else "other")."""
    REGISTRY.refusals[reason if reason in REGISTRY.refusals else "other"] += 1
    _refusal_counted.set(True)


def observe_request(
    route: str, method: str, status: int, seconds: float, client: str | None = None
) -> None:
    r = REGISTRY
    method = method if method in METHODS else "OTHER"
    key = (route, method, f"{status // 100}xx")
    r.requests[key] = r.requests.get(key, 0) + 1
    hist = r.latency.get(route)
    if hist is None:
        hist = r.latency[route] = Histogram(REQUEST_BUCKETS)
    hist.observe(seconds)
    if r.log:
        log_line(
            event="request",
            route=route,
            method=method,
            status=status,
            ms=round(seconds * 1000, 2),
            client=client,
        )


def match_finished(
    mid: int,
    kind: str,
    status: str,
    bots: list[str],
    wall_s: float | None,
    winner: int | None = None,
    reason: str | None = None,
) -> None:
    r = REGISTRY
    key = (kind, status)
    r.matches[key] = r.matches.get(key, 0) + 1
    if wall_s is not None:
        hist = r.match_seconds.get(kind)
        if hist is None:
            hist = r.match_seconds[kind] = Histogram(MATCH_BUCKETS)
        hist.observe(wall_s)
    if r.log:
        log_line(
            event="match",
            match=mid,
            kind=kind,
            status=status,
            bots=bots,
            winner=winner,
            wall_s=wall_s,
            reason=reason,
        )


def observe_validation_wait(seconds: float) -> None:
    REGISTRY.validation_wait.observe(seconds)


def log_line(**fields: Any) -> None:
    """One JSON object on a line of stdout (journald or the log file keeps it)."""
    record = {"ts": round(time.time(), 3), **{k: v for k, v in fields.items() if v is not None}}
    try:
        sys.stdout.write(json.dumps(record, ensure_ascii=True) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # a closed or full stdout must not stop the server


# -- the ASGI side --------------------------------------------------------------


def route_of(routes: Sequence[Any], scope: dict[str, Any]) -> str:
    """The pattern of the route that answers ``scope`` ("/bots/{name:path}"), or
    "unmatched": a bounded label whatever path was asked for."""
    from starlette.routing import Match

    for route in routes:
        try:
            found, _ = route.matches(scope)
        except Exception:  # a path a route's converter cannot read: no route of ours
            continue
        # PARTIAL: the path is the route's, the method is not (a 405).
        if found != Match.NONE:
            return label(str(getattr(route, "path", "unmatched")))
    return "unmatched"


def instrument(app: Any, routes: Sequence[Any]) -> Any:
    """``app`` with every HTTP request timed, counted by route and logged."""

    async def measured(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # if the application fails before it answers

        async def send_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        token = _refusal_counted.set(False)
        try:
            await app(scope, receive, send_status)
        finally:
            route = route_of(routes, scope)
            refused = scope.get("method") == "POST" and 400 <= status < 500
            if refused and route in UPLOAD_ROUTES and not _refusal_counted.get():
                # The handler said nothing: the status tells as much as it can.
                count_refusal(_REFUSAL_BY_STATUS.get(status, "other"))
            _refusal_counted.reset(token)
            client = scope.get("client")
            observe_request(
                route,
                str(scope.get("method", "")),
                status,
                time.perf_counter() - started,
                client[0] if client else None,
            )

    return measured


def gauges(site: Any) -> dict[str, Any]:
    """The gauges read at each scrape, from the ladder and the database."""
    counts = site.ladder.counts()
    by_kind = []
    for key, n in sorted(counts.items()):
        kind, _, status = key.partition(".")
        by_kind.append((f'kind="{label(kind)}",status="{label(status)}"', n))
    queued = sum(n for key, n in counts.items() if key.endswith(".queued"))
    validating = len(site.store.versions_with_status("validating"))
    return {
        "referee_matches": ("gauge", "Matches in the database, by kind and status.", by_kind),
        "referee_queue_depth": (
            "gauge",
            "Matches waiting to be played: queued ladder and challenge matches, and "
            "uploads waiting for or in their validation match.",
            [('what="matches"', queued), ('what="validations"', validating)],
        ),
        "referee_ladder_versions": (
            "gauge",
            "Versions on the leaderboard (disabled ones included).",
            [("", len(site.ladder.leaderboard))],
        ),
    }


def reset() -> None:
    """A fresh registry (for tests)."""
    global REGISTRY
    REGISTRY = Registry()


def routes(site: Any) -> list[Any]:
    """``/metrics``, answered to scrapers on the server's own machine only: a
    request from a loopback address that did not come through a proxy (a proxy
    adds X-Forwarded-For). Anyone else gets a 404, as for a page that does not
    exist."""
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def exposition(request: Request) -> Response:
        client = request.client.host if request.client else ""
        local = client in ("127.0.0.1", "::1") or client.startswith("127.")
        if not local or "x-forwarded-for" in request.headers:
            raise HTTPException(404, "Not Found")
        return PlainTextResponse(
            REGISTRY.render(gauges(site)),
            media_type="text/plain; version=0.0.4; charset=utf-8",
        )

    return [Route("/metrics", exposition)]
