"""mcpwire's Python test peer: a small MCP server on the pinned `mcp` package (see
python-requirements.txt), used by the end-to-end tests to talk to the reference SDK.

Usage:
    python py_server.py stdio
    python py_server.py http [--port N] [--json] [--stateless] [--resumable]
    python py_server.py sse [--port N]     (the 2024-11-05 HTTP+SSE transport: GET /sse)

HTTP listens on 127.0.0.1 only (path /mcp, default port 8765). `--json` answers with plain
JSON instead of SSE, `--stateless` runs without sessions, and `--resumable` keeps every SSE
event in memory (so streams carry event ids and can be resumed with Last-Event-ID), sets the
SSE `retry:` hint to 300 ms and adds the tool `drop_stream_then_finish`.

The same process speaks both protocol eras; its first message decides which:
- 2025-11-25 (initialize handshake): elicitation is a server-to-client `elicitation/create`
  request sent in the middle of the tool call;
- 2026-07-28 (`server/discover`, a `_meta` envelope on every request): a tool that needs
  input answers with `resultType: "input_required"` and the client retries the call with
  `inputResponses` and the echoed `requestState`.

Tools: add, greet, ask_name, two_questions, slow, fail (and drop_stream_then_finish).
Resource: py://readme (and the template py://echo/{text}). Prompt: greeting.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http import EventMessage, EventStore

SERVER_NAME = "mcpwire-py-server"
SERVER_VERSION = "1.0.0"

server = MCPServer(SERVER_NAME, version=SERVER_VERSION, instructions="Test peer for mcpwire.")


def log(text: str) -> None:
    """A diagnostic line on stderr (stdout belongs to the protocol on stdio)."""
    print(f"py_server: {text}", file=sys.stderr, flush=True)


# ---- elicitation schemas and resolvers -------------------------------------------------------


class Person(BaseModel):
    name: str


class Colour(BaseModel):
    colour: str


def who() -> Elicit[Person]:
    """Asks for the caller's name. Its input key on the wire is `__main__:who`."""
    return Elicit("What is your name?", Person)


def favourite_colour(person: Annotated[Person, Resolve(who)]) -> Elicit[Colour]:
    """Asked only once `who` is answered, so the two questions take two rounds in 2026-07-28.
    The question names the first answer, which shows the state was carried between rounds."""
    return Elicit(f"Which colour do you like, {person.name}?", Colour)


# ---- tools ---------------------------------------------------------------------------------


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def greet(person: Annotated[Person, Resolve(who)]) -> str:
    """Greet the caller, asking for their name first (works in both protocol eras)."""
    return f"Hello, {person.name}!"


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask for a name with a mid-call elicitation/create (2025-11-25 era only)."""
    answer = await ctx.elicit("What is your name?", Person)
    if answer.action == "accept":
        return f"accepted: {answer.data.name}"
    return answer.action


@server.tool()
async def two_questions(
    person: Annotated[Person, Resolve(who)],
    colour: Annotated[Colour, Resolve(favourite_colour)],
) -> str:
    """Ask for a name, then for a favourite colour (two rounds of input in 2026-07-28)."""
    return f"{person.name} likes {colour.colour}"


@server.tool()
async def slow(ctx: Context, steps: int = 3, delay: float = 0.5) -> str:
    """Report progress `steps` times, `delay` seconds apart, then finish. Cancellable."""
    done = 0
    try:
        for i in range(1, steps + 1):
            await anyio.sleep(delay)
            await ctx.report_progress(i, steps, f"step {i}")
            done = i
    except anyio.get_cancelled_exc_class():
        log(f"slow cancelled after {done} of {steps} steps")
        raise
    return f"done after {steps} steps"


@server.tool()
def fail(message: str = "it failed") -> str:
    """Always fails: a tool result with isError true and `message` as its text."""
    raise ToolError(message)


async def drop_stream_then_finish(ctx: Context) -> str:
    """Report progress, close this request's SSE stream (the client has to resume it with
    Last-Event-ID), wait a second, report again and finish."""
    await ctx.report_progress(1, 2, "before the stream drops")
    await ctx.close_sse_stream()
    await anyio.sleep(1.0)
    await ctx.report_progress(2, 2, "after the stream dropped")
    return "finished after the stream dropped"


# ---- resources and prompts -------------------------------------------------------------------


@server.resource("py://readme", name="readme", description="A static text.", mime_type="text/plain")
def readme() -> str:
    return "mcpwire Python test peer.\n"


@server.resource("py://echo/{text}", name="echo", description="Echoes the URI's last segment.")
def echo(text: str) -> str:
    return text


@server.prompt(description="A one-message prompt that greets `name`.")
def greeting(name: str) -> str:
    return f"Please greet {name}."


# ---- resumability --------------------------------------------------------------------------


class MemoryEventStore(EventStore):
    """Keeps every SSE event of the process in memory so that a stream can be resumed.

    Event ids are `ev-1`, `ev-2`, ... across all streams; a replay sends the later events
    of the stream that the given id belongs to (priming events, which carry no message,
    are skipped)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._stream_of: dict[str, str] = {}  # event id -> stream id
        self._streams: dict[str, list[tuple[str, object]]] = {}  # stream id -> [(event id, message)]

    async def store_event(self, stream_id, message):
        event_id = f"ev-{next(self._ids)}"
        self._stream_of[event_id] = stream_id
        self._streams.setdefault(stream_id, []).append((event_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        stream_id = self._stream_of.get(last_event_id)
        if stream_id is None:
            return None
        events = self._streams[stream_id]
        position = next(i for i, (event_id, _) in enumerate(events) if event_id == last_event_id)
        for event_id, message in events[position + 1 :]:
            if message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


# ---- entry point ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description="mcpwire's Python MCP test peer")
    sub = parser.add_subparsers(dest="transport", required=True)
    sub.add_parser("stdio", help="serve on stdin/stdout")
    http = sub.add_parser("http", help="serve Streamable HTTP on 127.0.0.1")
    http.add_argument("--port", type=int, default=8765)
    http.add_argument("--json", action="store_true", help="plain JSON responses instead of SSE")
    http.add_argument("--stateless", action="store_true", help="no sessions")
    http.add_argument("--resumable", action="store_true", help="in-memory event store, retry 300 ms")
    sse = sub.add_parser("sse", help="serve the 2024-11-05 HTTP+SSE transport on 127.0.0.1")
    sse.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()

    if args.transport == "stdio":
        server.run("stdio")
        return
    if args.transport == "sse":
        server.run("sse", host="127.0.0.1", port=args.port)
        return

    extra = {}
    if args.resumable:
        server.add_tool(drop_stream_then_finish)
        extra = {"event_store": MemoryEventStore(), "retry_interval": 300}
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=args.port,
        json_response=args.json,
        stateless_http=args.stateless,
        **extra,
    )


if __name__ == "__main__":
    main()
