"""``referee submit``: upload a bot (a file, a directory, a .tar.gz or a .zip) to a
competition server and print its answer: accepted into the ladder, or the exact
reason for the refusal (the validation match's verdict, fault, round, stderr)."""

from __future__ import annotations

import argparse
import io
import json
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from ..errors import CliError

EXIT_REFUSED = 3


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path, help="the bot: one file, a directory, a .tar.gz or a .zip")
    p.add_argument("--server", required=True, help="the server's URL, e.g. http://HOST:8080")
    p.add_argument("--token", required=True, help="your competitor token")
    p.add_argument("--name", help="the bot's name (default: the file or directory name)")
    p.add_argument(
        "--command",
        dest="bot_command",
        help='how to run it, e.g. "node index.js" (relative to the bot)',
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


def run(args: argparse.Namespace) -> int:
    path: Path = args.path
    if path.is_dir():
        data = pack_directory(path)
        filename = (path.resolve().name or "bot") + ".tar.gz"
        default_name = path.resolve().name
    elif path.is_file():
        data = path.read_bytes()
        filename = path.name
        default_name = path.name.split(".")[0]
    else:
        raise CliError(f"no such file or directory: {path}")
    query = {"filename": filename, "name": args.name or default_name}
    if args.bot_command:
        query["command"] = args.bot_command
    base = args.server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise CliError(f"--server must be an http:// or https:// URL, not {args.server!r}")
    url = f"{base}/api/submit?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={
            "Authorization": f"Bearer {args.token}",
            "Content-Type": "application/octet-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            answer = json.loads(response.read())
            code = response.status
    except urllib.error.HTTPError as exc:
        code = exc.code
        try:
            answer = json.loads(exc.read())
        except ValueError:
            answer = {"error": f"HTTP {exc.code} {exc.reason}"}
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CliError(f"cannot reach {base}: {reason}") from None
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        _print_answer(answer)
    if code == 200 and answer.get("accepted"):
        return 0
    return EXIT_REFUSED if code == 422 else 2


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
