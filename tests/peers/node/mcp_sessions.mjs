#!/usr/bin/env node
// Two Streamable HTTP sessions on one server, with the real TypeScript
// SDK, each running a long `countdown` under the same request id: the
// client's cancel in one session stops that session's call only, and so
// does closing one session (`DELETE`). Run as `mcp_sessions.mjs
// --cancel-witness <file> <sign> --url <url> --token <bearer token>`,
// where `<file>` gains a `<sign>` each time a handler is cancelled (the
// server's audit log); prints what it saw as one JSON object.

import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

setTimeout(() => {
  console.error("mcp_sessions.mjs: not done within 60 s");
  process.exit(1);
}, 60_000).unref();

const [, , witnessFlag, witness, sign, urlFlag, url, tokenFlag, token] = process.argv;
if (witnessFlag !== "--cancel-witness" || urlFlag !== "--url" || tokenFlag !== "--token") {
  console.error(
    "usage: mcp_sessions.mjs --cancel-witness <file> <sign> --url <url> --token <bearer token>",
  );
  process.exit(2);
}

// How many handlers saw their cancel so far.
const cancelled = () => {
  try {
    return readFileSync(witness, "utf8").split(sign).length - 1;
  } catch {
    return 0;
  }
};

// Waits until `condition` holds; fails the script after 20 s (only a
// failure waits that long).
const until = async (what, condition) => {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 20 s`);
    await sleep(20);
  }
};

// A session: its client, the ids of the tool calls it sent, and the status
// its `DELETE` was answered with.
const open = async () => {
  const session = { calls: [], deleteStatus: null };
  const recording = async (input, init) => {
    if (init?.method === "POST" && typeof init.body === "string") {
      const message = JSON.parse(init.body);
      if (message.method === "tools/call") session.calls.push(message.id);
    }
    const response = await fetch(input, init);
    if (init?.method === "DELETE") session.deleteStatus = response.status;
    return response;
  };
  session.transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: recording,
  });
  session.client = new Client({ name: "gangway-test", version: "1.0.0" });
  await session.client.connect(session.transport);
  return session;
};

// A long countdown (60 s of 20 ms steps) in `session`, running once its
// first progress report came; `reached` is its latest.
const countdown = async (session) => {
  const call = { reached: -1, controller: new AbortController() };
  await new Promise((resolve) => {
    session.client
      .callTool({ name: "countdown", arguments: { from: 3000, step_ms: 20 } }, undefined, {
        signal: call.controller.signal,
        timeout: 300_000,
        onprogress: (update) => {
          call.reached = update.progress;
          resolve();
        },
      })
      .catch(() => {});
  });
  return call;
};

// `call` goes on: it reports five more steps.
const runsOn = async (what, call) => {
  const from = call.reached;
  await until(what, () => call.reached >= from + 5);
};

const seen = {};
const a = await open();
const b = await open();
seen.distinct_sessions = a.transport.sessionId !== b.transport.sessionId;
const inA = await countdown(a);
const inB = await countdown(b);
// The same request id in both sessions: a cancel names it.
seen.same_request_id = a.calls.length === 1 && a.calls[0] === b.calls[0];

// The client cancels A's call: A's handler stops, B's runs on.
inA.controller.abort();
await until("A's call cancelled", () => cancelled() >= 1);
await runsOn("B's call after A's was cancelled", inB);
seen.cancelled_after_a_cancel = cancelled();

// A's session closes while a call of its runs: that call stops, B's runs on.
await countdown(a);
await a.transport.terminateSession();
seen.a_delete_status = a.deleteStatus;
await until("A's call cancelled by its session's end", () => cancelled() >= 2);
await runsOn("B's call after A's session closed", inB);
seen.cancelled_after_a_closed = cancelled();

// B's session still serves, and its own cancel stops its call.
const greeting = await b.client.callTool({ name: "greet", arguments: { name: "b" } });
seen.b_greets = greeting.content.map((block) => block.text).join("");
inB.controller.abort();
await until("B's call cancelled", () => cancelled() >= 3);
seen.cancelled_in_the_end = cancelled();
await b.client.close();
console.log(JSON.stringify(seen));
process.exit(0);
