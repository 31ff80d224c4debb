"""Choosing a layer: each one's probe, then a real self-test (``true`` started under
its full launch prefix), cached per process."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import msgspec

from . import registry
from .base import LAUNCH_TOKEN, Layer, Limits, SandboxError
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


def _tested_layer(name: str) -> Layer | SandboxError:
    if name not in _self_tests:
        start = time.perf_counter()
        try:
            layer = registry.kind(name).probe()
            _self_test(layer)
        except SandboxError as exc:
            _self_tests[name] = exc
        else:
            ms = round((time.perf_counter() - start) * 1000, 1)
            _self_tests[name] = msgspec.structs.replace(layer, self_test_ms=ms)
    return _self_tests[name]


def _self_test(layer: Layer) -> None:
    """Start ``true`` under the layer exactly as a bot would be started."""
    import tempfile  # only here: every command line imports this package

    with tempfile.TemporaryDirectory(prefix="referee-selftest-") as tmp:
        launch = prepare_launch(
            ["true"], bot_dir=None, scratch=Path(tmp), limits=Limits(), layer=layer
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
            raise SandboxError("self-test failed: `true` did not finish within 10 s") from exc
        if proc.returncode != 0:
            err = stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[-1] if err else f"exit status {proc.returncode}"
            raise SandboxError(f"self-test failed: {detail}")
        if LAUNCH_TOKEN not in stderr:
            raise SandboxError("self-test failed: the launch did not announce the start")
