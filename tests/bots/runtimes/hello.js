// A hello-world protocol bot for node (libuv's thread pool and event loop).
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin });
let greeted = false;
rl.on("line", (line) => {
  if (!greeted) {
    greeted = true;
    process.stdout.write('{"name": "hello-node"}\n');
  } else if (line.includes('"end"')) {
    rl.close();
  } else {
    process.stdout.write('{"real_move": "rock"}\n');
  }
});
