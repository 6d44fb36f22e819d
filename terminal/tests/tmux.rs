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

/// A shell in `session`, once it answers (its client is attached).
fn ready_shell(session: &TmuxSession, dir: &Path) -> (std::sync::Arc<TestHost>, Terminal) {
    let host = TestHost::new();
    let term = Terminal::spawn(config(session, dir), host.clone()).unwrap();
    term.write("echo ready-$((20+22))\r").unwrap();
    wait_screen(&term, "the shell", |s| s.contains("ready-42"));
    (host, term)
}

/// The installed tmux, or `None` (after saying so) when there is none to test.
fn tmux_or_skip(test: &str) -> Option<Tmux> {
    match Tmux::detect() {
        Ok(tmux) => Some(tmux),
        Err(e) => {
            // ./dev test installs it: there a missing one fails instead of skipping.
            assert!(
                std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(),
                "tmux not installed, and ./dev test needs it: {e}"
            );
            println!("skipping the tmux {test} test: {e}");
            None
        }
    }
}

#[test]
fn session_survives_dropping_the_terminal_and_kill_ends_it() {
    let Some(tmux) = tmux_or_skip("persistence") else { return };
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

#[test]
fn the_programs_exit_status_survives_tmux() {
    let Some(tmux) = tmux_or_skip("exit status") else { return };
    let data = tempfile::tempdir().unwrap();
    let session = TmuxSession::new(tmux.clone(), data.path(), "node-exit").unwrap();
    let _guard = ServerGuard(session.socket().to_owned());

    // A plain exit code.
    let (host, term) = ready_shell(&session, data.path());
    term.write("exit 7\r").unwrap();
    let status = host.wait_exit();
    assert_eq!((status.code, status.signal), (7, None), "exit 7 inside tmux");
    assert!(!session.exists(), "the session ends with its program");
    assert!(!session.exit_file().exists(), "the status file is taken");

    // Death by signal: the shell kills itself.
    let (host, term) = ready_shell(&session, data.path());
    term.write("kill -KILL $$\r").unwrap();
    let status = host.wait_exit();
    assert_eq!(status.code, 1);
    assert_eq!(status.signal.as_deref(), Some("Killed"), "SIGKILL inside tmux");

    // Ctrl+C reaches the program, not the wrapper recording the status.
    let host = TestHost::new();
    let mut sleeper = config(&session, data.path());
    let script = "echo sleeping-$((5+5)); exec sleep 30";
    sleeper.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script.into()] });
    let term = Terminal::spawn(sleeper, host.clone()).unwrap();
    // The client is attached (its tty raw) once the program's output shows.
    wait_screen(&term, "sleep started", |s| s.contains("sleeping-10"));
    term.write("\x03").unwrap();
    let status = host.wait_exit();
    assert_eq!(status.signal.as_deref(), Some("Interrupt"), "Ctrl+C ends sleep with SIGINT: {status:?}");

    // Detaching is not an exit: the client's own status is reported and the
    // session lives on with nothing recorded.
    let (host, term) = ready_shell(&session, data.path());
    drop(term);
    host.wait_exit();
    assert!(session.exists());
    assert!(!session.exit_file().exists());
    assert!(session.kill().unwrap());

    // A status left behind by an earlier session is not reported by a new one.
    std::fs::write(session.exit_file(), "9\n").unwrap();
    let (host, term) = ready_shell(&session, data.path());
    assert!(!session.exit_file().exists(), "the stale status was cleared at start");
    term.write("exit 0\r").unwrap();
    assert!(host.wait_exit().success());
}
