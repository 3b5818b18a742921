// A minimal MCP server over stdio with no SDK: JSONL in, JSONL out, answered at once, so that a
// benchmark sees the client's own cost. It speaks the handshake era only:
//   initialize                 -> protocol version, a tools capability, serverInfo
//   notifications/*            -> ignored
//   ping                       -> {}
//   tools/list                 -> one tool, `echo(message: string)`
//   tools/call echo            -> the `message` argument as one text content block
//   server/discover, the rest  -> -32601 method not found (so a client that probes for the
//                                 stateless era falls back to the handshake at once)
import { createInterface } from 'node:readline';

const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const ECHO_TOOL = {
  name: 'echo',
  description: 'Echoes back the input string',
  inputSchema: {
    type: 'object',
    properties: { message: { type: 'string', description: 'Message to echo' } },
    required: ['message'],
  },
};

function reply(id, result) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\n');
}

function fail(id, code, message) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n');
}

function handle(msg) {
  if (msg === null || typeof msg !== 'object' || typeof msg.method !== 'string') return;
  const { id, method, params } = msg;
  if (id === undefined) return; // a notification
  switch (method) {
    case 'initialize': {
      const asked = params && params.protocolVersion;
      reply(id, {
        protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
        capabilities: { tools: {} },
        serverInfo: { name: 'mcpwire-bench-min', version: '1.0.0' },
      });
      return;
    }
    case 'ping':
      reply(id, {});
      return;
    case 'tools/list':
      reply(id, { tools: [ECHO_TOOL] });
      return;
    case 'tools/call': {
      const name = params && params.name;
      const args = (params && params.arguments) || {};
      if (name !== 'echo' || typeof args.message !== 'string') {
        fail(id, -32602, 'unknown tool or bad arguments');
        return;
      }
      reply(id, { content: [{ type: 'text', text: args.message }] });
      return;
    }
    default:
      fail(id, -32601, `method not found: ${method}`);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (line.length === 0) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    fail(null, -32700, 'parse error');
    return;
  }
  handle(msg);
});
lines.on('close', () => process.exit(0));
