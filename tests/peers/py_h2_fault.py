"""A scripted HTTP/2 fault server (h2c with prior knowledge, on the pinned `h2` library) for
mcpwire's at-most-once tests. It is a minimal handshake-era (2025-11-25) MCP server answering
plain JSON, whose tools/call answers depend on the tool's name:

    refuse_once   the first call's stream is refused with RST_STREAM(REFUSED_STREAM): the
                  server did not process it (RFC 9113, section 8.7); later calls are answered
    goaway_once   the first call gets GOAWAY naming the stream before it as the last one
                  processed, then the connection closes: not processed either
    reset         the stream is reset with RST_STREAM(INTERNAL_ERROR) after the server read
                  it: it may have been processed
    vanish        the connection closes without a word after the server read it: it may have
                  been processed
    (any other)   `{"content":[{"type":"text","text":"ok <name>"}]}`

Other answers: `initialize` gets a result with session `s-1`; a notification or a response gets
202; any other request gets an empty result; a GET or a DELETE gets 405.

Usage:
    python py_h2_fault.py --port N

Each request is logged on stderr once its body is in:

    py_h2_fault: request client=127.0.0.1:53124 stream=5 method=POST rpc=tools/call tool=add action=answered

It prints `listening on 127.0.0.1:N` once it accepts connections. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions


def log(text: str) -> None:
    print(f"py_h2_fault: {text}", file=sys.stderr, flush=True)


class Script:
    """How many times each tool was called, across connections."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: dict[str, int] = {}

    def count(self, tool: str) -> int:
        """This call's number for `tool`, from 1."""
        with self.lock:
            self.calls[tool] = self.calls.get(tool, 0) + 1
            return self.calls[tool]


class Vanish(Exception):
    """Close the connection now, without a word."""


def answer(conn, stream_id: int, status: int, body: bytes | None, extra=()) -> None:
    headers = [(":status", str(status))] + list(extra)
    if body is None:
        conn.send_headers(stream_id, headers, end_stream=True)
        return
    headers += [("content-type", "application/json"), ("content-length", str(len(body)))]
    conn.send_headers(stream_id, headers)
    conn.send_data(stream_id, body, end_stream=True)


def handle(conn, script: Script, client: str, stream_id: int, head: dict, body: bytes) -> None:
    """Answers one request. Raises Vanish to close the connection."""
    method = head.get(":method", "?")
    rpc, rid, message, tool = "-", None, None, "-"
    try:
        message = json.loads(body) if body else None
    except ValueError:
        pass
    if isinstance(message, dict):
        rpc = message.get("method", "-")
        rid = message.get("id")
        if rpc == "tools/call":
            tool = (message.get("params") or {}).get("name", "?")

    def done(action: str) -> None:
        log(
            f"request client={client} stream={stream_id} method={method} rpc={rpc} "
            f"tool={tool} action={action}"
        )

    if method != "POST":
        answer(conn, stream_id, 405, None)
        return done("405")
    if rpc == "-" or rid is None:
        answer(conn, stream_id, 202, None)
        return done("202")
    if rpc == "tools/call":
        n = script.count(tool)
        if tool == "refuse_once" and n == 1:
            conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
            return done("refused")
        if tool == "goaway_once" and n == 1:
            conn.close_connection(
                error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=max(stream_id - 2, 0)
            )
            done("goaway")
            raise Vanish()
        if tool == "reset":
            conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
            return done("reset")
        if tool == "vanish":
            done("vanished")
            raise Vanish()
    if rpc == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "h2-fault", "version": "1"},
        }
        extra = [("mcp-session-id", "s-1")]
    elif rpc == "tools/call":
        result = {"content": [{"type": "text", "text": f"ok {tool}"}]}
        extra = []
    else:
        result, extra = {}, []
    reply = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
    answer(conn, stream_id, 200, reply, extra)
    done("answered")


def serve_connection(sock: socket.socket, script: Script, client: str) -> None:
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    heads: dict[int, dict] = {}
    bodies: dict[int, bytearray] = {}
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    heads[event.stream_id] = dict(event.headers)
                    bodies[event.stream_id] = bytearray()
                elif isinstance(event, h2.events.DataReceived):
                    bodies.setdefault(event.stream_id, bytearray()).extend(event.data)
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    sid = event.stream_id
                    head, body = heads.pop(sid, {}), bytes(bodies.pop(sid, b""))
                    try:
                        handle(conn, script, client, sid, head, body)
                    except Vanish:
                        sock.sendall(conn.data_to_send())
                        return
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
    except (OSError, h2.exceptions.ProtocolError) as e:
        log(f"connection {client} ended: {e!r}")
    finally:
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="HTTP/2 (h2c) fault server for mcpwire's tests")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    script = Script()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(16)
    log(f"listening on 127.0.0.1:{args.port}")
    while True:
        sock, (host, port) = listener.accept()
        log(f"connection from {host}:{port}")
        threading.Thread(
            target=serve_connection, args=(sock, script, f"{host}:{port}"), daemon=True
        ).start()


if __name__ == "__main__":
    main()
