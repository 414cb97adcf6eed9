#!/usr/bin/env python3
"""Minimal deterministic ACP agent used as a test peer for gangway.

Built on the real `agent-client-protocol` SDK (import name `acp`, tested with
0.12.1). Speaks newline-delimited JSON-RPC 2.0 on stdin/stdout and exits when
stdin reaches EOF.

Behaviour:
  initialize      -> {"protocolVersion": 1, "agentCapabilities": {...}, ...}
  session/new     -> {"sessionId": "sess-1"} (then "sess-2", ...)
  session/prompt  -> 1. session/update agent_message_chunk "echo: <prompt text>"
                     2. session/update agent_message_chunk "asking permission"
                     3. session/request_permission (agent->client request,
                        options "allow" / "reject"), awaits the answer
                     4. session/update agent_message_chunk
                        "permission: <optionId>" or "permission: cancelled"
                     5. responds {"stopReason": "end_turn"}
Nothing but JSON-RPC frames is written to stdout; SDK logs go to stderr.
"""

import asyncio
import logging
import sys
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    update_agent_message_text,
)
from acp.schema import AgentCapabilities, AllowedOutcome, Implementation, PermissionOption, ToolCallUpdate


class EchoAgent:
    """Implements the subset of the `acp.Agent` protocol the tests need."""

    def __init__(self) -> None:
        self._conn: Any = None  # AgentSideConnection (the client proxy)
        self._next_session = 0

    def on_connect(self, conn: Any) -> None:
        # Called by the SDK with the object used to talk back to the client.
        self._conn = conn

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs):
        # Only fields set explicitly are serialised (the SDK dumps with exclude_unset).
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=False),
            agent_info=Implementation(name="gangway-test-agent", version="0.1.0"),
        )

    async def new_session(self, cwd: str, mcp_servers=None, **kwargs):
        self._next_session += 1
        return NewSessionResponse(session_id=f"sess-{self._next_session}")

    async def prompt(self, session_id: str, prompt: list, **kwargs):
        text = " ".join(getattr(block, "text", "") for block in prompt if getattr(block, "type", "") == "text")

        # (a) two streamed updates; each await returns once the line is written.
        await self._conn.session_update(session_id, update_agent_message_text(f"echo: {text}"))
        await self._conn.session_update(session_id, update_agent_message_text("asking permission"))

        # (b) agent -> client request; blocks until the client answers.
        try:
            resp = await self._conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="call-1", title="demo action", kind="other", status="pending"),
                options=[
                    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
            outcome = resp.outcome
            choice = outcome.option_id if isinstance(outcome, AllowedOutcome) else "cancelled"
        except Exception as exc:  # e.g. client answered with a JSON-RPC error
            choice = f"error ({exc})"

        # (c) report the choice, then end the turn.
        await self._conn.session_update(session_id, update_agent_message_text(f"permission: {choice}"))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs) -> None:
        pass


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    asyncio.run(run_agent(EchoAgent()))  # returns when stdin hits EOF
    return 0


if __name__ == "__main__":
    sys.exit(main())
