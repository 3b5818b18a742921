"""mcpwire's Python test peer (py_server.py's MCP server, unchanged) over Streamable HTTP with
TLS, for the TLS tests. Certificates come from py_tls_certs.py.

Usage:
    python py_tls_server.py --port N --cert FILE --key FILE [--client-ca FILE]

Listens on 127.0.0.1 (path /mcp) with the server certificate FILE and its key. With
`--client-ca`, the server requires a client certificate signed by that CA (mutual TLS) and
refuses the handshake without one. Ready when uvicorn prints "Uvicorn running on".

The server is imported as the module `py_server`, so the input keys of its elicitation
resolvers read `py_server:who` here instead of `__main__:who`.
"""

from __future__ import annotations

import argparse
import ssl

import anyio
import uvicorn

from py_server import server


async def serve(args: argparse.Namespace) -> None:
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


def main() -> None:
    parser = argparse.ArgumentParser(description="mcpwire's Python MCP test peer over TLS")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True, help="the server certificate (PEM)")
    parser.add_argument("--key", required=True, help="its private key (PEM)")
    parser.add_argument("--client-ca", help="require client certificates signed by this CA (PEM)")
    anyio.run(serve, parser.parse_args())


if __name__ == "__main__":
    main()
