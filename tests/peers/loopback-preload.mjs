// Loaded with `node --import` in front of a test peer: a server that listens on a port without
// naming a host (as Express's `app.listen(PORT)` does) binds 127.0.0.1 instead of every
// interface, so the peer is reachable from this machine only. Unix socket paths and explicit
// hosts are left alone.
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const originalListen = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^[0-9]+$/.test(value));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first] = args;
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    // listen({ port, host, path, ... }, cb)
    if (first.path === undefined && first.host === undefined) {
      args[0] = { ...first, host: LOOPBACK };
    }
  } else if (isPort(first)) {
    // listen(port, [host], [backlog], [cb])
    if (typeof args[1] !== 'string') {
      args.splice(1, 0, LOOPBACK);
    }
  } else if (args.length === 0 || typeof first === 'function') {
    // listen([cb]): a random port
    args.unshift(0, LOOPBACK);
  }
  return originalListen.apply(this, args);
};
