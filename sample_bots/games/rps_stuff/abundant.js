#!/usr/bin/env node
// Rock Paper Stuff bot "abundant" (node, no packages): plays the kind it holds most
// of, to restore balance by giving it away; the first kind in the order rock, paper,
// scissors, fire, water wins a tie. Speaks protocol/games/rps_stuff.md.
"use strict";

const readline = require("readline");

const KINDS = ["rock", "paper", "scissors", "fire", "water"];

function choose(inventory) {
  let best = KINDS[0];
  for (const k of KINDS) if (inventory[k] > inventory[best]) best = k;
  return best;
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "hello") {
    process.stdout.write(JSON.stringify({ name: "abundant", version: "1" }) + "\n");
  } else if (msg.type === "turn") {
    process.stdout.write(JSON.stringify({ play: choose(msg.inventory) }) + "\n");
  } else if (msg.type === "end") {
    rl.close();
    process.exit(0);
  }
  // notices need no answer
});
