//! A program that ends leaves its trace, end to end through the real
//! `termsprawl --headless` binary, with tmux and without: its output and
//! scrollback stay in the node with the exit line under them (the app's own
//! grid, read from the snapshot it saves), and `terminal_read` (through the
//! real `termsprawl-ctl` and tool server) returns the output and the status.
//! An agent whose CLI fails at start (a stand-in `claude` on PATH, installed
//! as an npm package is, printing what the real one prints offline) shows
//! what it printed and what the launch probe found.

mod support;
mod terminal_common;

use serde_json::json;
use std::path::Path;
use terminal_common::*;
use termsprawl::model::{AgentKind, Node, NodeKind, Rect};

/// Lines the long program prints: far more than a node's rows.
const LONG: usize = 400;

fn terminal(command: &str, x: f64) -> Node {
    let command = Some(vec!["/bin/sh".to_owned(), "-c".to_owned(), command.to_owned()]);
    Node::new(NodeKind::Terminal { cwd: "".into(), command, tmux_session: None }, "t", Rect::new(x, 0.0, 640.0, 400.0))
}

/// A stand-in for the claude CLI in `bin`, laid out as npm installs it (a bin
/// link to the package's script, its version in package.json): offline, the
/// real one prints this and exits 1.
fn failing_claude(bin: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let pkg = bin.join("node_modules/@anthropic-ai/claude-code");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("package.json"), r#"{"name": "@anthropic-ai/claude-code", "version": "9.8.7"}"#).unwrap();
    let script = "#!/bin/sh\necho 'Unable to connect to Anthropic services'\necho 'Error: getaddrinfo ENOTFOUND api.anthropic.com'\nexit 1\n";
    std::fs::write(pkg.join("cli.js"), script).unwrap();
    std::fs::set_permissions(pkg.join("cli.js"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(pkg.join("cli.js"), bin.join("claude")).unwrap();
}

/// Starts the app on two ended programs and a failed agent, with `PATH` as
/// `path(bin)`, and checks what each left.
fn check_traces(path: impl Fn(&Path) -> String, tmux: bool) {
    let dir = short_tempdir();
    let data = dir.path().join("d");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    failing_claude(&bin);
    let fail = terminal("echo about to fail; exit 3", 0.0);
    let long = terminal(&format!("i=1; while [ $i -le {LONG} ]; do echo row $i; i=$((i+1)); done; exit 0"), 700.0);
    let agent = Node::new(
        NodeKind::Agent { agent: AgentKind::Claude, cwd: "".into(), worktree: None },
        "claude",
        Rect::new(0.0, 500.0, 640.0, 400.0),
    );
    let (fail_id, long_id, agent_id) = (fail.id.clone(), long.id.clone(), agent.id.clone());
    let folder = write_project(&dir.path().join("p"), vec![fail, long, agent]);
    let _server = tmux.then(|| PrivateTmux::of(&data));
    let path = path(&bin);
    // A stand-in login (not a key), or the agent node would need setup instead of failing.
    let env = [("PATH", path.as_str()), ("ANTHROPIC_API_KEY", "stand-in")];
    let app = App::start_with(&data, &folder, &["--agent", "ci-bot"], &env);

    // Until the tool server is up and the session provisioned, a call fails: waits retry it.
    let read = |id: &termsprawl::model::NodeId| {
        support::ctl(&data, "ci-bot", "terminal_read", json!({"nodeId": id, "maxChars": 100_000}))
            .map_err(|e| eprintln!("terminal_read (retried): {e}"))
            .ok()
            .filter(|v| v.get("exited").is_some())
    };
    let ended = wait_for("the failing program's exit", || read(&fail_id));
    assert_eq!(ended["exited"], json!({"code": 3, "signal": null}), "{ended}");
    let text = ended["text"].as_str().unwrap();
    assert!(text.contains("about to fail"), "terminal_read of the ended node: {text:?}");
    assert!(!text.contains("[exited]") && !text.contains("Enter or R"), "only the program's output: {text:?}");

    let view = wait_for("the app's grid with the exit line", || {
        snapshot_text(&data, &folder, &fail_id).filter(|t| t.contains("— exited 3 · Enter or R to restart —"))
    });
    assert!(view.contains("about to fail"), "the output stays on the node's screen: {view:?}");
    let at = |s: &str| view.find(s).unwrap_or(usize::MAX);
    assert!(at("about to fail") < at("— exited 3"), "the exit line is under the output: {view:?}");

    let long_read = wait_for("the long program's exit", || read(&long_id));
    let text = long_read["text"].as_str().unwrap();
    assert!(text.starts_with("row 1\nrow 2\n"), "the whole scrollback: {:?}", &text[..text.len().min(80)]);
    assert!(text.ends_with(&format!("row {LONG}")), "{:?}", &text[text.len().saturating_sub(80)..]);
    assert_eq!(text.lines().count(), LONG, "every line once");

    let failed = wait_for("the agent's exit", || read(&agent_id));
    assert_eq!(failed["exited"]["code"], 1, "{failed}");
    assert!(failed["text"].as_str().unwrap().contains("ENOTFOUND api.anthropic.com"), "what it printed: {failed}");
    let line = format!("— claude exited 1 · {} 9.8.7 · Enter or R to restart —", bin.join("claude").display());
    let view =
        wait_for("the agent's exit line", || snapshot_text(&data, &folder, &agent_id).filter(|t| t.contains(&line)));
    assert!(view.contains("Unable to connect to Anthropic services"), "{view:?}");

    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
}

#[test]
fn an_ended_programs_output_and_status_stay_readable_in_tmux() {
    if !tmux_available() {
        support::skip_unless_strict("the tmux exit trace test", "tmux >= 3.2 is not installed");
        return;
    }
    check_traces(|bin| format!("{}:/usr/bin:/bin", bin.display()), true);
}

#[test]
fn an_ended_programs_output_and_status_stay_readable_without_tmux() {
    // A PATH with no tmux on it: the app runs its terminals on plain PTYs.
    check_traces(|bin| bin.display().to_string(), false);
}
