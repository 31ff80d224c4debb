"""Pure statistics of paired matches (no I/O): the pentanomial model, Elo estimates
with intervals, the generalised SPRT, ratings on a fixed pool's scale and rank
intervals. docs/statistics.md explains the model and the formulas."""
