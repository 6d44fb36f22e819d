//! The catalogue as an MCP server over stdio (newline-delimited JSON-RPC 2.0),
//! for `termsprawl-ctl mcp`: `tools/list` publishes [`AGENT_TOOLS`] and
//! `tools/call` forwards to the tool server through a [`ToolCaller`].

use std::io::{self, BufRead, Read, Write};

use serde_json::{json, Value};

use crate::catalogue::{Operation, AGENT_TOOLS};
use crate::client::{ClientError, ToolClient};

/// MCP protocol revisions this adapter speaks, newest first.
const PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];
/// Longest stdin line accepted (the HTTP body cap plus JSON-RPC framing).
const MAX_LINE: usize = 1024 * 1024;

/// Runs one tool call; implemented by [`ToolClient`].
pub trait ToolCaller {
    /// Calls `operation` with `args` (an object, or null) and returns its value.
    fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError>;
}

impl ToolCaller for ToolClient {
    fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError> {
        ToolClient::call(self, operation, args)
    }
}

/// The MCP stdio adapter.
#[derive(Debug)]
pub struct McpServer<C> {
    caller: C,
    adapter: Option<String>,
}

impl<C: ToolCaller> McpServer<C> {
    /// An adapter forwarding to `caller`. With `adapter` (`claude-mcp`,
    /// `codex-mcp`), `initialize` reports it through `session_info`, which
    /// marks the session connected.
    pub fn new(caller: C, adapter: Option<String>) -> Self {
        McpServer { caller, adapter }
    }

    /// Serves newline-delimited JSON-RPC from `input` to `output` until EOF.
    pub fn serve(&self, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = input
                .by_ref()
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)?;
            if read == 0 {
                return Ok(());
            }
            let reply = if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
                // Skip the rest of the oversized line before answering.
                let mut rest = Vec::new();
                input.read_until(b'\n', &mut rest)?;
                Some(error_reply(Value::Null, -32700, "Message too large"))
            } else if line.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                match serde_json::from_slice::<Value>(&line) {
                    Ok(message) => self.handle(&message),
                    Err(_) => Some(error_reply(Value::Null, -32700, "Parse error")),
                }
            };
            if let Some(reply) = reply {
                serde_json::to_writer(&mut output, &reply)?;
                output.write_all(b"\n")?;
                output.flush()?;
            }
        }
    }

    /// Handles one JSON-RPC message (or batch); `None` for notifications.
    pub fn handle(&self, message: &Value) -> Option<Value> {
        if let Value::Array(batch) = message {
            let replies: Vec<Value> = batch.iter().filter_map(|m| self.handle(m)).collect();
            return (!replies.is_empty()).then_some(Value::Array(replies));
        }
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response from the client (we send no requests) or junk.
            return message
                .get("id")
                .filter(|_| message.get("result").is_none() && message.get("error").is_none())
                .map(|id| error_reply(id.clone(), -32600, "Invalid request"));
        };
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let outcome = match method {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": &*AGENT_TOOLS })),
            "tools/call" => self.tools_call(&params),
            _ if method.starts_with("notifications/") => return None,
            _ => Err((
                -32601,
                format!("Method not found: {}", method.escape_debug()),
            )),
        };
        let id = id?; // notifications get no reply
        Some(match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => error_reply(id, code, &message),
        })
    }

    fn initialize(&self, params: &Value) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = requested
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        if let Some(adapter) = &self.adapter {
            if let Err(e) = self
                .caller
                .call(Operation::SessionInfo.name(), json!({"adapter": adapter}))
            {
                tracing::warn!(error = %e, "could not announce the MCP adapter to the tool server");
            }
        }
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "termsprawl", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "Tools for the termsprawl canvas you are running in. Call guide_read with \
                             topic overview first; browsers and terminals you open are visible to the user.",
        })
    }

    fn tools_call(&self, params: &Value) -> Result<Value, (i64, String)> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((-32602, "tools/call needs a name".to_owned()))?;
        if Operation::from_name(name).is_none() {
            return Err((-32602, format!("Unknown tool: {}", name.escape_debug())));
        }
        let args = params.get("arguments").cloned().unwrap_or(Value::Null);
        Ok(match self.caller.call(name, args) {
            Ok(value) => tool_result(value),
            Err(e) => {
                json!({"content": [{"type": "text", "text": e.to_string()}], "isError": true})
            }
        })
    }
}

