// Shared plumbing for the node zoo bots: the normal protocol up to the bad round.
// play(name, bad) answers hello, plays "rock" every round and calls bad(round) at
// BAD_ROUND; bad returns true when it has answered the round itself.
"use strict";
const readline = require("readline");

const BAD_ROUND = 3;

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function play(name, bad) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  let greeted = false;
  rl.on("line", (line) => {
    const msg = JSON.parse(line);
    if (!greeted) {
      greeted = true;
      send({ name });
      return;
    }
    if (msg.type !== "turn") {
      rl.close();
      process.exit(0);
    }
    if (msg.round === BAD_ROUND && bad && bad(msg.round)) return;
    send({ round: msg.round, real_move: "rock" });
  });
  rl.on("close", () => process.exit(0));
}

module.exports = { BAD_ROUND, play, send };
