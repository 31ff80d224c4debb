"""Tournaments (``referee tournament``): a round-robin pool, then a seeded
single-elimination bracket, played in parallel worker processes and kept in a
SQLite file so an interrupted run can be resumed. See docs/tournament.md."""
