#!/usr/bin/env python3
"""The official Python MCP SDK against termsprawl at every revision it speaks,
over stdio (`termsprawl-ctl mcp`) and streamable HTTP (`POST /mcp`).

Run by `mcp_python_sdk_speaks_every_revision` in app/tests/mcp_clients.rs,
which starts a real tool_server::ToolServer whose test host echoes accepted
calls (and fails `terminal_close`), and sets:

  TERMSPRAWL_CTL          path of the termsprawl-ctl binary
  TERMSPRAWL_NODE_ID      the provisioned agent node
  TERMSPRAWL_DATA_DIR     the data directory holding agent-tools/
  TERMSPRAWL_MCP_URL      http://127.0.0.1:PORT/mcp
  TERMSPRAWL_TOKEN        that node's bearer token (sent as a header only)
  TERMSPRAWL_TOOLS        the catalogue's tool names, comma-separated

For each transport and revision: connect (initialize for the 2024-2025
revisions, the SDK's server/discover probe for 2026-07-28), list every tool, call every
tool, check a host failure is a tool result with isError and an unknown tool
the protocol error -32602. Prints "mcp-revisions: N passed, M failed".
"""

import asyncio
import json
import os
import sys
import traceback

import httpx2
import mcp.client.session
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# The handshake-era revisions, offered one at a time: the SDK offers its
# newest at initialize, so the module constant it reads is set per run.
HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
MODERN = "2026-07-28"


class Checks:
    """Counts named checks; a failed check is reported and the run continues."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}", file=sys.stderr)


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def transport(kind):
    if kind == "stdio":
        env = {name: os.environ[name] for name in ("TERMSPRAWL_NODE_ID", "TERMSPRAWL_DATA_DIR")}
        env["RUST_LOG"] = "warn"
        return StdioServerParameters(command=os.environ["TERMSPRAWL_CTL"], args=["mcp"], env=env)
    headers = {"Authorization": f"Bearer {os.environ['TERMSPRAWL_TOKEN']}"}
    return streamable_http_client(os.environ["TERMSPRAWL_MCP_URL"], http_client=httpx2.AsyncClient(headers=headers))


async def exercise(checks, kind, version, tools):
    label = f"{kind} {version}"
    if version == MODERN:
        # "auto" probes server/discover and must pick 2026-07-28 from it.
        client = Client(transport(kind), mode="auto")
    else:
        mcp.client.session.LATEST_HANDSHAKE_VERSION = version
        client = Client(transport(kind), mode="legacy")
    async with client:
        checks.check(f"{label} negotiated", client.protocol_version == version, client.protocol_version)
        listed = dump(await client.list_tools())
        names = [t["name"] for t in listed["tools"]]
        checks.check(f"{label} tools/list", names == tools, repr(names))
        for name in tools:
            # Every tool answers with a result (a value, or the validator's
            # refusal of empty arguments), never a protocol error.
            result = dump(await client.call_tool(name, {}))
            checks.check(f"{label} call {name}", isinstance(result.get("isError"), bool), repr(result))
        listing = dump(await client.call_tool("canvas_list", {}))
        value = json.loads(listing["content"][0]["text"])
        checks.check(f"{label} canvas_list reached the host", value.get("operation") == "canvas_list"
                     and value.get("nodeId") == os.environ["TERMSPRAWL_NODE_ID"], repr(listing))
        failed = dump(await client.call_tool("terminal_close", {"nodeId": "n-9"}))
        checks.check(f"{label} host error is isError", failed.get("isError") is True, repr(failed))
        try:
            unknown = dump(await client.call_tool("rm_rf", {}))
            checks.check(f"{label} unknown tool", False, f"answered {unknown!r}")
        except MCPError as error:
            checks.check(f"{label} unknown tool -32602", error.code == -32602, repr(error.error))


async def run(checks):
    tools = os.environ["TERMSPRAWL_TOOLS"].split(",")
    for kind in ("stdio", "http"):
        for version in [*HANDSHAKE, MODERN]:
            try:
                await exercise(checks, kind, version, tools)
            except Exception:  # noqa: BLE001 - one broken revision must not hide the others
                traceback.print_exc()
                checks.check(f"{kind} {version} session", False, "raised")


def main():
    checks = Checks()
    asyncio.run(run(checks))
    print(f"mcp-revisions: {checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
