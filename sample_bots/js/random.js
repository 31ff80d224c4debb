'use strict';
/*
 * random-js: a uniformly random move every round, from the helper's mulberry32
 * generator seeded with the hello seed (so a re-run is identical). Nothing beats
 * it in expectation; it beats nothing.
 */
const chaosbot = require('./chaosbot');

class RandomBot extends chaosbot.Bot {
  move(turn) {
    return this.choice(this.moves);
  }
}
RandomBot.botName = 'random-js';

chaosbot.run(RandomBot);
