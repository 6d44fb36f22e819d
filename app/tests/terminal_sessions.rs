//! Closing a node ends its session; closing its project (or the app) does
//! not: the pieces the runtime uses for that decision, against a real tmux
//! server on a private socket and real snapshot files.

mod support;
mod terminal_common;

use std::sync::Arc;
use std::time::Duration;
use terminal::tmux::{Tmux, TmuxSession};
use terminal::{CommandSpec, ExitStatus, Persistence, TermSize, Terminal, TerminalConfig, TerminalHost};
use terminal_common::*;
use termsprawl::model::{Camera, Command, Node, NodeKind, Project, ProjectId, Rect, Workspace};
use termsprawl::runtime::terminals::{
    closed_for_good, end_session, save_terminal_snapshot, session_name, snapshot_path,
};

struct Quiet;
impl TerminalHost for Quiet {
    fn wakeup(&self) {}
    fn title_changed(&self, _: Option<String>) {}
    fn bell(&self) {}
    fn clipboard_store(&self, _: String) {}
    fn exited(&self, _: ExitStatus) {}
}

#[test]
fn ending_a_session_kills_tmux_and_deletes_the_snapshot() {
    let Ok(tmux) = Tmux::detect() else {
        // ./dev test installs it: there a missing one fails instead of skipping.
        assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "not installed, and ./dev test needs it");
        println!("note: tmux >= 3.2 is not installed; skipping");
        return;
    };
    let dir = short_tempdir();
    let data = dir.path().join("d");
    let node = termsprawl::model::NodeId::new("term-1").unwrap();
    let name = session_name(dir.path(), &node);
    let server = PrivateTmux::of(&data);
    let session = TmuxSession::new(tmux.clone(), &data, &name).unwrap();
    let mut config = TerminalConfig::new(dir.path(), TermSize::new(60, 10));
    config.command =
        Some(CommandSpec { program: "/bin/sh".into(), args: vec!["-c".into(), "echo SESSION-UP; exec cat".into()] });
    config.persistence = Persistence::Tmux(session.clone());
    let term = Terminal::spawn(config, Arc::new(Quiet)).unwrap();
    wait_for("the program's output", || term.snapshot().row_text(0).contains("SESSION-UP").then_some(()));
    save_terminal_snapshot(&data, &name, &term).unwrap();
    let saved = std::fs::read_to_string(snapshot_path(&data, &name)).unwrap();
    assert!(saved.contains("SESSION-UP"), "{saved:?}");

    // Detaching (the app closing) leaves the session running.
    drop(term);
    std::thread::sleep(Duration::from_millis(200));
    assert!(session.exists(), "dropping the terminal ended the tmux session");

    assert!(end_session(&data, Some(&tmux), &name).unwrap());
    assert!(!session.exists(), "tmux session still alive after the node closed");
    assert!(!snapshot_path(&data, &name).exists(), "snapshot left behind");
    assert!(!end_session(&data, Some(&tmux), &name).unwrap(), "a second end finds nothing");
    assert!(server.sessions().is_empty());
}

#[test]
fn ending_a_session_without_tmux_deletes_the_snapshot() {
    let dir = short_tempdir();
    let mut config = TerminalConfig::new(dir.path(), TermSize::new(40, 5));
    config.command =
        Some(CommandSpec { program: "/bin/sh".into(), args: vec!["-c".into(), "echo PLAIN; exec cat".into()] });
    let term = Terminal::spawn(config, Arc::new(Quiet)).unwrap();
    wait_for("the program's output", || term.snapshot().row_text(0).contains("PLAIN").then_some(()));
    save_terminal_snapshot(dir.path(), "plain-1", &term).unwrap();
    assert!(snapshot_path(dir.path(), "plain-1").exists());
    assert!(end_session(dir.path(), None, "plain-1").unwrap());
    assert!(!snapshot_path(dir.path(), "plain-1").exists());
}

#[test]
fn only_a_removed_node_of_an_open_project_is_closed_for_good() {
    let dir = support::TestRoot::new();
    let node = Node::new(
        NodeKind::Terminal { cwd: dir.path().into(), command: None, tmux_session: None },
        "t",
        Rect { x: 0.0, y: 0.0, w: 400.0, h: 300.0 },
    );
    let id = node.id.clone();
    let pid = ProjectId::generate();
    let (project, _) = Project::from_nodes(pid.clone(), "p", dir.path(), Camera::default(), vec![node], 1).unwrap();
    let mut ws = Workspace::from_projects(vec![project], None).unwrap();
    assert!(!closed_for_good(&ws, &pid, &id), "a node still on its canvas");
    assert!(!closed_for_good(&ws, &ProjectId::generate(), &id), "a node of a closed project is only put away");
    ws.apply(Command::RemoveNodes { ids: vec![id.clone()] }).unwrap();
    assert!(closed_for_good(&ws, &pid, &id), "a removed node");
}
