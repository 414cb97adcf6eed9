#!/usr/bin/env python3
"""Minimal MCP server used as a test peer for gangway.

Built on the real `mcp` SDK (tested with 2.3.0, where FastMCP is now
`mcp.server.mcpserver.MCPServer`). Speaks newline-delimited JSON-RPC 2.0 on
stdin/stdout and exits when stdin reaches EOF.

Tools:
  add(a: int, b: int) -> int   "Add two numbers"
  echo(text: str) -> str       "Echo the text back"
While serving, the SDK points fd 1 at stderr, so stray prints never reach the wire.
"""

import logging
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="gangway-test-mcp", version="0.1.0", log_level="WARNING")


@server.tool(description="Add two numbers")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    server.run("stdio")  # blocks until stdin EOF
