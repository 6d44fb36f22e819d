#!/usr/bin/env python3
"""Drives `termsprawl-ctl mcp` with the official Python MCP SDK as the client.

This is the interoperability check for the MCP adapter: a real, independent
MCP client implementation launches the adapter over stdio, negotiates a
protocol version, lists the catalogue and calls tools through it. The tool
server behind it is started by app/tests/ctl.rs (a real tool_server::ToolServer
with a test host that echoes accepted requests), which sets:

  TERMSPRAWL_CTL          path of the termsprawl-ctl binary
  TERMSPRAWL_NODE_ID      the provisioned agent node
  TERMSPRAWL_PROJECT_ID   that node's project (expected in session_info)
  TERMSPRAWL_DATA_DIR     the data directory holding agent-tools/

Prints "mcp: N passed, M failed" and exits non-zero if anything failed.
"""

import asyncio
import json
import os
import sys
import traceback

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# The seed's catalogue, in order: the adapter must publish exactly these.
EXPECTED_TOOLS = [
    "session_info", "guide_read", "agent_status",
    "canvas_list", "canvas_select", "canvas_move", "canvas_resize", "canvas_group",
    "sticky_open", "artifact_open",
    "browser_open", "browser_list", "browser_claim", "browser_transfer",
    "browser_navigate", "browser_inspect", "browser_click", "browser_type",
    "browser_screenshot",
    "terminal_open", "terminal_read", "terminal_submit", "terminal_input",
    "terminal_interrupt", "terminal_external", "terminal_close",
    "agent_launch", "context_read",
]


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
    """A pydantic model as wire JSON (camelCase), whichever SDK major version."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def text_value(result):
    """The JSON value carried by a tool result's first text block."""
    content = result["content"]
    texts = [c["text"] for c in content if c.get("type") == "text"]
    try:
        return json.loads(texts[0]) if texts else None
    except json.JSONDecodeError:
        # Not a value (an error message, say): the caller's checks report it.
        return None


async def run(checks):
    env = {
        name: os.environ[name]
        for name in ("TERMSPRAWL_NODE_ID", "TERMSPRAWL_DATA_DIR")
    }
    # Keep the adapter's stderr logging quiet and deterministic.
    env["RUST_LOG"] = "warn"
    params = StdioServerParameters(command=os.environ["TERMSPRAWL_CTL"], args=["mcp"], env=env)
    node = env["TERMSPRAWL_NODE_ID"]
    project = os.environ["TERMSPRAWL_PROJECT_ID"]

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = dump(await session.initialize())
            checks.check("initialize.serverInfo", init.get("serverInfo", {}).get("name") == "termsprawl",
                         repr(init.get("serverInfo")))
            checks.check("initialize.tools capability", "tools" in init.get("capabilities", {}),
                         repr(init.get("capabilities")))

            listed = dump(await session.list_tools())
            tools = listed["tools"]
            names = [t["name"] for t in tools]
            checks.check("tools/list count", len(tools) == 28, f"{len(tools)} tools")
            checks.check("tools/list names", names == EXPECTED_TOOLS, repr(names))
            for tool in tools:
                schema = tool.get("inputSchema", {})
                checks.check(f"{tool['name']} schema closed",
                             schema.get("type") == "object" and schema.get("additionalProperties") is False,
                             repr(schema))
                checks.check(f"{tool['name']} description", bool(tool.get("description")), "empty")

            info = dump(await session.call_tool("session_info", {}))
            checks.check("session_info ok", info.get("isError") is False, repr(info))
            value = text_value(info) or {}
            checks.check("session_info identity",
                         value.get("identity") == {"nodeId": node, "projectId": project},
                         repr(value.get("identity")))
            # initialize announced the adapter, which marks the session connected.
            checks.check("session_info connected",
                         value.get("status") == {"state": "connected", "adapter": "claude-mcp"},
                         repr(value.get("status")))
            checks.check("session_info operations", value.get("operations") == EXPECTED_TOOLS,
                         repr(value.get("operations")))

            listing = dump(await session.call_tool("canvas_list", {}))
            checks.check("canvas_list ok", listing.get("isError") is False, repr(listing))
            value = text_value(listing) or {}
            checks.check("canvas_list reached the host as this node",
                         value.get("operation") == "canvas_list" and value.get("nodeId") == node,
                         repr(value))

            moved = dump(await session.call_tool("canvas_move", {"nodeId": "n-2", "x": 5, "y": -7}))
            value = text_value(moved) or {}
            checks.check("canvas_move args forwarded",
                         value.get("args") == {"nodeId": "n-2", "x": 5, "y": -7}, repr(value))

            # A failing operation is a tool result with isError, not a protocol error.
            failed = dump(await session.call_tool("terminal_close", {"nodeId": "n-9"}))
            checks.check("host error is isError", failed.get("isError") is True, repr(failed))
            message = " ".join(c.get("text", "") for c in failed.get("content", []))
            checks.check("host error message", "is not open" in message, repr(message))

            rejected = dump(await session.call_tool("canvas_move", {"nodeId": "n-2", "x": 1, "y": 1, "z": 3}))
            checks.check("undeclared argument rejected", rejected.get("isError") is True, repr(rejected))
            message = " ".join(c.get("text", "") for c in rejected.get("content", []))
            checks.check("undeclared argument message", "does not accept argument z" in message, repr(message))


def main():
    checks = Checks()
    try:
        asyncio.run(run(checks))
    except BaseException:  # noqa: BLE001 - any crash is one failed check, reported below
        traceback.print_exc()
        checks.failed += 1
    print(f"mcp: {checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
