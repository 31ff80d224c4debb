// The Node twin of sloppy.py (the determinism test): no "round" echo, one round
// answered twice, a debug line on stdout later; what it writes depends only on its
// seed, when it writes it (timers, joined or split writes) varies from run to run.
"use strict";
const readline = require("readline");

let state = 1;
function seeded() {
  // A small LCG: the same draws from the same seed, in any Node version.
  state = (state * 48271) % 2147483647;
  return state / 2147483647;
}
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const write = (text) => new Promise((done) => process.stdout.write(text, done));

let moves = [];
let twiceAt = [];
let debugAt = 0;
const queue = [];
let busy = false;

async function handle(line) {
  const msg = JSON.parse(line);
  if (msg.type === "hello") {
    // The seed may exceed 2^53: read its digits as text, not as a Number.
    const digits = /"seed":\s*(\d+)/.exec(line)[1];
    state = Number(BigInt(digits) % 2147483646n) + 1;
    moves = msg.params.moves;
    twiceAt = [0, 1, 2].map(() => 10 + Math.floor(seeded() * 90));
    debugAt = 120 + Math.floor(seeded() * 61);
    await write(JSON.stringify({ name: "sloppy-js" }) + "\n");
    return;
  }
  if (msg.type !== "turn") {
    process.exit(0);
  }
  const r = msg.round;
  const reply = JSON.stringify({ real_move: moves[Math.floor(seeded() * moves.length)] }) + "\n";
  let extra = "";
  if (twiceAt.includes(r)) extra = reply;
  else if (r === debugAt) extra = "debug: the opponent looks random\n";
  if (Math.random() < 0.3) await sleep(Math.random() * 2);
  if (extra && Math.random() < 0.3) {
    await write(reply + extra);
    return;
  }
  await write(reply);
  if (extra) {
    if (Math.random() < 0.5) await sleep(Math.random() * 2);
    await write(extra);
  }
}

async function drain() {
  if (busy) return;
  busy = true;
  while (queue.length) await handle(queue.shift());
  busy = false;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  queue.push(line);
  drain();
});
rl.on("close", () => process.exit(0));
