//! Sessions that survive the app: a terminal inside tmux on a private socket.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;
use terminal::tmux::{Tmux, TmuxSession};
use terminal::{CommandSpec, Persistence, TermSize, Terminal, TerminalConfig};

/// Kills the private tmux server even when the test fails.
struct ServerGuard(PathBuf);

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.0).arg("kill-server").output();
    }
}

fn config(session: &TmuxSession, cwd: &Path) -> TerminalConfig {
    let mut config = TerminalConfig::new(cwd, TermSize::new(80, 24));
    config.command = Some(CommandSpec { program: "bash".into(), args: vec!["--noprofile".into(), "--norc".into()] });
    config.env = vec![("PS1".into(), "$ ".into()), ("TERMSPRAWL_NODE_ID".into(), "node-tmux".into())];
    config.persistence = Persistence::Tmux(session.clone());
    config
}

fn tmux_option(socket: &Path, name: &str) -> String {
    let out = Command::new("tmux").arg("-S").arg(socket).args(["show-options", "-gv", name]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn session_survives_dropping_the_terminal_and_kill_ends_it() {
    let tmux = match Tmux::detect() {
        Ok(tmux) => tmux,
        Err(e) => {
            println!("skipping tmux persistence test: {e}");
            return;
        },
    };
    let data = tempfile::tempdir().unwrap();
    let session = TmuxSession::new(tmux, data.path(), "node-abc").unwrap();
    let _guard = ServerGuard(session.socket().to_owned());
    assert!(!session.exists());

    let host = TestHost::new();
    let term = Terminal::spawn(config(&session, data.path()), host.clone()).unwrap();
    term.write("echo \"marker-$((6*7)) $TERMSPRAWL_NODE_ID\"\r").unwrap();
    wait_screen(&term, "marker in tmux", |s| s.contains("marker-42 node-tmux"));
    assert!(session.exists());
    assert_eq!(tmux_option(session.socket(), "history-limit"), "50000");
    assert_eq!(tmux_option(session.socket(), "status"), "off");

    // Closing the app: the client detaches, the session keeps running.
    drop(term);
    host.wait_exit();
    assert!(session.exists(), "dropping the Terminal must not kill the tmux session");

    let host2 = TestHost::new();
    let term2 = Terminal::spawn(config(&session, data.path()), host2.clone()).unwrap();
    wait_screen(&term2, "marker after re-attach", |s| s.contains("marker-42 node-tmux"));
    assert!(term2.read_text(10_000).contains("marker-42 node-tmux"), "capture-pane text");

    assert!(session.kill().unwrap());
    host2.wait_exit();
    assert!(!session.exists());
    assert!(!session.kill().unwrap(), "killing a gone session reports false");
}
