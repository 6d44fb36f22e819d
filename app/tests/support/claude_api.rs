//! A stand-in of the Anthropic Messages API on 127.0.0.1 for the real claude
//! CLI (a test double for what is outside the product): it streams a canned
//! SSE reply — text, or for a prompt asking to "run touch" a `tool_use` of
//! Bash — and holds each reply until the test releases it, so the working
//! state can be seen; and a fresh HOME in which claude starts straight at
//! its prompt, offline, with a dummy key.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The dummy key (claude checks only its shape; the stand-in ignores it).
pub const API_KEY: &str =
    "sk-ant-api03-status-e2e-dummy-key-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

/// The claude CLI the npm setup installed, if it is there.
pub fn claude_bin_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cdp/node_modules/.bin");
    dir.join("claude").is_file().then(|| dir.canonicalize().ok()).flatten()
}

/// Replies the stand-in may send: each released one lets one request through.
#[derive(Default)]
pub struct Gate {
    released: Mutex<usize>,
    changed: Condvar,
    seen: Mutex<usize>,
}

impl Gate {
    pub fn release(&self) {
        *self.released.lock().unwrap() += 1;
        self.changed.notify_all();
    }

    /// Waits (at most a minute, so nothing hangs) until request number `n` (from 1) may be answered.
    fn wait_for_turn(&self, n: usize) {
        let released = self.released.lock().unwrap();
        let _unused = self.changed.wait_timeout_while(released, Duration::from_secs(60), |r| *r < n).unwrap();
    }
}

/// The Messages API stand-in: `POST /v1/messages` (streamed), `count_tokens`, anything else `{}`.
pub fn stand_in(gate: Arc<Gate>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let gate = gate.clone();
            std::thread::spawn(move || answer(stream, &gate));
        }
    });
    url
}

fn answer(stream: TcpStream, gate: &Gate) {
    let mut reader = BufReader::new(&stream);
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (ctype, reply) = if first.starts_with("POST /v1/messages") && !first.contains("count_tokens") {
        let n = {
            let mut seen = gate.seen.lock().unwrap();
            *seen += 1;
            *seen
        };
        gate.wait_for_turn(n);
        ("text/event-stream", message_events(&request))
    } else if first.contains("count_tokens") {
        ("application/json", r#"{"input_tokens":10}"#.to_owned())
    } else {
        ("application/json", "{}".to_owned())
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.len()
    );
    let _ = (&stream).write_all(head.as_bytes()).and_then(|()| (&stream).write_all(reply.as_bytes()));
}

/// The SSE of one assistant message: a Bash `tool_use` when the prompt asks to
/// "run touch" (and no tool result came back yet), else a line of text.
fn message_events(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let answered = last["content"].as_array().is_some_and(|c| c.iter().any(|p| p["type"] == "tool_result"));
    let asked = messages.iter().any(|m| m["role"] == "user" && m.to_string().contains("please run touch"));
    let tool = asked && !answered && request["tools"].as_array().is_some_and(|t| !t.is_empty());
    eprintln!("stand-in: {} messages, tool_use: {tool}", messages.len());
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "model": request["model"], "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )];
    let stop = if tool {
        let input = json!({"command": "touch made-by-claude.txt", "description": "Create a file"}).to_string();
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": input}}),
        ));
        "tool_use"
    } else {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Hello from the stand-in."}}),
        ));
        "end_turn"
    };
    events.push(("content_block_stop", json!({"type": "content_block_stop", "index": 0})));
    events.push((
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}

/// A fresh HOME in which claude starts straight at its prompt in `project`.
pub fn claude_home(home: &Path, project: &Path) {
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let tail = &API_KEY[API_KEY.len() - 20..];
    let state = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [tail], "rejected": []},
        "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
    });
    std::fs::write(home.join(".claude.json"), state.to_string()).unwrap();
    let settings = json!({"permissions": {"defaultMode": "default"}});
    std::fs::write(home.join(".claude/settings.json"), settings.to_string()).unwrap();
}
