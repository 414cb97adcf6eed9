#!/usr/bin/env node
// Closes a Streamable HTTP session while a call runs, with the real
// TypeScript SDK: connects to `--url <url> --token <bearer token>`, starts `countdown` (20 s
// of steps), and after 0.3 s ends the session (`DELETE`) without
// cancelling the call. The Rust test reads from the server's stderr how
// soon the handler saw the cancellation.

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
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "gangway-test", version: "1.0.0" });
await client.connect(transport);
// Its answer never comes: the session ends first.
client.callTool({ name: "countdown", arguments: { from: 400, step_ms: 50 } }).catch(() => {});
await new Promise((resolve) => setTimeout(resolve, 300));
await transport.terminateSession();
console.log(JSON.stringify({ terminated: transport.sessionId === undefined }));
process.exit(0);
