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
    assert_eq!(tmux_option(session.socket(), "focus-events"), "on", "focus reports reach the pane's program");

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

#[test]
fn a_programs_output_and_scrollback_stay_after_it_ends_in_tmux() {
    let Some(tmux) = tmux_or_skip("exit trace") else { return };
    let data = tempfile::tempdir().unwrap();
    let session = TmuxSession::new(tmux, data.path(), "node-trace").unwrap();
    let _guard = ServerGuard(session.socket().to_owned());

    let host = TestHost::new();
    let mut failing = config(&session, data.path());
    // 300 lines: far more than the 24 rows, so most of it is scrollback.
    let script = "for i in $(seq 1 300); do echo \"row $i\"; done; printf '\\033[31mabout to fail\\033[0m\\n'; exit 3";
    failing.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script.into()] });
    let term = Terminal::spawn(failing, host.clone()).unwrap();
    let status = host.wait_exit();
    assert_eq!(status.code, 3);
    assert!(!session.exists(), "the session ends with its program");
    assert!(!session.trace_file().exists(), "the trace file is taken");

    let shown = screen_text(&term);
    assert!(shown.contains("about to fail") && shown.contains("row 300"), "last screen kept, not [exited]: {shown}");
    assert!(!shown.contains("[exited]"), "{shown}");
    let red = term.snapshot();
    let row = (0..red.rows).find(|&r| red.row_text(r) == "about to fail").expect("the red line");
    assert_eq!(red.cell(row, 0).map(|c| c.fg), Some(terminal::Theme::default().ansi[1]), "colours kept");
    let text = term.read_text(100_000);
    assert!(text.starts_with("row 1\nrow 2\n"), "the whole scrollback is readable: {}", &text[..40.min(text.len())]);
    assert!(text.ends_with("row 300\nabout to fail"), "{}", &text[text.len().saturating_sub(60)..]);
}

/// The server exits when its last session ends; a node started in that
/// moment once met a dying server ("server exited unexpectedly") and its
/// program never ran. Each program here starts right as the one before it
/// ended, several at a time: every one must run and report its own status.
#[test]
fn programs_started_as_the_server_exits_all_run() {
    let Some(tmux) = tmux_or_skip("server exit race") else { return };
    let data = tempfile::tempdir().unwrap();
    let first = TmuxSession::new(tmux.clone(), data.path(), "race-0-0").unwrap();
    let _guard = ServerGuard(first.socket().to_owned());
    std::thread::scope(|scope| {
        for lane in 0..3 {
            let (tmux, data) = (tmux.clone(), data.path());
            scope.spawn(move || {
                for round in 0..15 {
                    let session = TmuxSession::new(tmux.clone(), data, &format!("race-{lane}-{round}")).unwrap();
                    let host = TestHost::new();
                    let mut quick = config(&session, data);
                    let script = format!("echo ran-{lane}-{round}; exit {}", 3 + round % 5);
                    quick.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script] });
                    let term = Terminal::spawn(quick, host.clone()).unwrap();
                    let status = host.wait_exit();
                    let shown = screen_text(&term);
                    assert_eq!(status.code, 3 + round % 5, "lane {lane} round {round}: {status:?}, screen {shown:?}");
                    assert!(shown.contains(&format!("ran-{lane}-{round}")), "lane {lane} round {round}: {shown:?}");
                }
            });
        }
    });
}

