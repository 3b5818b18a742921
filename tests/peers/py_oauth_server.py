"""An MCP server that needs OAuth, with its own authorization server, for mcpwire's tests.

Python's standard library only; listens on 127.0.0.1. The MCP endpoint (`/mcp`, handshake
era, JSON bodies) takes only tokens this server issued and answers `401` with a
`WWW-Authenticate` challenge naming its Protected Resource Metadata otherwise. The
authorization server beside it (same origin) serves RFC 8414 metadata, dynamic registration,
an authorization endpoint that approves at once with a `302` to the redirect URI (PKCE S256
required, `iss` added), and a token endpoint for codes and refresh tokens.

    python py_oauth_server.py --port PORT [--lifetime SECONDS]

Prints `oauth server ready on PORT` on stderr when it listens. `GET /issued` lists the access
tokens issued, for tests that check a token never shows where it must not; `GET /clients` the
client ids registered, for tests that check no client is registered without a sign-in.
"""

import argparse
import base64
import hashlib
import json
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
CLIENTS = {}  # client_id -> registration
CODES = {}  # code -> (client_id, challenge, redirect_uri, resource, scope)
ACCESS = set()
REFRESH = {}  # refresh token -> (client_id, resource, scope)
ISSUED = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    lifetime = 3600

    def log_message(self, *args):
        pass

    @property
    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def send(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return self.send(200, {
                "resource": f"{self.base}/mcp",
                "authorization_servers": [self.base],
                "scopes_supported": ["mcp:tools"],
            })
        if url.path == "/.well-known/oauth-authorization-server":
            return self.send(200, {
                "issuer": self.base,
                "authorization_endpoint": f"{self.base}/authorize",
                "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "scopes_supported": ["mcp:tools", "offline_access"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
            })
        if url.path == "/authorize":
            return self.authorize(dict(urllib.parse.parse_qsl(url.query)))
        if url.path == "/issued":
            with LOCK:
                return self.send(200, list(ISSUED))
        if url.path == "/clients":
            with LOCK:
                return self.send(200, list(CLIENTS))
        if url.path == "/mcp":
            return self.send(405)
        return self.send(404)

    def authorize(self, q):
        with LOCK:
            client = CLIENTS.get(q.get("client_id"))
        if (client is None or q.get("response_type") != "code"
                or q.get("code_challenge_method") != "S256" or not q.get("code_challenge")
                or q.get("redirect_uri") not in client["redirect_uris"]):
            return self.send(400, {"error": "invalid_request"})
        code = secrets.token_urlsafe(16)
        with LOCK:
            CODES[code] = (q["client_id"], q["code_challenge"], q["redirect_uri"],
                           q.get("resource"), q.get("scope", ""))
        query = urllib.parse.urlencode({"code": code, "state": q.get("state", ""),
                                        "iss": self.base})
        self.send(302, None, [("Location", f"{q['redirect_uri']}?{query}")])

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/register":
            asked = json.loads(self.body() or b"{}")
            client_id = "client-" + secrets.token_hex(6)
            registration = {
                "client_id": client_id,
                "client_id_issued_at": 0,
                "token_endpoint_auth_method": "none",
                "redirect_uris": asked.get("redirect_uris", []),
                "grant_types": asked.get("grant_types", ["authorization_code"]),
                "response_types": ["code"],
            }
            with LOCK:
                CLIENTS[client_id] = registration
            return self.send(201, registration)
        if url.path == "/token":
            return self.token(dict(urllib.parse.parse_qsl(self.body().decode())))
        if url.path == "/mcp":
            return self.mcp()
        return self.send(404)

    def issue(self, client_id, resource, scope):
        access = "tok-" + secrets.token_urlsafe(12)
        refresh = "ref-" + secrets.token_urlsafe(12)
        with LOCK:
            ACCESS.add(access)
            ISSUED.append(access)
            REFRESH[refresh] = (client_id, resource, scope)
        return self.send(200, {"access_token": access, "token_type": "Bearer",
                               "expires_in": self.lifetime, "refresh_token": refresh,
                               "scope": scope})

    def token(self, f):
        grant = f.get("grant_type")
        if grant == "authorization_code":
            with LOCK:
                found = CODES.pop(f.get("code"), None)
            if found is None:
                return self.send(400, {"error": "invalid_grant"})
            client_id, challenge, redirect_uri, resource, scope = found
            verifier = f.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            if (digest.rstrip(b"=").decode() != challenge or f.get("client_id") != client_id
                    or f.get("redirect_uri") != redirect_uri or f.get("resource") != resource):
                return self.send(400, {"error": "invalid_grant"})
            return self.issue(client_id, resource, scope)
        if grant == "refresh_token":
            with LOCK:
                found = REFRESH.pop(f.get("refresh_token"), None)
            if found is None:
                return self.send(400, {"error": "invalid_grant"})
            return self.issue(*found)
        return self.send(400, {"error": "unsupported_grant_type"})

    def mcp(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        body = self.body()
        with LOCK:
            ok = token in ACCESS
        if not ok:
            challenge = (f'Bearer error="invalid_token", resource_metadata='
                         f'"{self.base}/.well-known/oauth-protected-resource/mcp"')
            return self.send(401, {"error": "invalid_token"},
                             [("WWW-Authenticate", challenge)])
        message = json.loads(body or b"{}")
        method, mid = message.get("method"), message.get("id")
        if mid is None:
            return self.send(202)
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "guarded", "version": "1.0.0"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "description": "Says who signed in.",
                                 "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "signed in"}]}
        elif method == "ping":
            result = {}
        else:
            return self.send(200, {"jsonrpc": "2.0", "id": mid,
                                   "error": {"code": -32601, "message": "Method not found"}})
        self.send(200, {"jsonrpc": "2.0", "id": mid, "result": result})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--lifetime", type=int, default=3600)
    args = parser.parse_args()
    Handler.lifetime = args.lifetime
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"oauth server ready on {server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
