'use strict';
/*
 * flat-js: random, but flatter than random. It plays each move with a weight
 * that falls steeply with how often it has already played that move, so its
 * counts stay nearly equal ("flat" from the classic competitions). Counting
 * finds nothing; a model of which move is "due" finds a little.
 */
const chaosbot = require('./chaosbot');

class Flat extends chaosbot.Bot {
  constructor(hello, seed) {
    super(hello, seed);
    this.played = {};
    for (const m of this.moves) this.played[m] = 0;
  }

  move(turn) {
    const mine = turn.self_last_real;
    if (mine !== null && mine in this.played) this.played[mine] += 1;
    const low = Math.min(...this.moves.map((m) => this.played[m]));
    // A move played d times more than the least played one keeps weight 0.2^d.
    const weights = this.moves.map((m) => Math.pow(0.2, this.played[m] - low));
    let r = this.random() * weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < this.moves.length; i++) {
      r -= weights[i];
      if (r < 0) return this.moves[i];
    }
    return this.moves[this.moves.length - 1];
  }
}
Flat.botName = 'flat-js';

chaosbot.run(Flat);
