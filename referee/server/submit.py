"""``referee submit``: upload a bot (a file, a directory, a .tar.gz or a .zip) to a
competition server and print its answer: accepted into the ladder, or the exact
reason for the refusal (the validation match's verdict, fault, round, stderr).

The answer is read even when the server stops reading the upload (a refusal sent
before the body arrived: over the size limit, a bad token, the hourly budget), and
when the connection is lost after the upload was sent, the server is asked what
became of it (``GET /api/uploads/latest``, also ``referee submit --status``) rather
than guessing."""

from __future__ import annotations

import argparse
import http.client
import io
import json
import sys
import tarfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from ..errors import CliError
from .intake import COMPILED

EXIT_REFUSED = 3
EXIT_OTHER = 2
_SEND_CHUNK = 1 << 16
# How often the client asks for the status of an upload the server is still checking.
POLL_SECONDS = 1.0
# How long the client keeps asking a server it lost (one restarting) about an upload.
RECONNECT_SECONDS = 60.0
# An upload stored this much longer ago than the client started sending is not its one
# (the clocks compared are the server's own: its ``age_s``).
STATUS_SLACK_SECONDS = 5.0


class Lost(Exception):
    """The connection failed before an answer was read."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path",
        type=Path,
        nargs="?",
        help="the bot: one file, a directory, a .tar.gz or a .zip",
    )
    p.add_argument("--server", required=True, help="the server's URL, e.g. http://HOST:8080")
    p.add_argument("--token", required=True, help="your competitor token")
    p.add_argument("--name", help="the bot's name (default: the file or directory name)")
    p.add_argument(
        "--command",
        dest="bot_command",
        help='how to run it, e.g. "node index.js" (relative to the bot)',
    )
    p.add_argument(
        "--status",
        action="store_true",
        help="upload nothing: show what became of your latest upload",
    )
    p.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait (default 300)")


def pack_directory(directory: Path) -> bytes:
    """A .tar.gz of the directory's regular files (links refused: the server would)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(directory.rglob("*")):
            rel = path.relative_to(directory).as_posix()
            if path.is_symlink():
                raise CliError(f"{path}: links are not accepted; copy the file instead")
            if path.is_file():
                tar.add(path, arcname=rel, recursive=False)
    return buf.getvalue()


def request(
    base: str,
    method: str,
    target: str,
    token: str,
    timeout: float,
    body: bytes | None = None,
) -> tuple[int, dict[str, Any]]:
    """One HTTP request; (status, JSON answer). The body is sent in chunks, and if the
    server stops reading it (it answered already and closed), the answer it sent is
    read all the same. ``Lost`` if no answer could be read."""
    parts = urllib.parse.urlsplit(base)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "localhost", parts.port, timeout=timeout)
    send_error: OSError | None = None
    try:
        try:
            conn.putrequest(method, parts.path.rstrip("/") + target)
            conn.putheader("Authorization", f"Bearer {token}")
            if body is not None:
                conn.putheader("Content-Type", "application/octet-stream")
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders()
            view = memoryview(body or b"")
            for start in range(0, len(view), _SEND_CHUNK):
                conn.send(view[start : start + _SEND_CHUNK])
        except OSError as exc:
            # A server that refuses an upload before reading it answers, then closes:
            # the answer may be waiting to be read although sending failed.
            send_error = exc
            if conn.sock is None:  # not even connected: nothing to read
                raise Lost(exc.strerror or str(exc) or type(exc).__name__) from None
        try:
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            why = send_error or exc
            raise Lost(getattr(why, "strerror", None) or str(why) or type(why).__name__) from None
    finally:
        conn.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        answer = {"error": f"HTTP {response.status} {response.reason}"}
    return response.status, answer


def run(args: argparse.Namespace) -> int:
    base = args.server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise CliError(f"--server must be an http:// or https:// URL, not {args.server!r}")
    if args.status:
        return _show_status(base, args, name=args.name, since=None)
    path: Path | None = args.path
    if path is None:
        raise CliError("give the bot to upload (a file or a directory), or --status")
    if path.is_dir():
        data = pack_directory(path)
        filename = (path.resolve().name or "bot") + ".tar.gz"
        default_name = path.resolve().name
    elif path.is_file():
        language = COMPILED.get(path.suffix.lower())
        if language is not None and not args.bot_command and not _is_program(path):
            # Refused here, before it costs one of the hour's uploads.
            raise CliError(
                f"{path} is {language} source: build it first and submit the program "
                "(or an archive with the program and --command)"
            )
        data = path.read_bytes()
        filename = path.name
        default_name = path.name.split(".")[0]
    else:
        raise CliError(f"no such file or directory: {path}")
    name = args.name or default_name
    query = {"filename": filename, "name": name}
    if args.bot_command:
        query["command"] = args.bot_command
    started = time.monotonic()
    try:
        code, answer = request(
            base,
            "POST",
            f"/api/submit?{urllib.parse.urlencode(query)}",
            args.token,
            args.timeout,
            data,
        )
    except Lost as lost:
        print(
            f"the connection to {base} was lost ({lost}); asking the server what became "
            "of the upload",
            file=sys.stderr,
        )
        return _show_status(base, args, name=name, since=started)
    _print(answer, args.json)
    return _exit_code(code, answer)


