"""referee: a strict, fast, language-agnostic referee for bot competitions."""

__version__ = "0.1.0"
