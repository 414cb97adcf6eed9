#!/usr/bin/env python3
"""An MCP client on the real `mcp` SDK (tested with 2.3.0), driving a gangway
MCP server started as `argv[1:]` over stdio, or the one at the URL of
`--url <url> [--token <bearer token>]` over Streamable HTTP, and printing what
it saw as one JSON object on stdout for the Rust test to check.

Options before the server: `--server-stderr <file>` sends a stdio server's
standard error to the file (appended); `--cancel-witness <file> <sign>`
makes the client, once it has abandoned the slow call, keep the session
open until `<sign>` appears in `<file>` (where the server, or its host,
says that the handler saw the cancel), and report whether it did
(`cancel_seen`): so the cancel seen is the `notifications/cancelled` one,
not the session's end.

It initializes, lists the tools (validating every inputSchema and
outputSchema as JSON Schema 2020-12 and looking for null unions and `$ref`),
calls a command with a typed result (its structuredContent validated against
the tool's outputSchema), a typed command, a command whose stdin argument is
given as a string, a bytes stdin argument given as a string and as base64, a
failing command, a
misspelt argument, a tool the list did not offer, a call reporting progress, and a slow call it abandons
after 0.5 s (the SDK then sends `notifications/cancelled`).
"""

import base64
import json
import sys

import contextlib

import anyio
import jsonschema
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.types import REQUEST_TIMEOUT
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


def schema_problems(schema):
    """Null unions and `$ref`s anywhere in a schema."""
    problems = []

    def walk(node, path):
        if isinstance(node, dict):
            if "$ref" in node or "$defs" in node:
                problems.append(f"{path}: $ref/$defs")
            kind = node.get("type")
            if isinstance(kind, list) and "null" in kind:
                problems.append(f"{path}: null union")
            for key in ("anyOf", "oneOf"):
                for option in node.get(key, []):
                    if isinstance(option, dict) and option.get("type") == "null":
                        problems.append(f"{path}: null union in {key}")
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}/{index}")

    walk(schema, "")
    return problems


# How long the client waits for the server to say its handler saw the cancel:
# only a failure waits this long.
CANCEL_PATIENCE = 20


def options(argv):
    """The options before the server's arguments, and those arguments."""
    found = {}
    while argv[:1] in (["--server-stderr"], ["--cancel-witness"]):
        if argv[0] == "--server-stderr":
            found["server_stderr"], argv = argv[1], argv[2:]
        else:
            found["witness"], argv = (argv[1], argv[2]), argv[3:]
    return found, argv


async def main():
    with anyio.fail_after(60):  # a hung server fails the test, not hangs it
        await session_steps()


async def witnessed(witness):
    """Whether the sign shows up in the witness file within the patience."""
    path, sign = witness
    with anyio.move_on_after(CANCEL_PATIENCE):
        while True:
            try:
                with open(path, encoding="utf-8", errors="replace") as file:
                    if sign in file.read():
                        return True
            except FileNotFoundError:
                pass
            await anyio.sleep(0.02)
    return False


@contextlib.asynccontextmanager
async def connect(argv, server_stderr=None):
    """The streams to the server `argv` names: a command, or `--url`."""
    if argv[:1] != ["--url"]:
        server = StdioServerParameters(command=argv[0], args=argv[1:])
        if server_stderr is None:
            async with stdio_client(server) as streams:
                yield streams
            return
        with open(server_stderr, "a", encoding="utf-8") as errlog:
            async with stdio_client(server, errlog=errlog) as streams:
                yield streams
        return
    url = argv[1]
    headers = {}
    if argv[2:3] == ["--token"]:
        headers["Authorization"] = f"Bearer {argv[3]}"
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams


