#!/usr/bin/env node
// Liar's Dice bot "expect" (node, no packages): compares each bid with the expected
// number of matching dice. Its own dice count exactly; every unseen die counts for
// 1/3 (the face or a wild six), or 1/6 on sixes. It calls "liar" when the last bid
// is more than one die above that expectation, and otherwise raises on the face it
// expects most of, by the smallest legal amount. It never calls "spot on".
// Speaks protocol/games/liars_dice.md.
"use strict";

const readline = require("readline");

const WILD = 6;
const weight = (q, f) => (f === WILD ? 2 * q : q);
const matches = (dice, face) =>
  dice.filter((d) => d === face || (face !== WILD && d === WILD)).length;

function expected(dice, unseen, face) {
  return matches(dice, face) + unseen * (face === WILD ? 1 / 6 : 1 / 3);
}

function decide(turn) {
  const dice = turn.dice;
  const total = turn.dice_counts.reduce((a, b) => a + b, 0);
  const unseen = total - dice.length;
  const bids = turn.bids;
  const last = bids.length ? bids[bids.length - 1] : null;
  if (last && last.quantity > expected(dice, unseen, last.face) + 1) {
    return { move: "liar" };
  }
  const lastW = last ? weight(last.quantity, last.face) : 0;
  let best = null;
  for (let f = 1; f <= 6; f++) {
    // the smallest quantity of this face that beats the last bid
    let q = f === WILD ? Math.floor(lastW / 2) + 1 : lastW + 1;
    if (q > total) continue;
    const margin = expected(dice, unseen, f) - q;
    if (best === null || margin > best.margin) best = { q, f, margin };
  }
  if (best === null || (last && best.margin < -0.5)) return { move: "liar" };
  return { move: "bid", quantity: best.q, face: best.f };
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "hello") {
    process.stdout.write(JSON.stringify({ name: "expect", version: "1" }) + "\n");
  } else if (msg.type === "turn") {
    process.stdout.write(JSON.stringify(decide(msg)) + "\n");
  } else if (msg.type === "end") {
    rl.close();
    process.exit(0);
  }
  // notices need no answer
});
