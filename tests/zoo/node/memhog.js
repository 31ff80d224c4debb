// Zoo (node): memory hog outside the JS heap. At round 3 it allocates and fills 64 MiB
// Buffers up to 6 GiB and never answers.
// Expected verdict: memory_limit -> disqualified.
"use strict";
const zoo = require("./zoo");

const hoard = [];
zoo.play("node_memhog", () => {
  for (let i = 0; i < 96; i++) hoard.push(Buffer.alloc(64 << 20, 1));
  setInterval(() => {}, 1 << 30);
  return true;
});
