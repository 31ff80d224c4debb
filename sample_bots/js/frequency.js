'use strict';
/*
 * frequency-js: counters the opponent's most frequent visible move over the
 * last 200 rounds. Of the two moves that beat it in RPSLS it takes the one that
 * also does better against the rest of the counted distribution. The window
 * lets it follow an opponent that changes its favourite.
 */
const chaosbot = require('./chaosbot');

const WINDOW = 200;

class Frequency extends chaosbot.Bot {
  constructor(hello, seed) {
    super(hello, seed);
    this.counts = {};
    for (const m of this.moves) this.counts[m] = 0;
  }

  move(turn) {
    const seen = turn.opponent_last_visible;
    if (seen !== null && seen in this.counts) this.counts[seen] += 1;
    // theirMoves ends with `seen`; the move WINDOW rounds back leaves the window.
    const old = this.theirMoves[this.theirMoves.length - 1 - WINDOW];
    if (old !== undefined && old !== null && old in this.counts) this.counts[old] -= 1;
    const top = Math.max(...this.moves.map((m) => this.counts[m]));
    if (top === 0) return this.choice(this.moves);
    const favourites = this.moves.filter((m) => this.counts[m] === top);
    return this.answer(this.choice(favourites), this.counts);
  }
}
Frequency.botName = 'frequency-js';

chaosbot.run(Frequency);
