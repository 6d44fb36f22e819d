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
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::claude_api::{claude_bin_dir, claude_home, stand_in, Gate, API_KEY};
use support::{ctl, eventually, skip_unless_strict};

const APP: &str = env!("CARGO_BIN_EXE_termsprawl");
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
    let root_dir = support::TestRoot::short("tss");
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

    // The hooks reported with each node's token, which is in no log, in no
    // hook command line (claude runs them from the settings file as written),
    // and in no running process's argv or environment.
    let log = std::fs::read_to_string(root.join("app.log")).unwrap();
    for node in [&first, &second] {
        let tools = data.join("agent-tools");
        let session = std::fs::read_to_string(tools.join("sessions").join(format!("{node}.json"))).unwrap();
        let session: Value = serde_json::from_str(&session).unwrap();
        let token = session["token"].as_str().unwrap_or_default().to_owned();
        assert_eq!(token.len(), 64, "{node}'s session has no token");
        assert!(!log.contains(&token), "{node}'s token is in the app's log");
        let settings = std::fs::read_to_string(tools.join("launch").join(node).join("settings.json")).unwrap();
        assert!(settings.contains("hook") && !settings.contains(&token), "{node}'s hook commands carry its token");
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            for part in ["cmdline", "environ"] {
                // Processes come and go; ones not this user's cannot be read.
                let Ok(bytes) = std::fs::read(entry.path().join(part)) else { continue };
                let shows = bytes.windows(token.len()).any(|w| w == token.as_bytes());
                assert!(!shows, "{node}'s token is in the {part} of process {:?}", entry.file_name());
            }
        }
    }

    drop(app);
}