/// Starting many terminals at once (a restore) creates their sessions in
/// batches that each fit a tmux command (here several, for the long
/// environment); each program still has its pane piped from its first byte,
/// its own environment, size and exit status; a bad request fails alone, and a
/// session that was running after all (the batch command then fails) is
/// attached to while the rest of its batch is created one by one.
#[test]
fn many_terminals_start_together_each_as_it_would_alone() {
    use terminal::TerminalSignal;
    let Some(tmux) = tmux_or_skip("batched start") else { return };
    let data = tempfile::tempdir().unwrap();
    let running = TmuxSession::new(tmux.clone(), data.path(), "batch-running").unwrap();
    let _guard = ServerGuard(running.socket().to_owned());
    let (_host, shell) = ready_shell(&running, data.path());
    drop(shell);

    let long = "x".repeat(1500);
    let mut hosts = Vec::new();
    let mut batch = Vec::new();
    for i in 0..24u16 {
        let session = TmuxSession::new(tmux.clone(), data.path(), &format!("batch-{i}")).unwrap();
        let mut c = config(&session, data.path());
        c.size = TermSize::new(70 + i, 20);
        c.env.push(("BATCH_LONG".into(), long.clone()));
        let script = format!(
            "printf '\\033]9;first-{i}\\007'; echo \"ran-{i} $TERMSPRAWL_NODE_ID ${{#BATCH_LONG}} $(tput cols)\"; read -r _; exit {}",
            3 + i % 5
        );
        c.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script] });
        if i == 5 {
            c.cwd = data.path().join("missing");
        }
        let host = TestHost::new();
        hosts.push(host.clone());
        batch.push((c, host as std::sync::Arc<dyn terminal::TerminalHost>));
    }
    // Thought not running (stale knowledge): its batch's command fails on the duplicate.
    let stale = running.clone().known_running(false);
    let host = TestHost::new();
    batch.insert(10, (config(&stale, data.path()), host.clone()));
    hosts.insert(10, host);

    let started = Terminal::spawn_many(batch);
    assert_eq!(started.len(), 25);
    for (i, (term, host)) in started.iter().zip(&hosts).enumerate() {
        let n = if i < 10 { i } else { i.saturating_sub(1) };
        match (i, term) {
            (10, Ok(term)) => {
                term.write("echo again-$((40+2))\r").unwrap();
                wait_screen(term, "the running shell", |s| s.contains("again-42"));
            }
            (5, Err(e)) => assert!(e.to_string().contains("missing"), "{e}"),
            (_, Err(e)) => panic!("terminal {i} did not start: {e}"),
            (_, Ok(term)) => {
                let line = format!("ran-{n} node-tmux 1500 {}", 70 + n);
                wait_screen(term, "the program's line", |s| s.contains(&line));
                let first = TerminalSignal::Notification { title: None, body: format!("first-{n}") };
                host.wait_for("the first signal", |r| r.signals.contains(&first));
                term.write("\r").unwrap();
                assert_eq!(host.wait_exit().code, 3 + n as u32 % 5, "terminal {i}");
            }
        }
    }
}

#[test]
fn sessions_on_socket_lists_every_session_and_none_without_a_server() {
    let Some(tmux) = tmux_or_skip("session list") else { return };
    let data = tempfile::tempdir().unwrap();
    let a = TmuxSession::new(tmux.clone(), data.path(), "list-a").unwrap();
    let b = TmuxSession::new(tmux, data.path(), "list-b").unwrap();
    let _guard = ServerGuard(a.socket().to_owned());
    assert!(a.sessions_on_socket().is_empty(), "no server yet: no sessions");
    let (_host_a, _term_a) = ready_shell(&a, data.path());
    let (_host_b, _term_b) = ready_shell(&b, data.path());
    let names = b.sessions_on_socket();
    assert_eq!(names, ["list-a", "list-b"].map(String::from).into_iter().collect());
    assert!(a.kill().unwrap());
    assert_eq!(b.sessions_on_socket(), ["list-b"].map(String::from).into_iter().collect());
}

#[test]
fn titles_pass_through_tmux_and_its_own_name_never_shows() {
    let Some(tmux) = tmux_or_skip("titles") else { return };
    let data = tempfile::tempdir().unwrap();
    let session = TmuxSession::new(tmux, data.path(), "node-title").unwrap();
    let _guard = ServerGuard(session.socket().to_owned());
    let (host, term) = ready_shell(&session, data.path());
    term.write("printf '\\033]2;building it\\007'\r").unwrap();
    host.wait_for("the program's title", |r| r.titles.iter().any(|t| t.as_deref() == Some("building it")));
    let titles = host.recorded.lock().titles.clone();
    for t in titles.iter().flatten() {
        assert!(!t.contains("node-title") && !t.contains(':'), "tmux's own title leaked: {titles:?}");
    }
    term.write("exit\r").unwrap();
    host.wait_exit();
}

/// The client on the PTY leads its own session with the PTY as its controlling
/// terminal (so a resize reaches it as SIGWINCH, and the pane's program sees
/// the new size), and no tmux process holds a file of the app's, even one
/// the app left inheritable (the server is a daemon that outlives the app).
#[test]
fn a_resize_reaches_the_program_in_tmux_and_no_tmux_process_holds_the_apps_files() {
    let Some(tmux) = tmux_or_skip("resize") else { return };
    let data = tempfile::tempdir().unwrap();
    let held = data.path().join("held-by-the-app");
    let file = std::fs::File::create(&held).unwrap();
    // SAFETY: clearing FD_CLOEXEC on this test's own open descriptor.
    unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_SETFD, 0) };
    let session = TmuxSession::new(tmux, data.path(), "node-resize").unwrap();
    let _guard = ServerGuard(session.socket().to_owned());
    let (host, term) = ready_shell(&session, data.path());
    term.write("stty size\r").unwrap();
    wait_screen(&term, "the first size", |s| s.lines().any(|l| l.trim() == "24 80"));
    term.resize(TermSize::new(100, 30)).unwrap();
    term.write("clear; stty size\r").unwrap();
    wait_screen(&term, "the new size", |s| s.lines().any(|l| l.trim() == "30 100"));
    // Only this test's tmux processes (their command lines name its socket).
    let socket = session.socket().to_string_lossy().into_owned();
    let ours: Vec<u32> = processes_holding(&held.to_string_lossy())
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&socket))
        })
        .collect();
    assert!(ours.is_empty(), "tmux processes {ours:?} hold a file of the app's");
    term.write("exit\r").unwrap();
    host.wait_exit();
}

