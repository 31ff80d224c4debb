"""Choosing a layer: each one's probe, then a real self-test (``true`` started under
its full launch prefix), cached per process."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import msgspec

from . import registry
from .base import LAUNCH_TOKEN, Layer, Limits, SandboxError
from .identity import release_uid
from .launch import prepare_launch
from .proctree import kill_tree

_self_tests: dict[str, Layer | SandboxError] = {}


def choose_layer(name: str = "auto") -> Layer:
    """Return a working containment layer.

    ``name`` is "auto" (the strongest layer that passes its self-test) or one of
    :data:`registry.LAYERS` (that layer or :class:`SandboxError`). Each self-test actually starts
    ``true`` under the layer's full launch prefix; results are cached per process.
    """
    if name != "auto":
        registry.kind(name)  # ValueError for an unknown name
        result = _tested_layer(name)
        if isinstance(result, SandboxError):
            raise result
        return result
    skipped: list[str] = []
    for candidate in registry.LAYERS:
        result = _tested_layer(candidate)
        if isinstance(result, Layer):
            return msgspec.structs.replace(result, skipped=tuple(skipped))
        skipped.append(f"{candidate}: {result}")
    raise SandboxError("no containment layer works here: " + "; ".join(skipped))


def _with_identity(layer: Layer) -> Layer:
    """As root, every layer starts each bot as an unprivileged uid of its own: it can
    neither signal nor read the /proc entries of the referee or another bot."""
    if os.geteuid() != 0:
        return layer
    extra = [tag for tag in ("uid", "signals", "proc") if tag not in layer.isolation]
    return msgspec.structs.replace(
        layer,
        isolation=(*layer.isolation, *extra),
        description=f"{layer.description}; each bot as an unprivileged uid of its own",
    )


def _tested_layer(name: str) -> Layer | SandboxError:
    if name not in _self_tests:
        start = time.perf_counter()
        try:
            layer = _with_identity(registry.kind(name).probe())
            _self_test(layer)
        except SandboxError as exc:
            _self_tests[name] = exc
        else:
            ms = round((time.perf_counter() - start) * 1000, 1)
            _self_tests[name] = msgspec.structs.replace(layer, self_test_ms=ms)
    return _self_tests[name]


# The self-test's bot: it fails unless it holds no capability at all and, when the
# referee is root, is not root either (shell builtins only: nothing else may be
# visible).
# ($1 = 1: the referee is root, which also empties the bounding set; an unprivileged
# referee cannot, and has no capability to pass on anyway.)
_CHECK_PRIVILEGES = (
    "while read -r key value rest; do case $key in "
    "Uid:) [ $value != 0 ] || exit 81;; "
    "CapEff:|CapPrm:|CapInh:|CapAmb:) [ $value = 0000000000000000 ] || exit 82;; "
    "CapBnd:) [ $1 = 0 ] || [ $value = 0000000000000000 ] || exit 82;; "
    "esac; done < /proc/self/status"
)
_PRIVILEGE_FAILURES = {
    81: "the bot would run as root",
    82: "the bot would hold capabilities",
}


def _self_test(layer: Layer) -> None:
    """Start a tiny bot under the layer exactly as a bot would be started; it checks
    that it holds no privileges."""
    import tempfile  # only here: every command line imports this package

    with tempfile.TemporaryDirectory(prefix="referee-selftest-") as tmp:
        launch = prepare_launch(
            ["sh", "-c", _CHECK_PRIVILEGES, "sh", "1" if os.geteuid() == 0 else "0"],
            bot_dir=None,
            scratch=Path(tmp),
            limits=Limits(),
            layer=layer,
        )
        try:
            proc = subprocess.Popen(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=launch.pass_fds,
            )
        except OSError as exc:
            raise SandboxError(f"self-test failed: {exc}") from exc
        finally:
            launch.close_fds()
        try:
            _, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired as exc:
            kill_tree(proc.pid)
            proc.communicate()
            raise SandboxError("self-test failed: the bot did not finish within 10 s") from exc
        finally:
            release_uid(launch.uid if launch.leased else None)
        if proc.returncode in _PRIVILEGE_FAILURES and LAUNCH_TOKEN in stderr:
            raise SandboxError(f"self-test failed: {_PRIVILEGE_FAILURES[proc.returncode]}")
        if proc.returncode != 0:
            err = stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[-1] if err else f"exit status {proc.returncode}"
            raise SandboxError(f"self-test failed: {detail}")
        if LAUNCH_TOKEN not in stderr:
            raise SandboxError("self-test failed: the launch did not announce the start")
