//! Agent states from the real claude CLI (tests/cdp/node_modules, 2.1.332)
//! in agent nodes of the real headless app: its own hooks, injected at launch
//! through `--settings`, run `termsprawl-ctl hook`, and `agent_status` (and
//! `canvas_list`) show the node going working → done, and to needs
//! permission when the model asks for a Bash command.
//!
//! The model is a stand-in of the Anthropic Messages API on 127.0.0.1 (a test
//! double for what is outside the product): it streams a canned SSE reply —
//! text, or for a prompt asking to "run touch" a `tool_use` of Bash — and
//! holds each reply until the test releases it, so the working state can be
//! seen. claude runs offline with a dummy API key and a fresh HOME whose
//! `.claude.json` has onboarding done, the key approved and the project
//! trusted; `~/.claude/settings.json` asks for permission before tools
//! (the default mode of a fresh HOME lets `touch` run unasked).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

mod support;
use support::{ctl, eventually, kill_tmux, skip_unless_strict};

const APP: &str = env!("CARGO_BIN_EXE_termsprawl");
/// The dummy key (claude checks only its shape; the stand-in ignores it).
const API_KEY: &str =
    "sk-ant-api03-status-e2e-dummy-key-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

/// The claude CLI the npm setup installed, if it is there.
fn claude_bin_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cdp/node_modules/.bin");
    dir.join("claude").is_file().then(|| dir.canonicalize().ok()).flatten()
}

/// Replies the stand-in may send: each released one lets one request through.
#[derive(Default)]
struct Gate {
    released: Mutex<usize>,
    changed: Condvar,
    seen: Mutex<usize>,
}

impl Gate {
    fn release(&self) {
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
fn stand_in(gate: Arc<Gate>) -> String {
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
fn claude_home(home: &Path, project: &Path) {
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

struct App {
    child: Child,
}

impl App {
    fn start(root: &Path, data: &Path, api: &str, claude: &Path) -> App {
        let mut cmd = Command::new(APP);
        cmd.args(["--headless", "--data-dir"]).arg(data).arg("--project").arg(root.join("proj"));
        cmd.args(["--agent", "tester"]);
        cmd.env("HOME", root.join("home"))
            .env("SHELL", "/bin/sh")
            .env("PATH", format!("{}:/usr/bin:/bin", claude.display()))
            .env("ANTHROPIC_BASE_URL", api)
            .env("ANTHROPIC_API_KEY", API_KEY)
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env_remove("TERMSPRAWL_DATA_DIR")
            .env_remove("TERMSPRAWL_NODE_ID")
            .env_remove("TMUX")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(root.join("app.log")).unwrap();
        cmd.stdout(Stdio::piped()).stderr(log).env("RUST_LOG", "termsprawl=info,tool_server=debug");
        let mut child = cmd.spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "app exited before its tool server started");
            if line.contains("agent tool server http://127.0.0.1:") {
                break;
            }
            assert!(Instant::now() < deadline, "app did not start");
        }
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        });
        App { child }
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `agent_status` entry of `node`, as the tester agent sees it.
fn status(data: &Path, node: &str) -> Value {
    let v =
        ctl(data, "tester", "agent_status", json!({"nodeId": node})).unwrap_or_else(|e| panic!("agent_status: {e}"));
    v["agents"][0].clone()
}

/// Waits until `node`'s state is `want`, reported by the hooks (before the
/// first hook, output alone shows the quiet-time guess), and returns its entry.
fn wait_state(data: &Path, node: &str, want: &str, root: &Path) -> Value {
    let mut last = Value::Null;
    let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually(120, &format!("{node} to be {want}"), || {
            last = status(data, node);
            (last["state"] == want && last["source"] == "hooks").then(|| last.clone())
        })
    }));
    found.unwrap_or_else(|_| {
        let log = std::fs::read_to_string(root.join("app.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        panic!(
            "{node} never became {want}; last {last}; app log tail:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )
    })
}

#[test]
fn real_claude_hooks_drive_agent_status() {
    let Some(claude) = claude_bin_dir() else {
        skip_unless_strict(
            "real_claude_hooks_drive_agent_status",
            "tests/cdp/node_modules/.bin/claude is not installed",
        );
        return;
    };
    let root_dir = tempfile::Builder::new().prefix("tss").tempdir_in("/tmp").unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    let data = root.join("d");
    let project = root.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    claude_home(&root.join("home"), &project);
    let gate = Arc::new(Gate::default());
    let api = stand_in(gate.clone());
    let app = App::start(&root, &data, &api, &claude);

    // A claude with a first instruction: its UserPromptSubmit hook says working
    // while the model's reply is held, its Stop hook done once it arrives.
    let launched = ctl(&data, "tester", "agent_launch", json!({"agent": "claude", "text": "say hello"})).unwrap();
    let first = launched["nodeId"].as_str().unwrap().to_owned();
    let working = wait_state(&data, &first, "working", &root);
    assert_eq!(working["source"], "hooks", "{working}");
    assert!(working["stateSince"].as_u64().is_some_and(|ms| ms > 1_600_000_000_000), "{working}");
    let listed = ctl(&data, "tester", "canvas_list", json!({})).unwrap();
    let entry = listed.as_array().unwrap().iter().find(|n| n["id"] == first.as_str()).cloned().unwrap();
    assert_eq!((&entry["state"], &entry["source"]), (&json!("working"), &json!("hooks")), "{entry}");
    gate.release();
    let done = wait_state(&data, &first, "done", &root);
    assert_eq!(done["source"], "hooks", "{done}");

    // A claude asked to run a command: the model answers with a Bash tool_use,
    // claude asks for permission, and its hooks say so.
    let launched =
        ctl(&data, "tester", "agent_launch", json!({"agent": "claude", "text": "please run touch"})).unwrap();
    let second = launched["nodeId"].as_str().unwrap().to_owned();
    gate.release();
    let asked = wait_state(&data, &second, "needs-permission", &root);
    assert_eq!(asked["source"], "hooks", "{asked}");
    let detail = asked["detail"].as_str().unwrap_or("");
    assert!(detail.contains("Bash") || detail.contains("permission"), "{asked}");
    assert!(!project.join("made-by-claude.txt").exists(), "the command ran without permission");
    // The first agent is still done (or, once claude's idle notification has
    // fired on a slow run, waiting for input): each node has its own state.
    let first_now = status(&data, &first);
    assert!(["done", "waiting-for-input"].contains(&first_now["state"].as_str().unwrap_or("")), "{first_now}");

    drop(app);
    kill_tmux(&data);
}
