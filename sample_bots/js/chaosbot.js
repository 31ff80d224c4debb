'use strict';
/*
 * chaosbot.js: a tiny helper for writing Chaos League (and classic RoShamBo)
 * bots in JavaScript. Node only, no packages; copy this file next to your bot.
 *
 *   const chaosbot = require('./chaosbot');
 *   class MyBot extends chaosbot.Bot {
 *     move(turn) { return this.choice(this.moves); }   // or new chaosbot.Shadow('rock', 'paper')
 *   }
 *   chaosbot.run(MyBot);
 *
 * A bot gets: this.seat, this.seed (a decimal string: it may exceed 2^53),
 * this.game, this.params, this.moves, this.rounds, this.tokens (mine, left),
 * this.random() (a mulberry32 generator seeded from the hello seed, so a re-run
 * is identical), this.randInt(n), this.choice(list), this.myMoves (my real
 * moves), this.theirMoves (what the opponent showed; null where it faulted),
 * this.buckets (the opponent's deception bucket at each round's start),
 * this.beats(m) / this.beatenBy(m), this.answer(m, weights) (a move beating m;
 * of the two in RPSLS the one better against the optional weights).
 * move(turn) gets {round, opponent_last_visible, self_last_real,
 * opponent_deception_bucket} and returns a move name or a Shadow.
 * See protocol/README.md for the wire format.
 */

const fs = require('fs');

const MOVES5 = ['rock', 'paper', 'scissors', 'lizard', 'spock'];
const DEFEATS = {
  rock: ['scissors', 'lizard'],
  paper: ['rock', 'spock'],
  scissors: ['paper', 'lizard'],
  lizard: ['paper', 'spock'],
  spock: ['scissors', 'rock'],
};

/** +1 if a beats b, -1 if it loses, 0 for a draw. */
function outcome(a, b) {
  if (DEFEATS[a].includes(b)) return 1;
  if (DEFEATS[b].includes(a)) return -1;
  return 0;
}

/** mulberry32: a small, fast 32-bit PRNG; returns floats in [0, 1). */
function mulberry32(seed) {
  let state = seed >>> 0;
  return function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fold a decimal seed string (up to 2^63-1) into 32 bits without losing digits. */
function seed32(text) {
  let s;
  try {
    s = BigInt(text);
  } catch (e) {
    s = 1n;
  }
  return Number((s ^ (s >> 32n)) & 0xffffffffn);
}

class Shadow {
  /** Play `real`, show the opponent `shown` (costs one token if any are left). */
  constructor(real, shown) {
    this.real = real;
    this.shown = shown;
  }
}

class Bot {
  constructor(hello, rawSeed) {
    this.seat = hello.seat;
    this.seed = rawSeed !== undefined ? rawSeed : String(hello.seed);
    this.game = hello.game || 'chaos';
    this.params = hello.params;
    this.moves = hello.params.moves.slice();
    this.rounds = hello.params.rounds;
    this.tokens = hello.params.tokens || 0;
    this.random = mulberry32(seed32(this.seed));
    this.myMoves = [];
    this.theirMoves = [];
    this.buckets = [];
    this.errors = 0;
  }

  randInt(n) {
    return Math.floor(this.random() * n);
  }

  choice(list) {
    return list[this.randInt(list.length)];
  }

  beats(move) {
    return this.moves.filter((m) => DEFEATS[m].includes(move));
  }

  beatenBy(move) {
    return DEFEATS[move].filter((m) => this.moves.includes(m));
  }

  answer(predicted, weights) {
    let options = this.beats(predicted);
    if (options.length > 1 && weights) {
      const ev = (a) => Object.keys(weights).reduce((s, b) => s + weights[b] * outcome(a, b), 0);
      const top = Math.max(...options.map(ev));
      options = options.filter((a) => ev(a) === top);
    }
    return this.choice(options);
  }

  move(turn) {
    throw new Error('move() is not implemented');
  }

  end(message) {}

  /** Record a turn, ask move(), build the reply. A bug in move() costs one
   *  random move (logged to stderr), not the whole match. */
  handleTurn(msg) {
    const turn = {
      round: msg.round,
      opponent_last_visible: msg.opponent_last_visible === undefined ? null : msg.opponent_last_visible,
      self_last_real: msg.self_last_real === undefined ? null : msg.self_last_real,
      opponent_deception_bucket: msg.opponent_deception_bucket || 'EMPTY',
    };
    if (turn.round > 1) {
      this.myMoves.push(turn.self_last_real);
      this.theirMoves.push(turn.opponent_last_visible);
    }
    this.buckets.push(turn.opponent_deception_bucket);
    let real;
    let shown = null;
    try {
      const choice = this.move(turn);
      if (choice instanceof Shadow) {
        real = choice.real;
        shown = choice.shown;
      } else {
        real = choice;
      }
      if (!this.moves.includes(real) || (shown !== null && !this.moves.includes(shown))) {
        throw new Error(`move() returned ${JSON.stringify(choice)}, not a move of this game`);
      }
    } catch (err) {
      if (++this.errors <= 5) process.stderr.write(`${err.stack || err}\n`);
      real = this.choice(this.moves);
      shown = null;
    }
    const reply = { round: turn.round, real_move: real };
    if (shown !== null) {
      reply.shadow_request = true;
      reply.shadow_move = shown;
      if (this.tokens > 0) this.tokens -= 1;
    }
    return reply;
  }
}

/** Write all of `text` to stdout now. A synchronous write: the stream's
 *  asynchronous machinery costs more per move than the pipe itself. */
function writeOut(text) {
  const data = Buffer.from(text);
  let off = 0;
  while (off < data.length) {
    try {
      off += fs.writeSync(1, data, off);
    } catch (err) {
      // Non-blocking stdout (something made it so) and a full pipe: wait, retry.
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/** Speak the protocol on stdin/stdout until the referee says end. */
function run(BotClass) {
  let bot = null;
  let finished = false;
  const finish = () => {
    finished = true;
    process.exit(0);
  };
  const onLine = (line) => {
    if (!line.trim()) return;
    const msg = JSON.parse(line);
    if (bot === null) {
      // Keep the seed's exact digits: JSON numbers above 2^53 lose precision.
      const m = /"seed"\s*:\s*(\d+)/.exec(line);
      bot = new BotClass(msg, m ? m[1] : String(msg.seed));
      const name = BotClass.botName || BotClass.name;
      writeOut(JSON.stringify({ name }) + '\n');
    } else if (msg.type === 'turn') {
      writeOut(JSON.stringify(bot.handleTurn(msg)) + '\n');
    } else if (msg.type === 'end') {
      bot.end(msg);
      finish();
    }
    // Other message types come from a newer referee; answering would be unsolicited.
  };
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let start = 0;
    let nl;
    while (!finished && (nl = pending.indexOf('\n', start)) >= 0) {
      onLine(pending.slice(start, nl));
      start = nl + 1;
    }
    pending = pending.slice(start);
  });
  process.stdin.on('end', () => {
    if (!finished && pending) onLine(pending);
    if (!finished) finish();
  });
}

module.exports = { Bot, Shadow, run, outcome, mulberry32, seed32, MOVES5, DEFEATS };