/// Renders an operation's value as MCP content: a PNG value (`{mimeType:
/// "image/…", data}`) becomes an image block, anything else JSON text.
fn tool_result(value: Value) -> Value {
    let image = value
        .get("mimeType")
        .and_then(Value::as_str)
        .filter(|m| m.starts_with("image/"))
        .zip(value.get("data").and_then(Value::as_str));
    if let Some((mime, data)) = image {
        let mut rest = value.clone();
        if let Some(object) = rest.as_object_mut() {
            object.remove("data");
        }
        return json!({
            "content": [
                {"type": "image", "data": data, "mimeType": mime},
                {"type": "text", "text": rest.to_string()},
            ],
            "isError": false,
        });
    }
    let text = match value {
        Value::String(text) => text,
        other => other.to_string(),
    };
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Records calls and answers from a script, at the ToolCaller boundary.
    #[derive(Default)]
    struct Recorder {
        calls: RefCell<Vec<(String, Value)>>,
    }

    impl ToolCaller for Recorder {
        fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError> {
            self.calls
                .borrow_mut()
                .push((operation.to_owned(), args.clone()));
            match operation {
                "browser_screenshot" => {
                    Ok(json!({"mimeType": "image/png", "data": "iVBOR", "width": 2}))
                }
                "terminal_close" => Err(ClientError::Refused {
                    status: 400,
                    message: "Enable agent browser control".into(),
                }),
                _ => Ok(json!({"op": operation, "args": args})),
            }
        }
    }

    fn rpc(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    #[test]
    fn initialize_negotiates_and_announces_the_adapter() {
        let server = McpServer::new(Recorder::default(), Some("claude-mcp".into()));
        let reply = server
            .handle(&rpc(
                1,
                "initialize",
                json!({"protocolVersion": "2025-03-26"}),
            ))
            .unwrap();
        assert_eq!(reply["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(reply["id"], 1);
        let reply = server
            .handle(&rpc(
                2,
                "initialize",
                json!({"protocolVersion": "1999-01-01"}),
            ))
            .unwrap();
        assert_eq!(reply["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        let calls = server.caller.calls.borrow();
        assert_eq!(
            calls[0],
            ("session_info".to_owned(), json!({"adapter": "claude-mcp"}))
        );
    }

    #[test]
    fn lists_the_catalogue() {
        let server = McpServer::new(Recorder::default(), None);
        let reply = server.handle(&rpc(1, "tools/list", json!({}))).unwrap();
        let tools = reply["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), Operation::ALL.len());
        assert_eq!(tools[0]["inputSchema"]["additionalProperties"], false);
    }

    #[test]
    fn forwards_calls_and_maps_results() {
        let server = McpServer::new(Recorder::default(), None);
        let reply = server
            .handle(&rpc(
                3,
                "tools/call",
                json!({"name": "canvas_list", "arguments": {}}),
            ))
            .unwrap();
        assert_eq!(reply["result"]["isError"], false);
        let text: Value =
            serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["op"], "canvas_list");

        let reply = server
            .handle(&rpc(
                4,
                "tools/call",
                json!({"name": "browser_screenshot", "arguments": {"nodeId": "b"}}),
            ))
            .unwrap();
        assert_eq!(
            reply["result"]["content"][0],
            json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"})
        );

        let reply = server
            .handle(&rpc(
                5,
                "tools/call",
                json!({"name": "terminal_close", "arguments": {"nodeId": "t"}}),
            ))
            .unwrap();
        assert_eq!(reply["result"]["isError"], true);
        assert_eq!(
            reply["result"]["content"][0]["text"],
            "Enable agent browser control"
        );

        let reply = server
            .handle(&rpc(6, "tools/call", json!({"name": "rm_rf"})))
            .unwrap();
        assert_eq!(reply["error"]["code"], -32602);
        assert_eq!(
            server.caller.calls.borrow().len(),
            3,
            "unknown tools are not forwarded"
        );
    }

    #[test]
    fn serves_lines_and_skips_notifications() {
        let server = McpServer::new(Recorder::default(), None);
        let input = concat!(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            "\n",
            "not json\n",
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":9,"method":"resources/list"}"#,
            "\n",
        );
        // Invalid UTF-8 is a parse error, not the end of the session.
        let mut input = input.as_bytes().to_vec();
        input.splice(0..0, b"\xff\xfe\n".iter().copied());
        let mut output = Vec::new();
        server.serve(&input[..], &mut output).unwrap();
        let mut replies: Vec<Value> = String::from_utf8(output)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 4);
        assert_eq!(replies[0]["error"]["code"], -32700);
        replies.remove(0);
        assert_eq!(
            replies[1],
            json!({"jsonrpc": "2.0", "id": "a", "result": {}})
        );
        assert_eq!(replies[2]["error"]["code"], -32601);
    }
}
