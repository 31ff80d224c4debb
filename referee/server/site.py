"""``referee site TOURNAMENT_DIR OUT_DIR``: a finished ``referee tournament`` as
static web pages (standings with rating intervals, cross-table, bracket, every
match linked to its HTML replay), plain files any web server can host. The
replays and their pages are the public copies (``replay_public``): no bot's
stderr, no paths the bots ran from."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, CliError


def replay_suffix_of(path: Path) -> str:
    """``.jsonl.gz`` or ``.jsonl``, as the replay at ``path`` is named."""
    return ".jsonl.gz" if path.name.endswith(".gz") else ".jsonl"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("tournament", type=Path, help="a referee tournament's output directory")
    p.add_argument("out", type=Path, help="where to write the pages (created)")


def environment() -> Any:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("referee.server", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["signed"] = lambda x: f"{x:+.0f}"
    return env


def _safe_id(mid: str) -> bool:
    return bool(mid) and all(c.isalnum() or c in "-_." for c in mid) and ".." not in mid


def render_site(tournament: Path, out: Path) -> int:
    """Write the pages; returns the number of match pages written."""
    from ..errors import ReplayError
    from ..html_report import render_html
    from ..replay_public import without_paths, write_public_replay
    from ..replay_view import load_view

    results = tournament / "results.json"
    try:
        summary = json.loads(results.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(
            f"no results.json in {tournament}: not a finished referee tournament output"
        ) from None
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read {results}: {exc}") from None
    if not isinstance(summary, dict) or "standings" not in summary:
        raise CliError(f"{results} is not a tournament's results.json")
    (out / "matches").mkdir(parents=True, exist_ok=True)
    (out / "replays").mkdir(parents=True, exist_ok=True)
    links: dict[str, str] = {}
    for m in summary.get("matches", []):
        mid, replay = str(m.get("id", "")), m.get("replay")
        if not replay or not _safe_id(mid):
            continue
        source = (tournament / replay).resolve()
        if not source.is_file() or tournament.resolve() not in source.parents:
            continue
        copy = f"replays/{mid}{replay_suffix_of(source)}"
        # The public copy: the bots' stderr and the paths they ran from are their
        # owners' business, not the readers' of a site.
        try:
            write_public_replay(source, out / copy)
        except ValueError as exc:
            raise CliError(f"cannot read the replay {source}: {exc}") from None
        try:
            page = render_html(load_view(out / copy))
        except ReplayError:
            links[mid] = copy  # a game the viewer does not draw
            continue
        (out / "matches" / f"{mid}.html").write_text(page, encoding="utf-8")
        links[mid] = f"matches/{mid}.html"
    html = (
        environment()
        .get_template("static_index.html")
        .render(t=summary, match_link=lambda mid: links.get(str(mid)))
    )
    (out / "index.html").write_text(html, encoding="utf-8")
    (out / "results.json").write_text(json.dumps(without_paths(summary), indent=1) + "\n")
    return sum(1 for v in links.values() if v.startswith("matches/"))


def run(args: argparse.Namespace) -> int:
    try:
        pages = render_site(args.tournament, args.out)
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"{args.out / 'index.html'} ({pages} match pages)")
    return EXIT_OK
