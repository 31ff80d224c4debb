// Zoo (node): a well-behaved node bot ("rock" every round). It checks that node starts
// and runs under every layer's limits (node needs ~1 GiB of address space, so an
// RLIMIT_AS used as the memory limit would kill it).
// Expected verdict: ok.
"use strict";
require("./zoo").play("node_rock");
