'use strict';
/*
 * noisycycler-js: the moves in order, but each round with probability 0.3 a
 * uniformly random move instead (the cycle continues from whatever it played).
 * A pattern hidden in noise: history matching keeps finding broken matches,
 * while counting successors of its own last move finds the cycle at once.
 */
const chaosbot = require('./chaosbot');

const NOISE = 0.3;

class NoisyCycler extends chaosbot.Bot {
  move(turn) {
    const mine = turn.self_last_real;
    const i = this.moves.indexOf(mine);
    if (i < 0 || this.random() < NOISE) return this.choice(this.moves);
    return this.moves[(i + 1) % this.moves.length];
  }
}
NoisyCycler.botName = 'noisycycler-js';

chaosbot.run(NoisyCycler);
