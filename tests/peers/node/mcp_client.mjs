#!/usr/bin/env node
// An MCP client on the real TypeScript SDK (@modelcontextprotocol/sdk
// 1.32.2, installed by scripts/test into tests/peers/node), driving a
// gangway MCP server started as argv[2..] over stdio, or the one at the URL
// of `--url <url> [--token <bearer token>]` over Streamable HTTP, and
// printing what it saw as one JSON object on stdout for the Rust test to
// check: the same steps as mcp_client.py (every inputSchema and
// outputSchema compiled as JSON Schema 2020-12; a typed result's
// structuredContent validated), with the same options before the server
// (`--server-stderr <file>`, `--cancel-witness <file> <sign>`).

import { openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";

// A hung server fails the test, not hangs it.
setTimeout(() => {
  console.error("mcp_client.mjs: no answer within 60 s");
  process.exit(1);
}, 60_000).unref();

// The options before the server's arguments, and those arguments.
const options = (argv) => {
  const found = {};
  for (;;) {
    if (argv[0] === "--server-stderr") {
      found.serverStderr = argv[1];
      argv = argv.slice(2);
    } else if (argv[0] === "--cancel-witness") {
      found.witness = { path: argv[1], sign: argv[2] };
      argv = argv.slice(3);
    } else {
      return [found, argv];
    }
  }
};
const [found, serverArgv] = options(process.argv.slice(2));

const connect = (argv) => {
  if (argv[0] !== "--url") {
    const [command, ...args] = argv;
    const stderr = found.serverStderr ? openSync(found.serverStderr, "a") : "inherit";
    return new StdioClientTransport({ command, args, stderr });
  }
  const headers = argv[2] === "--token" ? { Authorization: `Bearer ${argv[3]}` } : {};
  return new StreamableHTTPClientTransport(new URL(argv[1]), { requestInit: { headers } });
};
const transport = connect(serverArgv);

// Whether `sign` shows up in the file at `path` within 20 s (only a
// failure waits that long).
const witnessed = async ({ path, sign }) => {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    let text = "";
    try {
      text = readFileSync(path, "utf8");
    } catch {
      // Not written yet.
    }
    if (text.includes(sign)) return true;
    await sleep(20);
  }
  return false;
};
const client = new Client({ name: "gangway-test", version: "1.0.0" });
await client.connect(transport);

const text = (result) =>
  result.content.filter((block) => block.type === "text").map((block) => block.text).join("");

const seen = { server: client.getServerVersion().name, tools: {} };
const ajv = new Ajv2020({ strict: false });
const validators = {};
const { tools } = await client.listTools();
for (const tool of tools) {
  ajv.compile(tool.inputSchema);
  const problems = [];
  const walk = (node, path) => {
    if (Array.isArray(node)) node.forEach((value, index) => walk(value, `${path}/${index}`));
    else if (node && typeof node === "object") {
      if ("$ref" in node || "$defs" in node) problems.push(`${path}: $ref/$defs`);
      if (Array.isArray(node.type) && node.type.includes("null")) problems.push(`${path}: null union`);
      for (const key of ["anyOf", "oneOf"]) {
        if ((node[key] ?? []).some((option) => option?.type === "null")) {
          problems.push(`${path}: null union in ${key}`);
        }
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${path}/${key}`);
    }
  };
  walk(tool.inputSchema, "");
  const output = tool.outputSchema ?? null;
  let outputProblems = null;
  if (output) {
    validators[tool.name] = ajv.compile(output);
    outputProblems = [];
    const before = problems.length;
    walk(output, "");
    outputProblems = problems.splice(before);
  }
  seen.tools[tool.name] = {
    annotations: tool.annotations ?? null,
    description: tool.description,
    root: tool.inputSchema.type,
    problems,
    output,
    output_problems: outputProblems,
  };
}
// A typed result: its structuredContent, whether it is valid against the
// tool's outputSchema (the SDK checks it too, and throws if not), and
// whether its text is the same JSON.
const typed = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  const validate = validators[name];
  const valid = validate(result.structuredContent) ? true : ajv.errorsText(validate.errors);
  return {
    is_error: Boolean(result.isError),
    structured: result.structuredContent ?? null,
    valid,
    text_is_json: JSON.stringify(JSON.parse(text(result))) === JSON.stringify(result.structuredContent),
  };
};
seen.stats = await typed("stats", { text: "one two\nthree" });
seen.stats_empty = await typed("stats", { text: "" });
const call = async (name, args, options) => {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  return [Boolean(result.isError), text(result)];
};
seen.greet = await call("greet", { name: "ada", loud: true });
seen.count_words = await call("count_words", { text: "one two three" });
// Bytes: text as a string, any bytes (here not UTF-8) as base64; the
// tool's inputSchema takes both forms and no other.
const notUtf8 = { base64: Buffer.from([0xff, 0x00, 0xfe, 0x80]).toString("base64") };
const byteSchema = ajv.compile(tools.find((tool) => tool.name === "count_bytes").inputSchema);
seen.count_bytes_schema = ["héllo", notUtf8, { hex: "ff" }].map((data) => byteSchema({ data }));
seen.count_bytes = [
  await call("count_bytes", { data: "héllo" }),
  await call("count_bytes", { data: notUtf8 }),
];
seen.fail = await call("fail", { why: "on purpose" });
seen.typo = await call("greet", { nmae: "ada" });
seen.outside = await call("reboot", {});
const progress = [];
seen.countdown = await call("countdown", { from: 3, step_ms: 20 }, {
  onprogress: (update) => progress.push([update.progress, update.total, update.message]),
});
seen.progress = progress;
try {
  await call("countdown", { from: 200, step_ms: 50 }, { signal: AbortSignal.timeout(500) });
  seen.abandoned = "answered";
} catch (error) {
  // The SDK rejects an aborted request with a RequestTimeout error naming
  // the signal's reason (here the signal's own timeout), after sending
  // `notifications/cancelled`; any other failure is not the one expected.
  const aborted =
    error instanceof McpError &&
    error.code === ErrorCode.RequestTimeout &&
    error.message === `MCP error ${ErrorCode.RequestTimeout}: TimeoutError: The operation was aborted due to timeout`;
  seen.abandoned = aborted ? "aborted" : `unexpected: ${error}`;
}
if (found.witness) {
  // The session stays open meanwhile: only the cancel can stop the call.
  seen.cancel_seen = await witnessed(found.witness);
}
seen.after = await call("greet", { name: "bob" });
await client.close();
console.log(JSON.stringify(seen));
