//! MCP over streamable HTTP at `/mcp`, against a real `ToolServer` with the
//! fake host: every revision served, the same rules as `/call`, and sessions
//! bound to the token that created them. Raw HTTP/1.1 over `TcpStream`, so
//! the test sees exactly what a client gets.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{Fixture, PATIENCE};
use serde_json::{json, Value};
use tool_server::ServerConfig;
use tool_server::AGENT_TOOLS;

/// What came back for one request.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    /// The JSON-RPC messages in the body (one JSON document, or SSE `data:` events).
    messages: Vec<Value>,
    text: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The one response message (the one with an `id`).
    fn answer(&self) -> &Value {
        let answers: Vec<&Value> = self.messages.iter().filter(|m| m.get("id").is_some()).collect();
        assert_eq!(answers.len(), 1, "{self:?}");
        answers[0]
    }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads
/// the whole response.
fn send(port: u16, method: &str, path: &str, headers: &[(&str, String)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse(&raw)
}

/// Sends one request and reads only the response head: for an event stream,
/// which stays open.
fn send_head(port: u16, method: &str, headers: &[(&str, String)]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = format!("{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream.write_all(format!("{head}\r\n").as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
        raw.push(byte[0]);
    }
    parse(&raw)
}

fn parse(raw: &[u8]) -> Reply {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8(raw[..end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned())).collect();
    let chunked = headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let mut body = raw[end + 4..].to_vec();
    if chunked {
        body = dechunk(&body);
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    let messages = if let Ok(value) = serde_json::from_str::<Value>(&text) {
        vec![value]
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    };
    Reply { status, headers, messages, text }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&body[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        out.extend_from_slice(&body[start..start + size]);
        body = &body[start + size + 2..];
    }
    out
}

/// An MCP client of one revision, speaking as one token.
struct Client {
    port: u16,
    token: String,
    version: &'static str,
    session: Option<String>,
}

impl Client {
    fn new(fx: &Fixture, token: &str, version: &'static str) -> Client {
        Client { port: fx.port(), token: token.to_owned(), version, session: None }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![
            ("Authorization", format!("Bearer {}", self.token)),
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
        ];
        if self.version != "2024-11-05" && self.version != "2025-03-26" {
            headers.push(("MCP-Protocol-Version", self.version.to_owned()));
        }
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session.clone()));
        }
        headers
    }

    fn post(&self, message: &Value) -> Reply {
        send(self.port, "POST", "/mcp", &self.headers(), &message.to_string())
    }

    fn modern(&self) -> bool {
        self.version == "2026-07-28"
    }

    /// A request; on 2026-07-28 it carries the per-request `_meta` and the
    /// standard `Mcp-Method` / `Mcp-Name` headers.
    fn request(&self, id: u64, method: &str, mut params: Value) -> Reply {
        let message = |params: &Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if !self.modern() {
            return self.post(&message(&params));
        }
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": self.version,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        });
        let mut headers = self.headers();
        headers.push(("Mcp-Method", method.to_owned()));
        if let Some(name) = params["name"].as_str() {
            headers.push(("Mcp-Name", name.to_owned()));
        }
        send(self.port, "POST", "/mcp", &headers, &message(&params).to_string())
    }

    /// `initialize` + `notifications/initialized` (older revisions), or nothing.
    fn connect(&mut self) {
        if self.modern() {
            return;
        }
        let reply = self.request(
            0,
            "initialize",
            json!({"protocolVersion": self.version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(reply.answer()["result"]["protocolVersion"], self.version, "{reply:?}");
        assert_eq!(reply.answer()["result"]["serverInfo"]["name"], "termsprawl");
        self.session = Some(reply.header("mcp-session-id").expect("a session id").to_owned());
        let ack = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(ack.status, 202, "{ack:?}");
    }
}

const ALL_REVISIONS: [&str; 5] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

#[test]
fn every_revision_lists_and_calls_every_tool_over_http() {
    let fx = Fixture::new();
    let token = fx.session("agent-1", "p");
    for version in ALL_REVISIONS {
        let mut client = Client::new(&fx, &token, version);
        client.connect();

        let listed = client.request(1, "tools/list", json!({}));
        let tools = listed.answer()["result"]["tools"].as_array().cloned().unwrap_or_default();
        assert_eq!(tools.len(), AGENT_TOOLS.len(), "{version}: {listed:?}");
        for (tool, spec) in tools.iter().zip(AGENT_TOOLS.iter()) {
            assert_eq!(tool["name"], spec.name(), "{version}");
            assert_eq!(tool["inputSchema"], serde_json::to_value(spec).unwrap()["inputSchema"], "{version}");
        }

        // Every tool reaches the invoke path: a call with no arguments is
        // either answered or refused by the same validator as /call, as a
        // tool result, never a protocol error.
        for spec in AGENT_TOOLS.iter() {
            let reply = client.request(2, "tools/call", json!({"name": spec.name(), "arguments": {}}));
            let result = &reply.answer()["result"];
            assert!(result["isError"].is_boolean(), "{version} {}: {reply:?}", spec.name());
        }

        let reply = client.request(3, "tools/call", json!({"name": "canvas_list", "arguments": {}}));
        let result = &reply.answer()["result"];
        assert_eq!(result["isError"], false, "{version}: {reply:?}");
        let value: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(value, json!({"echo": "canvas_list", "args": {}, "by": "agent-1"}), "{version}");

        // Browser control is off: a tool error with the server's message and code.
        let reply = client.request(4, "tools/call", json!({"name": "browser_list", "arguments": {}}));
        let result = &reply.answer()["result"];
        assert_eq!(result["isError"], true, "{version}: {reply:?}");
        assert_eq!(result["content"][0]["text"], "Enable agent browser control");
        assert_eq!(result["structuredContent"]["code"], "browser_disabled");

        // An undeclared argument: the validator's message, as a tool error.
        let reply = client.request(5, "tools/call", json!({"name": "canvas_list", "arguments": {"z": 1}}));
        assert_eq!(reply.answer()["result"]["isError"], true, "{version}: {reply:?}");
        assert_eq!(reply.answer()["result"]["structuredContent"]["code"], "invalid_argument", "{reply:?}");

        // An unknown tool: the spec's protocol error, -32602 in every revision.
        let reply = client.request(6, "tools/call", json!({"name": "rm_rf", "arguments": {}}));
        assert_eq!(reply.answer()["error"]["code"], -32602, "{version}: {reply:?}");
    }
    let calls = fx.host.started.lock();
    assert_eq!(calls.iter().filter(|c| c.operation == "canvas_list").count(), 2 * ALL_REVISIONS.len());
    assert!(calls.iter().all(|c| c.node_id == "agent-1" && c.project_id == "p"));
}

#[test]
fn revision_2026_07_28_discovers_and_refuses_unsupported_versions() {
    let fx = Fixture::new();
    let token = fx.session("agent-1", "p");
    let client = Client::new(&fx, &token, "2026-07-28");
    let reply = client.request(1, "server/discover", json!({}));
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_none(), "2026-07-28 has no sessions");
    let result = &reply.answer()["result"];
    let mut versions: Vec<&str> =
        result["supportedVersions"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    versions.sort_unstable();
    assert_eq!(versions, ALL_REVISIONS);
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "termsprawl", "{result}");

    let reply = send(
        fx.port(),
        "POST",
        "/mcp",
        &[
            ("Authorization", format!("Bearer {token}")),
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
            ("MCP-Protocol-Version", "2099-01-01".to_owned()),
            ("Mcp-Method", "tools/list".to_owned()),
        ],
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {},
        }}})
        .to_string(),
    );
    let error = reply.messages.iter().find(|m| m.get("error").is_some()).unwrap_or_else(|| panic!("{reply:?}"));
    // UnsupportedProtocolVersion, naming what is supported.
    assert_eq!(error["error"]["code"], -32022, "{reply:?}");
    assert!(error.to_string().contains("2025-11-25"), "{error}");
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn the_rules_of_call_hold_for_mcp() {
    let fx = Fixture::new();
    let token = fx.session("agent-1", "p");
    let port = fx.port();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    .to_string();
    let base = |extra: &[(&'static str, String)]| {
        let mut headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
        ];
        headers.extend_from_slice(extra);
        headers
    };
    let bearer = ("Authorization", format!("Bearer {token}"));

    // No token, a wrong one, another scheme: 401.
    for auth in [
        vec![],
        vec![("Authorization", format!("Bearer {}", "0".repeat(64)))],
        vec![("Authorization", format!("Basic {token}"))],
    ] {
        let reply = send(port, "POST", "/mcp", &base(&auth), &init);
        assert_eq!(reply.status, 401, "{auth:?}: {reply:?}");
    }
    // A token in the URL is never read: any query string is refused.
    let reply = send(port, "POST", &format!("/mcp?token={token}"), &base(&[]), &init);
    assert_eq!(reply.status, 403);
    let reply = send(port, "POST", "/mcp?x=1", &base(std::slice::from_ref(&bearer)), &init);
    assert_eq!(reply.status, 403);
    // DNS rebinding: a foreign Host or Origin is 403; our own origin is not.
    for (name, value) in [
        ("Host", "evil.example.com".to_owned()),
        ("Host", format!("127.0.0.1:{}", port.wrapping_add(1))),
        ("Origin", "http://evil.example.com".to_owned()),
        ("Origin", format!("http://localhost:{}", port.wrapping_add(1))),
        ("Origin", "null".to_owned()),
    ] {
        let reply = send(port, "POST", "/mcp", &base(&[bearer.clone(), (name, value.clone())]), &init);
        assert_eq!(reply.status, 403, "{name}: {value}");
    }
    let reply =
        send(port, "POST", "/mcp", &base(&[bearer.clone(), ("Origin", format!("http://127.0.0.1:{port}"))]), &init);
    assert_eq!(reply.status, 200, "{reply:?}");
    // 128 KiB bodies.
    let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(128 * 1024));
    let reply = send(port, "POST", "/mcp", &base(std::slice::from_ref(&bearer)), &big);
    assert_eq!(reply.status, 413, "{}", reply.text);
    // Methods the endpoint does not serve.
    let reply = send(port, "PUT", "/mcp", &base(std::slice::from_ref(&bearer)), "");
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("GET, POST, DELETE"));
    // GET and DELETE need a session (older revisions), and 2026-07-28 has
    // neither sessions nor a standalone stream: 405.
    let reply = send(port, "GET", "/mcp", &[bearer.clone(), ("Accept", "text/event-stream".to_owned())], "");
    assert!((400..500).contains(&reply.status), "{reply:?}");
    for method in ["GET", "DELETE"] {
        let modern = [
            bearer.clone(),
            ("Accept", "text/event-stream".to_owned()),
            ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ];
        let reply = send(port, method, "/mcp", &modern, "");
        assert_eq!(reply.status, 405, "{method}: {reply:?}");
    }
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn a_session_belongs_to_the_token_that_created_it_and_dies_with_it() {
    let fx = Fixture::new();
    let first = fx.session("agent-1", "p");
    let second = fx.session("agent-2", "p");
    let mut owner = Client::new(&fx, &first, "2025-11-25");
    owner.connect();
    let id = owner.session.clone().unwrap();
    let list = |client: &Client| client.request(9, "tools/list", json!({}));
    assert_eq!(list(&owner).status, 200);

    // Its event stream opens for its own token only.
    let stream = |token: &str| {
        let headers = [
            ("Authorization", format!("Bearer {token}")),
            ("Accept", "text/event-stream".to_owned()),
            ("MCP-Protocol-Version", "2025-11-25".to_owned()),
            ("Mcp-Session-Id", id.clone()),
        ];
        send_head(fx.port(), "GET", &headers)
    };
    let opened = stream(&first);
    assert_eq!(opened.status, 200, "{opened:?}");
    assert_eq!(opened.header("content-type"), Some("text/event-stream"));

    // Another node's token naming this session: as if it did not exist.
    assert_eq!(stream(&second).status, 404);
    let thief = Client { port: fx.port(), token: second.clone(), version: "2025-11-25", session: Some(id.clone()) };
    assert_eq!(list(&thief).status, 404);
    let reply = send(
        fx.port(),
        "DELETE",
        "/mcp",
        &[("Authorization", format!("Bearer {second}")), ("Mcp-Session-Id", id.clone())],
        "",
    );
    assert_eq!(reply.status, 404);
    assert_eq!(list(&owner).status, 200, "the owner's session survived");

    // The node's token is replaced: the old token is refused, and the new
    // one cannot adopt the old session.
    let replaced = fx.session("agent-1", "p");
    assert_eq!(list(&owner).status, 401);
    let adopter = Client { port: fx.port(), token: replaced, version: "2025-11-25", session: Some(id.clone()) };
    assert_eq!(list(&adopter).status, 404);

    // Revoking closes the session itself: its open event stream ends.
    let mut other = Client::new(&fx, &second, "2025-11-25");
    other.connect();
    assert_eq!(list(&other).status, 200);
    let mut events = TcpStream::connect(("127.0.0.1", fx.port())).unwrap();
    events.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut get = format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n", fx.port());
    for (name, value) in other.headers() {
        get.push_str(&format!("{name}: {value}\r\n"));
    }
    events.write_all(format!("{get}\r\n").as_bytes()).unwrap();
    let mut head = [0u8; 12];
    events.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    assert!(fx.server.revoke("agent-2").unwrap());
    assert_eq!(list(&other).status, 401);
    // The chunked body's last chunk, not the read timeout: the stream was
    // closed with the session.
    let mut rest = Vec::new();
    let mut byte = [0u8; 1];
    while !rest.ends_with(b"\r\n0\r\n\r\n") {
        events.read_exact(&mut byte).expect("the event stream ends once its token is revoked");
        rest.push(byte[0]);
    }

    let fresh = fx.session("agent-3", "p");
    let mut closing = Client::new(&fx, &fresh, "2025-11-25");
    closing.connect();
    let mut headers = closing.headers();
    headers.retain(|(n, _)| *n != "Content-Type");
    let reply = send(fx.port(), "DELETE", "/mcp", &headers, "");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(list(&closing).status, 404);
}

#[test]
fn a_slow_mcp_request_gets_408_within_the_request_budget() {
    let config = ServerConfig { request_timeout: std::time::Duration::from_millis(300), ..ServerConfig::default() };
    let fx = Fixture::with_config(config);
    let token = fx.session("agent-1", "p");
    let mut stream = TcpStream::connect(("127.0.0.1", fx.port())).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        fx.port()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The rest of the body never comes.
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let reply = parse(&raw);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert!(fx.host.started.lock().is_empty());
}
