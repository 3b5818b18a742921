"""mcpwire's Python test peer (py_server.py's MCP server, unchanged) over Streamable HTTP with
TLS, for the TLS tests. Certificates come from py_tls_certs.py.

Usage:
    python py_tls_server.py --port N --cert FILE --key FILE [--client-ca FILE] [--handshake-only]

Listens on 127.0.0.1 (path /mcp) with the server certificate FILE and its key. With
`--client-ca`, the server requires a client certificate signed by that CA (mutual TLS) and
refuses the handshake without one. Ready when uvicorn prints "Uvicorn running on".

Python's asyncio TLS (under uvicorn) closes a refused connection without sending the TLS
alert, so a client cannot tell why. `--handshake-only` serves no MCP: each connection gets a
blocking TLS handshake (which does send the alert, `certificate_required` under TLS 1.3),
logged on stderr as `py_tls_server: refused: ...` or `py_tls_server: handshake done`, then
is closed. Ready when it prints "py_tls_server: listening".

The server is imported as the module `py_server`, so the input keys of its elicitation
resolvers read `py_server:who` here instead of `__main__:who`.
"""

from __future__ import annotations

import argparse
import socket
import ssl
import sys
import threading

import anyio
import uvicorn


async def serve(args: argparse.Namespace) -> None:
    from py_server import server

    app = server.streamable_http_app(host="127.0.0.1")
    extra = {}
    if args.client_ca:
        extra = {"ssl_ca_certs": args.client_ca, "ssl_cert_reqs": ssl.CERT_REQUIRED}
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=args.port,
        log_level="info",
        ssl_certfile=args.cert,
        ssl_keyfile=args.key,
        **extra,
    )
    await uvicorn.Server(config).serve()


def log(text: str) -> None:
    print(f"py_tls_server: {text}", file=sys.stderr, flush=True)


def handshake_only(args: argparse.Namespace) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    if args.client_ca:
        context.load_verify_locations(args.client_ca)
        context.verify_mode = ssl.CERT_REQUIRED

    def handshake(conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                # Under TLS 1.3 the server checks the client's certificate on its first read.
                tls.recv(1)
                log("handshake done")
        except (OSError, ssl.SSLError) as e:
            log(f"refused: {e}")

    listener = socket.create_server(("127.0.0.1", args.port))
    log("listening")
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=handshake, args=(conn,), daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description="mcpwire's Python MCP test peer over TLS")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True, help="the server certificate (PEM)")
    parser.add_argument("--key", required=True, help="its private key (PEM)")
    parser.add_argument("--client-ca", help="require client certificates signed by this CA (PEM)")
    parser.add_argument("--handshake-only", action="store_true", help="TLS handshakes only, no MCP")
    args = parser.parse_args()
    if args.handshake_only:
        handshake_only(args)
        return
    anyio.run(serve, args)


if __name__ == "__main__":
    main()
