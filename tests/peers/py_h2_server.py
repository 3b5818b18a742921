"""mcpwire's HTTP/2 test peer: the same MCP app as `py_server.py http` (imported from it, unchanged)
served by Hypercorn (pinned in python-requirements.txt), which speaks HTTP/2.

Usage:
    python py_h2_server.py --port N [--tls-dir DIR] [--json] [--stateless] [--resumable]

Without `--tls-dir` it serves cleartext on 127.0.0.1: HTTP/1.1, and HTTP/2 to clients that
start with the HTTP/2 preface (h2c with prior knowledge). With `--tls-dir DIR` it first writes a
throwaway certificate authority and a server certificate for 127.0.0.1 and `localhost` into DIR
(`ca.pem`, `server.pem`, `server-key.pem`, made with the pinned `cryptography`), then serves TLS
offering `h2` and `http/1.1` by ALPN. The path is /mcp, as in py_server.py.

Each HTTP request is logged on stderr as one line, for the tests to count versions and
connections server-side:

    py_h2_server: request version=2 client=127.0.0.1:53124 method=POST path=/mcp rpc=tools/call

`rpc` is the JSON-RPC method of a POST's body (`-` for a response, a batch, or no body). The
line is written once the body has been read. Hypercorn prints `Running on ...` once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import ipaddress
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import py_server  # noqa: E402  (the MCP app; importing it starts nothing)
from hypercorn.asyncio import serve  # noqa: E402
from hypercorn.config import Config  # noqa: E402


def log(text: str) -> None:
    print(f"py_h2_server: {text}", file=sys.stderr, flush=True)


def write_certificates(directory: str) -> tuple[str, str]:
    """A throwaway CA (`ca.pem`) and a server certificate it signed for 127.0.0.1 and
    localhost (`server.pem`, key `server-key.pem`), valid for a day. Returns the server's
    certificate and key paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpwire test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )

    pem = serialization.Encoding.PEM
    cert_path = os.path.join(directory, "server.pem")
    key_path = os.path.join(directory, "server-key.pem")
    with open(os.path.join(directory, "ca.pem"), "wb") as f:
        f.write(ca.public_bytes(pem))
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(pem))
    with open(key_path, "wb") as f:
        f.write(
            key.private_bytes(
                pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return cert_path, key_path


def recording(app):
    """The ASGI app wrapped so that each HTTP request is logged with its version and client."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        client = scope.get("client") or ("-", 0)
        head = (
            f"version={scope.get('http_version', '?')} client={client[0]}:{client[1]} "
            f"method={scope['method']} path={scope['path']}"
        )
        if scope["method"] != "POST":
            log(f"request {head} rpc=-")
            return await app(scope, receive, send)

        body = bytearray()
        logged = False

        async def tapped():
            nonlocal logged
            message = await receive()
            if message["type"] == "http.request" and not logged:
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    logged = True
                    rpc = "-"
                    try:
                        parsed = json.loads(body)
                        if isinstance(parsed, dict) and isinstance(parsed.get("method"), str):
                            rpc = parsed["method"]
                    except ValueError:
                        pass
                    log(f"request {head} rpc={rpc}")
            return message

        return await app(scope, tapped, send)

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser(description="mcpwire's Python MCP test peer over HTTP/2")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-dir", help="write a throwaway CA and server certificate here, serve TLS")
    parser.add_argument("--json", action="store_true", help="plain JSON responses instead of SSE")
    parser.add_argument("--stateless", action="store_true", help="no sessions")
    parser.add_argument("--resumable", action="store_true", help="in-memory event store, retry 300 ms")
    args = parser.parse_args()

    extra = {}
    if args.resumable:
        py_server.server.add_tool(py_server.drop_stream_then_finish)
        extra = {"event_store": py_server.MemoryEventStore(), "retry_interval": 300}
    app = py_server.server.streamable_http_app(
        json_response=args.json, stateless_http=args.stateless, host="127.0.0.1", **extra
    )

    config = Config()
    config.bind = [f"127.0.0.1:{args.port}"]
    config.errorlog = "-"
    config.accesslog = None
    if args.tls_dir:
        config.certfile, config.keyfile = write_certificates(args.tls_dir)
        config.alpn_protocols = ["h2", "http/1.1"]
    asyncio.run(serve(recording(app), config))


if __name__ == "__main__":
    main()
