'use strict';
// The cheapest useful JavaScript bot (node, no packages, no JSON parsing), for
// benchmarks: the counterpart of pybot.py. Answers hello with a name and every
// turn with rock, echoing the round number; exits on end or end of input.
const fs = require('fs');

const HEAD = '{"type":"turn","round":';
let pending = '';
process.stdin.on('data', (chunk) => {
  pending += chunk.toString('latin1');
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.startsWith(HEAD)) {
      const round = line.slice(HEAD.length, line.indexOf(',', HEAD.length));
      fs.writeSync(1, '{"round":' + round + ',"real_move":"rock"}\n');
    } else if (line.startsWith('{"type":"hello"')) {
      fs.writeSync(1, '{"name":"jsbot"}\n');
    } else if (line.startsWith('{"type":"end"')) {
      process.exit(0);
    }
  }
});
process.stdin.on('end', () => process.exit(0));
