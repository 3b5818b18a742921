// The minimal MCP server's answers, shared by its stdio face (`min_server.mjs`) and its https face
// (`min_https_server.mjs`): no SDK, answered at once, so that a benchmark sees the client's own
// cost. It speaks the handshake era only:
//   initialize                 -> protocol version, a tools capability, serverInfo
//   notifications/*            -> ignored
//   ping                       -> {}
//   tools/list                 -> one tool, `echo(message: string)`
//   tools/call echo            -> the `message` argument as one text content block
//   server/discover, the rest  -> -32601 method not found (so a client that probes for the
//                                 stateless era falls back to the handshake at once)

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
  return { jsonrpc: '2.0', id, result };
}

export function fail(id, code, message) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The answer to one JSON-RPC message: a response object, or null for a notification. */
export function answer(msg) {
  if (msg === null || typeof msg !== 'object' || typeof msg.method !== 'string') return null;
  const { id, method, params } = msg;
  if (id === undefined) return null; // a notification
  switch (method) {
    case 'initialize': {
      const asked = params && params.protocolVersion;
      return reply(id, {
        protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
        capabilities: { tools: {} },
        serverInfo: { name: 'mcpwire-bench-min', version: '1.0.0' },
      });
    }
    case 'ping':
      return reply(id, {});
    case 'tools/list':
      return reply(id, { tools: [ECHO_TOOL] });
    case 'tools/call': {
      const name = params && params.name;
      const args = (params && params.arguments) || {};
      if (name !== 'echo' || typeof args.message !== 'string') {
        return fail(id, -32602, 'unknown tool or bad arguments');
      }
      return reply(id, { content: [{ type: 'text', text: args.message }] });
    }
    default:
      return fail(id, -32601, `method not found: ${method}`);
  }
}
