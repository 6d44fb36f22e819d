#!/usr/bin/env node
// The official TypeScript MCP SDKs against termsprawl at every revision each
// speaks, over stdio (`termsprawl-ctl mcp`) and streamable HTTP (`POST /mcp`):
// v1 (`@modelcontextprotocol/sdk`, initialize only: 2024-11-05 … 2025-11-25,
// and 2024-10-07, answered with 2025-11-25)
// and v2 (`@modelcontextprotocol/client`: the same over initialize, and
// 2026-07-28 through its `server/discover` probe). Both are pinned in
// tests/cdp/package.json and installed by setup.
//
// Run by `mcp_typescript_sdks_speak_every_revision` in
// app/tests/mcp_clients.rs, which sets the environment revisions.py
// documents. Prints "mcp-typescript: N passed, M failed".

'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');

const modules = createRequire(path.join(__dirname, '..', 'cdp', 'package.json'));
const v1 = {
  Client: modules('@modelcontextprotocol/sdk/client/index.js').Client,
  Stdio: modules('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
  Http: modules('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport,
  types: modules('@modelcontextprotocol/sdk/types.js'),
};
const v2 = {
  Client: modules('@modelcontextprotocol/client').Client,
  Stdio: modules('@modelcontextprotocol/client/stdio').StdioClientTransport,
  Http: modules('@modelcontextprotocol/client').StreamableHTTPClientTransport,
};

const HANDSHAKE = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const MODERN = '2026-07-28';
/** The oldest revision SDK v1 offers, which the server no longer serves. */
const OLDEST_V1 = '2024-10-07';
const env = process.env;
const TOOLS = env.TERMSPRAWL_TOOLS.split(',');

let passed = 0;
let failed = 0;
function check(name, condition, detail) {
  if (condition) {
    passed += 1;
  } else {
    failed += 1;
    console.error(`FAIL ${name}: ${detail === undefined ? '' : JSON.stringify(detail)}`);
  }
}

function transport(sdk, kind) {
  if (kind === 'stdio') {
    return new sdk.Stdio({
      command: env.TERMSPRAWL_CTL,
      args: ['mcp'],
      env: { TERMSPRAWL_NODE_ID: env.TERMSPRAWL_NODE_ID, TERMSPRAWL_DATA_DIR: env.TERMSPRAWL_DATA_DIR, RUST_LOG: 'warn' },
      stderr: 'inherit',
    });
  }
  const headers = { Authorization: `Bearer ${env.TERMSPRAWL_TOKEN}` };
  return new sdk.Http(new URL(env.TERMSPRAWL_MCP_URL), { requestInit: { headers } });
}

/// A connected client of `sdk` at `version`, and the version it negotiated.
async function connect(name, kind, version) {
  const info = { name: `termsprawl-test-${name}`, version: '0' };
  if (name === 'v1') {
    // v1 always offers this constant at initialize; it is read at connect time.
    v1.types.LATEST_PROTOCOL_VERSION = version;
    const client = new v1.Client(info);
    const wire = transport(v1, kind);
    let negotiated;
    const setVersion = wire.setProtocolVersion?.bind(wire);
    wire.setProtocolVersion = (v) => {
      negotiated = v;
      setVersion?.(v);
    };
    await client.connect(wire);
    return { client, negotiated: () => negotiated };
  }
  const options =
    version === MODERN ? { versionNegotiation: { mode: 'auto' } } : { supportedProtocolVersions: [version] };
  const client = new v2.Client(info, options);
  await client.connect(transport(v2, kind));
  return { client, negotiated: () => client.getNegotiatedProtocolVersion() };
}

async function exercise(name, kind, version, expected = version) {
  const label = `${name} ${kind} ${version}`;
  const { client, negotiated } = await connect(name, kind, version);
  try {
    check(`${label} negotiated`, negotiated() === expected, negotiated());
    const listed = await client.listTools();
    const names = listed.tools.map((t) => t.name);
    check(`${label} tools/list`, JSON.stringify(names) === JSON.stringify(TOOLS), names);
    for (const tool of TOOLS) {
      // Every tool answers with a result (a value, or the validator's refusal
      // of empty arguments), never a protocol error.
      const result = await client.callTool({ name: tool, arguments: {} });
      check(`${label} call ${tool}`, Array.isArray(result.content), result);
    }
    const listing = await client.callTool({ name: 'canvas_list', arguments: {} });
    const value = JSON.parse(listing.content[0].text);
    check(
      `${label} canvas_list reached the host`,
      !listing.isError && value.operation === 'canvas_list' && value.nodeId === env.TERMSPRAWL_NODE_ID,
      listing,
    );
    const refused = await client.callTool({ name: 'terminal_close', arguments: { nodeId: 'n-9' } });
    check(`${label} host error is isError`, refused.isError === true, refused);
    try {
      const unknown = await client.callTool({ name: 'rm_rf', arguments: {} });
      check(`${label} unknown tool`, false, unknown);
    } catch (error) {
      check(`${label} unknown tool -32602`, error.code === -32602, { code: error.code, message: error.message });
    }
  } finally {
    await client.close();
  }
}

async function main() {
  const runs = [];
  for (const kind of ['stdio', 'http']) {
    for (const version of HANDSHAKE) runs.push(['v1', kind, version]);
    // v1 also offers 2024-10-07, which the server does not serve: as the spec
    // says, it answers with the latest it has, which v1 accepts.
    runs.push(['v1', kind, OLDEST_V1, HANDSHAKE[HANDSHAKE.length - 1]]);
    for (const version of [...HANDSHAKE, MODERN]) runs.push(['v2', kind, version]);
  }
  for (const [name, kind, version, expected] of runs) {
    try {
      await exercise(name, kind, version, expected);
    } catch (error) {
      check(`${name} ${kind} ${version} session`, false, String(error && error.stack));
    }
  }
  console.log(`mcp-typescript: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