def _is_program(path: Path) -> bool:
    """Whether the file starts like something that runs as it is (ELF or #!)."""
    with open(path, "rb") as f:
        head = f.read(4)
    return head == b"\x7fELF" or head[:2] == b"#!"


def _exit_code(code: int, answer: dict[str, Any]) -> int:
    if code == 200 and answer.get("accepted"):
        return 0
    return EXIT_REFUSED if code == 422 else EXIT_OTHER


def _print(answer: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(answer, indent=2))
    else:
        _print_answer(answer)


def _show_status(base: str, args: argparse.Namespace, name: str | None, since: float | None) -> int:
    """Print what the server knows of the latest upload (of the bot ``name``, if
    given); with ``since`` (when this client started sending), only an upload made
    since counts, and one still being checked is waited for."""
    query = f"?{urllib.parse.urlencode({'name': name})}" if name else ""
    deadline = time.monotonic() + args.timeout
    reconnect_until = time.monotonic() + RECONNECT_SECONDS
    while True:
        try:
            code, answer = request(
                base, "GET", f"/api/uploads/latest{query}", args.token, args.timeout
            )
        except Lost as lost:
            if since is not None and time.monotonic() < min(deadline, reconnect_until):
                # The server may be restarting (it validates a stored upload again).
                time.sleep(POLL_SECONDS)
                continue
            why = f"cannot reach {base}: {lost}"
            if since is not None:
                why += (
                    "; whether the upload was stored is unknown: "
                    "run referee submit --status when the server is back"
                )
            raise CliError(why, EXIT_OTHER) from None
        if code != 200:
            _print(answer, args.json)
            return EXIT_OTHER
        upload = answer.get("upload")
        if since is not None and upload is not None:
            sent_ago = time.monotonic() - since
            if float(upload.get("age_s", 0.0)) > sent_ago + STATUS_SLACK_SECONDS:
                upload = None  # an older one: ours never reached the server
        if since is not None and upload is None:
            message = "the server has no record of this upload: it was not stored; submit it again"
            raise CliError(message, EXIT_OTHER)
        pending = upload is not None and upload.get("state") in ("receiving", "checking")
        if pending and since is not None and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            continue
        if args.json:
            print(json.dumps(answer, indent=2))
        else:
            _print_status(upload)
        if upload is None:
            return 0 if since is None else EXIT_OTHER
        if upload.get("state") == "accepted":
            return 0
        return EXIT_REFUSED if upload.get("state") == "refused" else EXIT_OTHER


def _print_status(upload: dict[str, Any] | None) -> None:
    if upload is None:
        print("no upload of yours is known to the server", file=sys.stderr)
        return
    state = upload.get("state")
    what = f"{upload.get('bot')}" + (
        f" version {upload['version']}" if upload.get("version") else ""
    )
    ago = f"{float(upload.get('age_s', 0.0)):.0f} s ago"
    out = sys.stdout if state == "accepted" else sys.stderr
    line = {
        "accepted": "accepted, now in the ladder",
        "refused": "refused",
        "checking": "stored; its validation match has not finished yet",
        "receiving": "still being received",
        "lost": "the connection was lost while the server received it: not stored",
    }.get(str(state), str(state))
    print(f"your upload of {what} ({ago}): {line}", file=out)
    if upload.get("reason"):
        print(f"  reason: {upload['reason']}", file=out)


def _print_answer(answer: dict[str, Any]) -> None:
    if "error" in answer:
        print(f"refused: {answer['error']}", file=sys.stderr)
        return
    out = sys.stdout if answer.get("accepted") else sys.stderr
    print(answer.get("message", ""), file=out)
    validation = answer.get("validation") or {}
    if not answer.get("accepted"):
        for key in ("status", "fault", "round", "detail"):
            if validation.get(key) not in (None, ""):
                print(f"  {key}: {validation[key]}", file=out)
        tail = validation.get("stderr_tail")
        if tail:
            print("  stderr (tail):", file=out)
            for line in str(tail).splitlines()[-20:]:
                print(f"    {line}", file=out)
