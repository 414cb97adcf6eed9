#!/usr/bin/env node
// Closes a Streamable HTTP session while a call runs, with the real
// TypeScript SDK: connects to `--url <url> --token <bearer token>`, starts
// `countdown` (20 s of steps), and once its first progress report arrived
// (the handler runs) ends the session (the SDK's `DELETE`) without
// cancelling the call. It prints the progress reached when it closed the
// session, the status the server answered the `DELETE` with, and the
// status of a request sent with the closed session's id afterwards; the
// Rust test reads from the server's stderr how soon the handler saw the
// cancellation.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

setTimeout(() => {
  console.error("mcp_session_close.mjs: no answer within 30 s");
  process.exit(1);
}, 30_000).unref();

const [, , urlFlag, url, tokenFlag, token] = process.argv;
if (urlFlag !== "--url" || tokenFlag !== "--token") {
  console.error("usage: mcp_session_close.mjs --url <url> --token <bearer token>");
  process.exit(2);
}
const authorization = { Authorization: `Bearer ${token}` };
// The SDK takes a 405 as a closed session too: the status is kept to be
// checked.
let deleteStatus = null;
const recording = async (input, init) => {
  const response = await fetch(input, init);
  if (init?.method === "DELETE") deleteStatus = response.status;
  return response;
};
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: authorization },
  fetch: recording,
});
const client = new Client({ name: "gangway-test", version: "1.0.0" });
await client.connect(transport);
const sessionId = transport.sessionId;
// Its answer never comes: the session ends first.
let reached = null;
const running = new Promise((resolve) => {
  client
    .callTool({ name: "countdown", arguments: { from: 400, step_ms: 50 } }, undefined, {
      onprogress: (update) => {
        reached = update.progress;
        resolve();
      },
    })
    .catch(() => {});
});
await running;
const progressAtClose = reached;
await transport.terminateSession();
// The closed session's id is not served any more.
const after = await fetch(url, {
  method: "POST",
  headers: {
    ...authorization,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "mcp-session-id": sessionId,
    "mcp-protocol-version": transport.protocolVersion,
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "ping" }),
});
await after.body?.cancel();
console.log(
  JSON.stringify({
    progress_at_close: progressAtClose,
    delete_status: deleteStatus,
    status_after: after.status,
  }),
);
process.exit(0);
