// The minimal MCP server over stdio: JSONL in, JSONL out, each line answered at once by
// `min_answers.mjs` (what it answers is described there).
import { createInterface } from 'node:readline';
import { answer, fail } from './min_answers.mjs';

function send(msg) {
  if (msg !== null) process.stdout.write(JSON.stringify(msg) + '\n');
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (line.length === 0) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    send(fail(null, -32700, 'parse error'));
    return;
  }
  send(answer(msg));
});
lines.on('close', () => process.exit(0));
