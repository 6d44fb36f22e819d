//! Agent nodes, end to end through the real `termsprawl --headless` binary:
//! a fake `claude` on a temp PATH is launched once in the node (its output
//! reaches the node's grid, with the node's identity in its environment, and
//! a restart re-attaches instead of launching again), a missing `codex`
//! leaves its node un-launched with a "needs setup" notice naming the command,
//! and malformed preferences stop the custom agent with a clear notice.

mod support;
mod terminal_common;

use std::os::unix::fs::PermissionsExt;
use terminal_common::*;
use termsprawl::model::{AgentKind, Node, NodeKind, Rect};
use termsprawl::runtime::terminals::{session_name, snapshot_path};

const FAKE_AGENT: &str = r#"#!/bin/sh
echo "launched" >> launches.log
echo "FAKE-AGENT-READY node=$TERMSPRAWL_NODE_ID project=${TERMSPRAWL_PROJECT_ID:+set} args=$#"
while read line; do echo "got: $line"; done
"#;

fn agent_node(agent: AgentKind, x: f64) -> Node {
    Node::new(
        NodeKind::Agent { agent, cwd: "".into(), worktree: None },
        agent.as_str(),
        Rect { x, y: 0.0, w: 640.0, h: 400.0 },
    )
}

fn fake_bin(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join(name);
    std::fs::write(&exe, FAKE_AGENT).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn fake_agent_launches_once_and_missing_agent_needs_setup() {
    for real in ["/usr/bin/codex", "/bin/codex", "/usr/local/bin/codex"] {
        assert!(!std::path::Path::new(real).exists(), "{real} exists; this test needs codex to be missing");
    }
    let dir = short_tempdir();
    let data = dir.path().join("d");
    let bin = fake_bin(dir.path(), "claude");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let claude = agent_node(AgentKind::Claude, 0.0);
    let codex = agent_node(AgentKind::Codex, 700.0);
    let (claude_id, codex_id) = (claude.id.clone(), codex.id.clone());
    let folder = write_project(&dir.path().join("p"), vec![claude, codex]);
    let tmux = PrivateTmux::of(&data);

    // A stand-in login (not a key), or the claude node would need setup.
    let app = App::start(&data, &folder, &[("PATH", &path), ("ANTHROPIC_API_KEY", "stand-in")]);
    let view = wait_for("the fake agent's output in its node", || {
        snapshot_text(&data, &folder, &claude_id).filter(|t| t.contains("FAKE-AGENT-READY"))
    });
    // Four arguments: the tool runtime's `--mcp-config <file> --settings <hooks file>`, which a restored
    // agent gets like a newly launched one.
    assert!(view.contains(&format!("FAKE-AGENT-READY node={claude_id} project=set args=4")), "{view:?}");
    // Its working directory is the project folder.
    wait_for("the launch log in the project folder", || {
        std::fs::read_to_string(folder.join("launches.log")).ok().filter(|l| l.lines().count() == 1)
    });
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
    assert!(stderr.contains("needs setup: `codex` was not found on PATH"), "no needs-setup notice: {stderr}");
    let codex_session = session_name(&folder, &codex_id);
    assert!(!snapshot_path(&data, &codex_session).exists(), "the missing agent's node got a terminal");
    assert!(!tmux.has(&codex_session));

    // A restart shows the agent again without launching it a second time (with
    // tmux it re-attaches to the running agent; without, it launches afresh).
    let claude_session = session_name(&folder, &claude_id);
    std::fs::remove_file(snapshot_path(&data, &claude_session)).expect("snapshot of the first run");
    let app = App::start(&data, &folder, &[("PATH", &path), ("ANTHROPIC_API_KEY", "stand-in")]);
    wait_for("the agent on screen again", || {
        snapshot_text(&data, &folder, &claude_id).filter(|t| t.contains("FAKE-AGENT-READY"))
    });
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
    let launches = std::fs::read_to_string(folder.join("launches.log")).unwrap();
    let expected = if tmux_available() { 1 } else { 2 };
    assert_eq!(launches.lines().count(), expected, "launch count across a restart (tmux: {})", tmux_available());
}

#[test]
fn malformed_preferences_launch_nothing() {
    let dir = short_tempdir();
    let data = dir.path().join("d");
    let bin = fake_bin(dir.path(), "my-agent");
    let prefs_dir = data.join("agent-tools");
    std::fs::create_dir_all(&prefs_dir).unwrap();
    std::fs::write(
        prefs_dir.join("preferences.json"),
        r#"{"custom": {"executable": "my-agent", "instructionFlag": "nodash"}}"#,
    )
    .unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let custom = agent_node(AgentKind::Custom, 0.0);
    let id = custom.id.clone();
    let folder = write_project(&dir.path().join("p"), vec![custom]);
    let _tmux = PrivateTmux::of(&data);

    let app = App::start(&data, &folder, &[("PATH", &path), ("ANTHROPIC_API_KEY", "stand-in")]);
    wait_for("the preferences notice", || app.stderr_text().contains("malformed agent preferences").then_some(()));
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
    assert!(stderr.contains("custom.instructionFlag must start with '-'"), "{stderr}");
    assert!(!folder.join("launches.log").exists(), "the custom agent was launched");
    assert!(!snapshot_path(&data, &session_name(&folder, &id)).exists());
}
