"""referee: a strict, fast, language-agnostic referee for bot competitions."""

import os as _os

__version__ = "0.1.0"

# numpy's OpenBLAS starts a worker thread per CPU when numpy is imported, and that
# thread busy-waits for work for a while before it sleeps. The referee imports
# numpy while the bots start (for scoring), so on a two-CPU machine the spinning
# worker took a CPU from the bots for the first thousands of rounds of every match
# (docs/performance.md). The
# referee's statistics are small single-threaded work. Bots never see this
# variable: they start with an environment of their own (referee/sandbox/launch.py).
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
