"""The containment layers this referee knows: every module of ``layers/`` that
defines ``KIND``, strongest (lowest rank) first. Adding a layer is adding a file."""

from __future__ import annotations

import importlib
import pkgutil

from . import layers as _layers_pkg
from .base import LayerKind


def _discover() -> dict[str, LayerKind]:
    found: list[LayerKind] = []
    for info in pkgutil.iter_modules(_layers_pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{_layers_pkg.__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None:
            found.append(kind)
    found.sort(key=lambda k: (k.rank, k.name))
    return {kind.name: kind for kind in found}


KINDS: dict[str, LayerKind] = _discover()
LAYERS: tuple[str, ...] = tuple(KINDS)  # strongest first: the order "auto" tries
SANDBOX_CHOICES: tuple[str, ...] = ("auto", *LAYERS)


def kind(name: str) -> LayerKind:
    """The layer called ``name``; ValueError for an unknown one."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(
            f"unknown sandbox layer {name!r}; choose one of {SANDBOX_CHOICES}"
        ) from None
