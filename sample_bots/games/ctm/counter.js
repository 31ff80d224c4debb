#!/usr/bin/env node
// CTM bot "counter" (node, no packages): picks a random pair of hands, then keeps
// the hand that wins against more of the opponent's two revealed hands (equal hands
// count as a win when it is player 1), breaking ties at random.
//
// Commitments are Keccak-256 (Ethereum padding 0x01, not NIST SHA3-256, so node's
// crypto "sha3-256" will not do) over [left, right, ...salt] and [index, ...salt];
// a small Keccak on BigInt lanes is built in. Randomness, salts included, comes from
// a generator seeded with the referee's per-bot seed, so a re-run is identical.
// Speaks protocol/games/ctm.md.
"use strict";

const readline = require("readline");

// -- Keccak-256 ----------------------------------------------------------------------

const MASK = (1n << 64n) - 1n;

const RC = (() => {
  const bits = [];
  let r = 1; // LFSR x^8 + x^6 + x^5 + x^4 + 1
  for (let i = 0; i < 255; i++) {
    bits.push(r & 1);
    r <<= 1;
    if (r & 0x100) r ^= 0x171;
  }
  const out = [];
  for (let i = 0; i < 24; i++) {
    let rc = 0n;
    for (let j = 0; j < 7; j++) {
      if (bits[(7 * i + j) % 255]) rc |= 1n << BigInt((1 << j) - 1);
    }
    out.push(rc);
  }
  return out;
})();

const ROT = (() => {
  const rot = Array.from({ length: 5 }, () => new Array(5).fill(0));
  let x = 1;
  let y = 0;
  for (let t = 0; t < 24; t++) {
    rot[x][y] = (((t + 1) * (t + 2)) / 2) % 64;
    [x, y] = [y, (2 * x + 3 * y) % 5];
  }
  return rot;
})();

function rol(v, n) {
  if (n === 0) return v;
  const b = BigInt(n);
  return ((v << b) | (v >> (64n - b))) & MASK;
}

function permute(a) {
  for (const rc of RC) {
    const c = [];
    for (let x = 0; x < 5; x++) c.push(a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4]);
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5] ^ rol(c[(x + 1) % 5], 1);
      for (let y = 0; y < 5; y++) a[x][y] ^= d;
    }
    const b = Array.from({ length: 5 }, () => new Array(5).fill(0n));
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) b[y][(2 * x + 3 * y) % 5] = rol(a[x][y], ROT[x][y]);
    }
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) {
        a[x][y] = b[x][y] ^ (~b[(x + 1) % 5][y] & MASK & b[(x + 2) % 5][y]);
      }
    }
    a[0][0] ^= rc;
  }
}

function keccak256(bytes) {
  const rate = 136;
  const msg = Array.from(bytes);
  msg.push(0x01);
  while (msg.length % rate) msg.push(0);
  msg[msg.length - 1] |= 0x80;
  const a = Array.from({ length: 5 }, () => new Array(5).fill(0n));
  for (let start = 0; start < msg.length; start += rate) {
    for (let i = 0; i < rate / 8; i++) {
      let lane = 0n;
      for (let k = 7; k >= 0; k--) lane = (lane << 8n) | BigInt(msg[start + 8 * i + k]);
      a[i % 5][Math.floor(i / 5)] ^= lane;
    }
    permute(a);
  }
  const out = [];
  for (let i = 0; i < 4; i++) {
    let lane = a[i % 5][Math.floor(i / 5)];
    for (let k = 0; k < 8; k++) {
      out.push(Number(lane & 0xffn));
      lane >>= 8n;
    }
  }
  return out;
}

const hex = (bytes) => bytes.map((b) => b.toString(16).padStart(2, "0")).join("");

// -- seeded randomness (xorshift64*) ---------------------------------------------------

let state = 1n;
function seed(s) {
  state = (BigInt(s) ^ 0x9e3779b97f4a7c15n) & MASK || 1n;
}
function nextByte() {
  state ^= state >> 12n;
  state ^= (state << 25n) & MASK;
  state ^= state >> 27n;
  return Number(((state * 0x2545f4914f6cdd1dn) & MASK) >> 56n);
}
const random = () => nextByte() / 256;
const salt = () => Array.from({ length: 32 }, nextByte);

// -- strategy --------------------------------------------------------------------------

const wins = (mine, theirs, player1) => (mine === theirs ? player1 : (mine - theirs + 3) % 3 === 1);
let hands = null;
let handsSalt = null;
let choice = null;
let choiceSalt = null;

function turn(msg) {
  if (msg.phase === "commit_hands") {
    const pairs = [[0, 1], [0, 2], [1, 2], [1, 0], [2, 0], [2, 1]];
    hands = pairs[Math.floor(random() * pairs.length)];
    handsSalt = salt();
    return { commitment: hex(keccak256([hands[0], hands[1], ...handsSalt])) };
  }
  if (msg.phase === "reveal_hands") return { hands, salt: hex(handsSalt) };
  if (msg.phase === "commit_choice") {
    const theirs = msg.opponent.hands;
    const score = hands.map((h) => theirs.filter((t) => wins(h, t, msg.player1)).length);
    choice = score[0] > score[1] ? 0 : score[1] > score[0] ? 1 : random() < 0.5 ? 0 : 1;
    choiceSalt = salt();
    return { commitment: hex(keccak256([choice, ...choiceSalt])) };
  }
  return { choice, salt: hex(choiceSalt) };
}

if (require.main === module) {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on("line", (line) => {
    const msg = JSON.parse(line);
    if (msg.type === "hello") {
      seed(msg.seed);
      process.stdout.write(JSON.stringify({ name: "counter", version: "1" }) + "\n");
    } else if (msg.type === "turn") {
      process.stdout.write(JSON.stringify(turn(msg)) + "\n");
    } else if (msg.type === "end") {
      rl.close();
      process.exit(0);
    }
    // notices need no answer
  });
}

module.exports = { keccak256, hex };
