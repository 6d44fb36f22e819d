//! Terminal sessions survive app restarts, end to end through the real
//! `termsprawl --headless` binary: with tmux (the marker typed into the real
//! session on the app's private socket is on the app's screen again after a
//! SIGTERM and a fresh start, in the same shell process), and without tmux
//! (the saved snapshot is replayed under the "session restored" marker).
//! The app's own view is read from the snapshot it saves of each grid.

mod support;
mod terminal_common;

use terminal_common::*;
use termsprawl::model::{Node, NodeKind, Rect};
use termsprawl::runtime::terminals::{session_name, snapshot_path};

#[test]
fn tmux_session_survives_restart_with_marker_on_screen() {
    if !tmux_available() {
        // ./dev test installs it: there a missing one fails instead of skipping.
        assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "not installed, and ./dev test needs it");
        println!("note: tmux >= 3.2 is not installed (apt-get install tmux); skipping the tmux persistence test");
        return;
    }
    let dir = short_tempdir();
    let data = dir.path().join("d");
    let node = Node::new(
        NodeKind::Terminal { cwd: "".into(), command: None, tmux_session: None },
        "shell",
        Rect { x: 0.0, y: 0.0, w: 640.0, h: 400.0 },
    );
    let id = node.id.clone();
    let folder = write_project(&dir.path().join("p"), vec![node]);
    let name = session_name(&folder, &id);
    let tmux = PrivateTmux::of(&data);

    let app = App::start(&data, &folder, &[]);
    wait_for("the node's tmux session", || tmux.has(&name).then_some(()));
    assert_eq!(tmux.sessions(), vec![name.clone()], "one session per terminal node, named from the node");
    // Type into the real session; the output differs from the typed line.
    assert!(tmux.run(&["send-keys", "-t", &format!("={name}:"), "-l", "echo MARK-$((6*7))-OK"]).is_some());
    assert!(tmux.run(&["send-keys", "-t", &format!("={name}:"), "Enter"]).is_some());
    wait_for("the marker in the session", || tmux.capture(&name).contains("MARK-42-OK").then_some(()));
    let shell_pid = tmux.pane_pid(&name).expect("pane pid");
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");

    // Closing the app does not end the session; it only detaches.
    assert!(tmux.has(&name), "the session ended with the app");
    assert_eq!(tmux.clients(&name), 0, "the app's client is still attached");
    let first_view = snapshot_text(&data, &folder, &id).expect("snapshot of the app's grid at exit");
    assert!(first_view.contains("MARK-42-OK"), "the app's grid did not show the marker: {first_view:?}");
    // Forget the first run's view so only the second run can bring the marker back.
    std::fs::remove_file(snapshot_path(&data, &name)).expect("remove snapshot");

    let app = App::start(&data, &folder, &[]);
    wait_for("the app to re-attach", || (tmux.clients(&name) == 1).then_some(()));
    let view = wait_for("the marker on the re-attached app's screen", || {
        snapshot_text(&data, &folder, &id).filter(|t| t.contains("MARK-42-OK"))
    });
    assert!(!view.contains(terminal::persist::RESTORED_MARKER), "tmux mode must not replay a snapshot: {view:?}");
    assert_eq!(
        tmux.pane_pid(&name).as_deref(),
        Some(shell_pid.as_str()),
        "a new shell was started instead of re-attaching"
    );
    assert!(tmux.capture(&name).contains("MARK-42-OK"), "scrollback lost");
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
    assert!(tmux.has(&name));
}

/// The first `RUN-<digits>` line after byte offset `from`.
fn run_line(text: &str, from: usize) -> Option<(usize, String)> {
    let at = from + text.get(from..)?.find("RUN-")?;
    let digits: String = text[at + 4..].chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then(|| (at, format!("RUN-{digits}")))
}

#[test]
fn without_tmux_snapshot_is_replayed_under_marker() {
    let dir = short_tempdir();
    let data = dir.path().join("d");
    // A PATH with no tmux on it: the app must fall back to snapshots.
    let empty_path = dir.path().join("bin");
    std::fs::create_dir_all(&empty_path).unwrap();
    let path = empty_path.to_str().unwrap();
    // Each run prints its own shell pid, then waits for input.
    let command = vec!["/bin/sh".into(), "-c".into(), "echo RUN-$$; while read l; do :; done".into()];
    let node = Node::new(
        NodeKind::Terminal { cwd: "".into(), command: Some(command), tmux_session: None },
        "shell",
        Rect { x: 0.0, y: 0.0, w: 640.0, h: 400.0 },
    );
    let id = node.id.clone();
    let folder = write_project(&dir.path().join("p"), vec![node]);

    let app = App::start(&data, &folder, &[("PATH", path)]);
    let first = wait_for("the first run's output in a snapshot", || {
        snapshot_text(&data, &folder, &id).and_then(|t| run_line(&t, 0))
    });
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
    assert!(!data.join("tmux").exists(), "tmux was used although it is not on PATH");
    let saved = std::fs::metadata(snapshot_path(&data, &session_name(&folder, &id))).expect("snapshot at exit").len();
    assert!(saved <= terminal::persist::MAX_SNAPSHOT_BYTES as u64);

    let app = App::start(&data, &folder, &[("PATH", path)]);
    let marker = terminal::persist::RESTORED_MARKER;
    let view = wait_for("the restored history, the marker and the new run", || {
        let t = snapshot_text(&data, &folder, &id)?;
        let m = t.find(marker)?;
        let second = run_line(&t, m)?;
        Some((t, m, second))
    });
    let (text, marker_at, second) = view;
    let old = run_line(&text, 0).expect("restored line");
    assert_eq!(old.1, first.1, "the first run's output was not restored above the marker: {text:?}");
    assert!(old.0 < marker_at, "{text:?}");
    assert_ne!(second.1, first.1, "the second run must be a fresh process");
    let (status, stderr) = app.stop();
    assert!(status.success(), "app exit {status}: {stderr}");
}
