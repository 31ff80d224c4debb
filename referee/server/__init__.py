"""The competition server: ``referee serve`` (a live ladder with submissions and a
web site), ``referee submit`` (the competitor's client) and ``referee site`` (a
finished tournament as static pages). See docs/server.md."""