async def session_steps():
    seen = {}
    found, argv = options(sys.argv[1:])
    async with connect(argv, found.get("server_stderr")) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["server"] = init.server_info.name
            tools = (await session.list_tools()).tools
            by_name = {tool.name: tool for tool in tools}
            seen["tools"] = {}
            for tool in tools:
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                hints = tool.annotations
                output = tool.output_schema
                if output is not None:
                    jsonschema.Draft202012Validator.check_schema(output)
                seen["tools"][tool.name] = {
                    "annotations": hints.model_dump(by_alias=True, exclude_none=True) if hints else None,
                    "description": tool.description,
                    "root": tool.input_schema.get("type"),
                    "problems": schema_problems(tool.input_schema),
                    "output": output,
                    "output_problems": schema_problems(output) if output is not None else None,
                }
            outputs = {tool.name: tool.output_schema for tool in tools}

            async def typed(name, arguments):
                """A typed result: its structuredContent, whether it is valid
                against the tool's outputSchema, and whether its text is the
                same JSON."""
                result = await session.call_tool(name, arguments)
                structured = result.structured_content
                try:
                    jsonschema.Draft202012Validator(outputs[name]).validate(structured)
                    valid = True
                except jsonschema.ValidationError as error:
                    valid = error.message
                return {
                    "is_error": result.is_error,
                    "structured": structured,
                    "valid": valid,
                    "text_is_json": json.loads(text_of(result)) == structured,
                }

            seen["stats"] = await typed("stats", {"text": "one two\nthree"})
            seen["stats_empty"] = await typed("stats", {"text": ""})
            greet = await session.call_tool("greet", {"name": "ada", "loud": True})
            seen["greet"] = [greet.is_error, text_of(greet)]
            count = await session.call_tool("count_words", {"text": "one two three"})
            seen["count_words"] = [count.is_error, text_of(count)]
            # Bytes: text as a string, any bytes (here not UTF-8) as base64;
            # the tool's inputSchema takes both forms and no other.
            not_utf8 = {"base64": base64.b64encode(bytes([0xFF, 0x00, 0xFE, 0x80])).decode()}
            byte_schema = jsonschema.Draft202012Validator(by_name["count_bytes"].input_schema)
            seen["count_bytes_schema"] = [
                byte_schema.is_valid({"data": data}) for data in ("héllo", not_utf8, {"hex": "ff"})
            ]
            seen["count_bytes"] = []
            for data in ("héllo", not_utf8):
                counted = await session.call_tool("count_bytes", {"data": data})
                seen["count_bytes"].append([counted.is_error, text_of(counted)])
            fail = await session.call_tool("fail", {"why": "on purpose"})
            seen["fail"] = [fail.is_error, text_of(fail)]
            typo = await session.call_tool("greet", {"nmae": "ada"})
            seen["typo"] = [typo.is_error, text_of(typo)]
            # A tool the list did not offer.
            outside = await session.call_tool("reboot", {})
            seen["outside"] = [outside.is_error, text_of(outside)]
            progress = []

            async def on_progress(done, total, message):
                progress.append([done, total, message])

            countdown = await session.call_tool(
                "countdown", {"from": 3, "step_ms": 20}, progress_callback=on_progress
            )
            seen["countdown"] = [countdown.is_error, text_of(countdown)]
            seen["progress"] = progress
            try:
                await session.call_tool(
                    "countdown", {"from": 200, "step_ms": 50}, read_timeout_seconds=0.5
                )
                seen["abandoned"] = "answered"
            except MCPError as error:
                # The SDK's own timeout, and no other failure (an error the
                # server answered would have its own code).
                if error.code == REQUEST_TIMEOUT and error.message == "Request 'tools/call' timed out":
                    seen["abandoned"] = "MCPError"
                else:
                    seen["abandoned"] = f"MCPError {error.code}: {error.message}"
            if "witness" in found:
                # The session stays open meanwhile: only the cancel can stop it.
                seen["cancel_seen"] = await witnessed(found["witness"])
            # The server still answers after a cancelled call.
            after = await session.call_tool("greet", {"name": "bob"})
            seen["after"] = [after.is_error, text_of(after)]
    print(json.dumps(seen))


anyio.run(main)
