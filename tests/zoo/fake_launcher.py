"""Zoo: at start-up, before the handshake, prints the errors the launchers print when
they cannot set up containment (the referee's shim, then bubblewrap) and exits 126
as the shim does.

A launcher failure is nobody's fault and voids the match; a bot must not be able to
void a match that way. The launch announces on stderr that it started the bot before
the bot runs, so this is a crash at start-up like any other.
Expected verdict: handshake fault (exit code 126) -> disqualified; the match is played.
"""

import os
import sys

sys.stderr.write(
    "referee-sandbox: OSError: [Errno 1] unshare(user, pid, net, mount, ipc, uts): "
    "Operation not permitted\n"
    "bwrap: Creating new namespace failed: Operation not permitted\n"
)
sys.stderr.flush()
os._exit(126)
