"""The benchmark's Python server: the repository's Python test peer (`tests/peers/py_server.py`,
imported unchanged) plus an `echo(message)` tool that returns its argument as text, served as
Streamable HTTP with plain JSON responses on 127.0.0.1.

Usage:
    tests/peers/pyvenv/bin/python tests/bench/servers/py_bench_server.py --port N \
        [--tls-cert CERT.pem --tls-key KEY.pem]

Logging is cut to warnings (no line per request on either side of the server), so readiness is
told by the port accepting connections. Request bodies up to 64 MiB are taken (the 8 MiB echo).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "peers"))

import py_server  # noqa: E402  (the MCP app; importing it starts nothing)


@py_server.server.tool(structured_output=False)
def echo(message: str) -> str:
    """Echoes back the input string."""
    return message


def main() -> None:
    parser = argparse.ArgumentParser(description="mcpwire benchmark's Python server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-cert", help="serve https with this certificate (PEM)")
    parser.add_argument("--tls-key", help="and this key (PEM)")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    py_server.server.settings.log_level = "WARNING"
    if args.tls_cert:
        import uvicorn

        app = py_server.server.streamable_http_app(
            json_response=True, max_request_body_size=64 * 1024 * 1024, host="127.0.0.1"
        )
        uvicorn.run(
            app,
            host="127.0.0.1",
            port=args.port,
            log_level="warning",
            ssl_certfile=args.tls_cert,
            ssl_keyfile=args.tls_key,
        )
        return
    py_server.server.run(
        "streamable-http",
        host="127.0.0.1",
        port=args.port,
        json_response=True,
        max_request_body_size=64 * 1024 * 1024,
    )


if __name__ == "__main__":
    main()
