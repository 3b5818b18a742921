// The minimal MCP server over Streamable HTTP, with TLS or plain: each POSTed message answered at
// once, as JSON, by `min_answers.mjs` (what it answers is described there). It exists so that a
// benchmark of many calls in flight over https or http measures the clients, not a server that
// saturates first.
//
// Usage: node min_https_server.mjs --port N [--tls-cert CERT.pem --tls-key KEY.pem]
//   (without the certificate: plain http://)
//
//   POST /mcp, a request      -> 200, application/json, the answer
//   POST /mcp, a notification -> 202, no body
//   GET /mcp                  -> 405 (no server stream)
//   DELETE /mcp               -> 200 (the session ends; sessions are not checked)
// The answer to `initialize` carries an `Mcp-Session-Id`, as a stateful server's does.
// It listens on 127.0.0.1 only; connections are kept alive.
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { answer, fail } from './min_answers.mjs';

const MAX_BODY = 64 * 1024 * 1024;

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    console.error(`usage: min_https_server.mjs --port N --tls-cert CERT --tls-key KEY (missing ${name})`);
    process.exit(2);
  }
  return process.argv[i + 1];
}

const tls = process.argv.includes('--tls-cert');

function handle(req, res) {
  if (req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  if (req.method === 'GET') {
    res.writeHead(405, { Allow: 'POST, DELETE' }).end();
    return;
  }
  if (req.method === 'DELETE') {
    res.writeHead(200).end();
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST, DELETE' }).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) {
      res.writeHead(413).end();
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    let msg;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      const body = JSON.stringify(fail(null, -32700, 'parse error'));
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(body);
      return;
    }
    const out = answer(msg);
    if (out === null) {
      res.writeHead(202).end();
      return;
    }
    const headers = { 'Content-Type': 'application/json' };
    if (msg.method === 'initialize' && out.result) headers['Mcp-Session-Id'] = randomUUID();
    res.writeHead(200, headers).end(JSON.stringify(out));
  });
}

const server = tls
  ? createHttpsServer(
      { cert: readFileSync(arg('--tls-cert')), key: readFileSync(arg('--tls-key')), ALPNProtocols: ['http/1.1'] },
      handle,
    )
  : createHttpServer(handle);
server.keepAliveTimeout = 60_000;
server.listen(Number(arg('--port')), '127.0.0.1');
