'use strict';
/*
 * pattern-js: plays one fixed pattern of 97 moves over and over. The pattern is
 * drawn from the seed at the start (so it differs between matches but never
 * within one). Frequencies look random; any history matcher locks on after one
 * period, short-context models never quite do.
 */
const chaosbot = require('./chaosbot');

const LENGTH = 97;

class Pattern extends chaosbot.Bot {
  constructor(hello, seed) {
    super(hello, seed);
    this.pattern = [];
    for (let i = 0; i < LENGTH; i++) this.pattern.push(this.choice(this.moves));
  }

  move(turn) {
    return this.pattern[(turn.round - 1) % LENGTH];
  }
}
Pattern.botName = 'pattern-js';

chaosbot.run(Pattern);