/// Pids of other processes with a file open whose path contains `needle`
/// (the pane pipes' `cat`s, whose command line is only `cat`).
fn processes_holding(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        if pid == std::process::id() {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        let holds = fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target.to_string_lossy().contains(needle)));
        if holds {
            found.push(pid);
        }
    }
    found
}

/// Signal FIFOs left in the socket directory.
fn signal_fifos(session: &TmuxSession) -> Vec<PathBuf> {
    let dir = session.socket().parent().unwrap();
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "signals"))
        .collect()
}

#[test]
fn signals_inside_tmux_reach_the_host_across_a_reattach_and_no_pipe_outlives_the_node() {
    use terminal::signals::Progress;
    use terminal::TerminalSignal;
    let Some(tmux) = tmux_or_skip("signals") else { return };
    let data = tempfile::tempdir().unwrap();
    let session = TmuxSession::new(tmux, data.path(), "node-sig").unwrap();
    let _guard = ServerGuard(session.socket().to_owned());
    let needle = format!("{}/tmux/node-sig.", data.path().display());
    let needle = format!("{needle}{}-", std::process::id());

    // A program whose very first output is a signal: the command that creates the session pipes it first.
    let host = TestHost::new();
    let mut early = config(&session, data.path());
    let script = "printf '\\033]9;first words\\007'; exec bash --noprofile --norc";
    early.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script.into()] });
    let term = Terminal::spawn(early, host.clone()).unwrap();
    let first = TerminalSignal::Notification { title: None, body: "first words".into() };
    host.wait_for("the first notification", |r| r.signals.contains(&first));
    term.write("printf '\\033]9;4;1;50\\007\\033]133;D;3\\007\\a'; echo sent-$((40+2))\r").unwrap();
    host.wait_for("progress and the command mark", |r| {
        r.signals.contains(&TerminalSignal::Progress(Progress::Normal(50)))
            && r.signals.contains(&TerminalSignal::CommandFinished { exit: Some(3) })
    });
    host.wait_for("the bell, still from the client", |r| r.bells >= 1);
    wait_screen(&term, "output", |s| s.contains("sent-42"));
    assert_eq!(host.recorded.lock().signals.iter().filter(|s| **s == first).count(), 1, "each signal once");
    assert_eq!(processes_holding(&needle).len(), 1, "one pipe process while attached");

    // The app quits: the client detaches and the pane's pipe goes with it.
    drop(term);
    host.wait_exit();
    wait_until("the pipe process to end", || processes_holding(&needle).is_empty());
    wait_until("the FIFO to go", || signal_fifos(&session).is_empty());
    assert!(session.exists());

    // The app starts again and re-attaches: signals still arrive.
    let host = TestHost::new();
    let term = Terminal::spawn(config(&session, data.path()), host.clone()).unwrap();
    term.write("printf '\\033]777;notify;Build;done\\007'\r").unwrap();
    host.wait_for("a notification after the re-attach", |r| {
        r.signals.contains(&TerminalSignal::Notification { title: Some("Build".into()), body: "done".into() })
    });
    assert!(!host.recorded.lock().signals.contains(&first), "nothing replayed from before");

    // A Program Status query, which tmux swallows, is still answered: the reply reaches the program.
    term.write(
        "printf '\\033]7501;?\\007'; IFS= read -rs -n 10 -t 20 r; case \"$r\" in *7501*) echo reply-$((1+1));; esac\r",
    )
    .unwrap();
    wait_screen(&term, "the status query's reply", |s| s.contains("reply-2"));

    // Closed for good: no pipe process, no FIFO.
    assert!(session.kill().unwrap());
    host.wait_exit();
    wait_until("the pipe process to end after kill", || processes_holding(&needle).is_empty());
    wait_until("the FIFO to go after kill", || signal_fifos(&session).is_empty());
    drop(term);
}
