#!/usr/bin/env python3
"""The Python MCP SDK against `termsprawl-ctl mcp` in front of the REAL headless
app (started by app/tests/mcp_real_app.rs): list every tool, then call
session_info, canvas_list, browser_open and browser_screenshot and check their
effects. Environment: TERMSPRAWL_CTL, TERMSPRAWL_NODE_ID, TERMSPRAWL_DATA_DIR,
PAGE_URL (a page served by the test). Prints "mcp-real: N passed, M failed".
"""

import asyncio
import base64
import json
import os
import struct
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def is_error(result):
    """Whether a tool result is an error (field name differs between SDK majors)."""
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def mime_of(content):
    return getattr(content, "mime_type", getattr(content, "mimeType", None))


def text_json(result):
    """The JSON value of a tool result's first text content."""
    for c in result.content:
        if getattr(c, "type", "") == "text":
            return json.loads(c.text)
    return None


async def main():
    node = os.environ["TERMSPRAWL_NODE_ID"]
    params = StdioServerParameters(command=os.environ["TERMSPRAWL_CTL"], args=["mcp"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            check("all 28 tools listed", len(tools) == 28, f"{len(tools)} tools")

            info = await session.call_tool("session_info", {})
            value = text_json(info)
            check("session_info names the node", not is_error(info) and json.dumps(value).find(node) >= 0, str(value)[:300])

            listing = await session.call_tool("canvas_list", {})
            value = text_json(listing)
            check("canvas_list has the agent node", not is_error(listing) and json.dumps(value).find(node) >= 0, str(value)[:300])

            opened = await session.call_tool("browser_open", {"url": os.environ["PAGE_URL"]})
            value = text_json(opened)
            check("browser_open succeeds", not is_error(opened) and value is not None, str(opened.content)[:300])
            browser = (value or {}).get("nodeId", "")
            check("browser_open returns a node id", bool(browser), str(value)[:300])

            # The page loads in the live app; a screenshot may need a moment.
            shot = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                shot = await session.call_tool("browser_screenshot", {"nodeId": browser})
                if not is_error(shot):
                    break
                await asyncio.sleep(0.5)
            check("browser_screenshot succeeds", shot is not None and not is_error(shot), str(shot and shot.content)[:300])
            images = [c for c in (shot.content if shot else []) if getattr(c, "type", "") == "image"]
            check("screenshot comes back as MCP image content", len(images) == 1 and mime_of(images[0]) == "image/png", str(shot and shot.content)[:200])
            if images:
                png = base64.b64decode(images[0].data)
                check("image is a PNG", png[:8] == b"\x89PNG\r\n\x1a\n", repr(png[:8]))
                width, height = struct.unpack(">II", png[16:24])
                check("PNG has the browser view's size", width > 100 and height > 100, f"{width}x{height}")

            listing = text_json(await session.call_tool("canvas_list", {}))
            check("the browser node is on the canvas", json.dumps(listing).find(browser) >= 0, str(listing)[:300])
    print(f"mcp-real: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


sys.exit(asyncio.run(main()))
