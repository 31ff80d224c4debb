"""The containment layers, one module each. A module here that defines ``KIND`` (a
:class:`referee.sandbox.base.LayerKind`) is a layer: the registry finds it, "auto"
tries it in the order of its ``rank``, and the command line offers it."""
