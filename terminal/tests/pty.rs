//! End-to-end tests with real processes on a real PTY.

mod support;

use support::*;
use terminal::keys::{Key, Modifiers};
use terminal::{CommandSpec, TermSize, Terminal, TerminalConfig, TerminalError};

fn bash(host: std::sync::Arc<TestHost>, size: TermSize) -> Terminal {
    let mut config = TerminalConfig::new(std::env::temp_dir(), size);
    config.command = Some(CommandSpec { program: "bash".into(), args: vec!["--noprofile".into(), "--norc".into()] });
    config.env = vec![
        ("PS1".into(), "$ ".into()),
        ("TERMSPRAWL_NODE_ID".into(), "node-7".into()),
        ("HISTFILE".into(), "/dev/null".into()),
    ];
    Terminal::spawn(config, host).unwrap()
}

fn sh(host: std::sync::Arc<TestHost>, script: &str) -> Terminal {
    let mut config = TerminalConfig::new(std::env::temp_dir(), TermSize::new(80, 24));
    config.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script.into()] });
    Terminal::spawn(config, host).unwrap()
}

#[test]
fn typed_command_output_appears_with_environment() {
    let host = TestHost::new();
    let term = bash(host.clone(), TermSize::new(80, 24));
    term.write("echo \"$TERM $COLORTERM $TERMSPRAWL_NODE_ID $((6*7))\"\r").unwrap();
    wait_screen(&term, "echo output", |s| s.contains("xterm-256color truecolor node-7 42"));
    assert!(host.recorded.lock().wakeups > 0);
    assert!(term.read_text(10_000).contains("xterm-256color truecolor node-7 42"));
    term.write("exit\r").unwrap();
    assert!(host.wait_exit().success());
}

#[test]
fn resize_reaches_the_program() {
    let host = TestHost::new();
    let term = bash(host.clone(), TermSize::new(80, 24));
    term.resize(TermSize { cols: 100, rows: 30, cell_width: 8, cell_height: 16 }).unwrap();
    assert_eq!(term.snapshot().cols, 100);
    term.write("stty size\r").unwrap();
    wait_screen(&term, "stty size", |s| s.lines().any(|l| l.trim() == "30 100"));
    assert!(matches!(term.resize(TermSize::new(0, 5)), Err(TerminalError::InvalidSize { .. })));
}

#[test]
fn ctrl_c_interrupts_a_running_command() {
    let host = TestHost::new();
    let term = bash(host.clone(), TermSize::new(80, 24));
    let shell = term.pid().unwrap();
    term.write("sleep 100\r").unwrap();
    wait_until("sleep to start", || !children_named(shell, "sleep").is_empty());
    let sleeper = children_named(shell, "sleep")[0];
    term.send_key(Key::Char('c'), Modifiers::CTRL).unwrap();
    term.write("echo after-$((2+3))\r").unwrap();
    wait_screen(&term, "prompt after interrupt", |s| s.contains("after-5"));
    wait_until("sleep to be gone", || !process_exists(sleeper));
    term.write("exit 0\r").unwrap();
    host.wait_exit();
}

#[test]
fn exit_status_is_reported_once_and_the_child_is_reaped() {
    let host = TestHost::new();
    let term = bash(host.clone(), TermSize::new(80, 24));
    let pid = term.pid().unwrap();
    term.write("exit 3\r").unwrap();
    let status = host.wait_exit();
    assert_eq!(status.code, 3);
    assert!(!status.success());
    assert_eq!(term.wait_exit(PATIENCE), Some(status));
    assert!(!process_exists(pid), "child {pid} left behind (zombie or alive)");
    assert_eq!(host.recorded.lock().exits.len(), 1);
    assert!(matches!(term.write("x"), Ok(()) | Err(TerminalError::WriterClosed)));
}

#[test]
fn title_bell_and_osc52_reach_the_host() {
    let host = TestHost::new();
    let _term = sh(host.clone(), r"printf '\033]2;my title\007\007\033]52;c;aGVsbG8=\007'");
    host.wait_exit();
    let rec = host.recorded.lock();
    assert_eq!(rec.titles, vec![Some("my title".to_owned())]);
    assert_eq!(rec.bells, 1);
    assert_eq!(rec.clipboard, vec!["hello".to_owned()]);
}

#[test]
fn terminal_queries_are_answered_through_the_pty() {
    let host = TestHost::new();
    // The shell asks for the cursor position (DSR 6) and prints the reply it reads back.
    let script = r#"stty raw -echo; printf 'abc\033[6n'; r=$(dd bs=1 count=6 2>/dev/null); stty sane; printf '\r\nreply=%s\r\n' "$(printf %s "$r" | tr -d '\033')"; sleep 1"#;
    let term = sh(host.clone(), script);
    wait_screen(&term, "DSR reply", |s| s.contains("reply=[1;4R"));
    host.wait_exit();
}

#[test]
fn output_before_exit_is_parsed_before_exit_is_reported() {
    let host = TestHost::new();
    let term = sh(host.clone(), "seq 1 3000; exit 5");
    assert_eq!(host.wait_exit().code, 5);
    assert!(term.read_text(100).ends_with("2999\n3000"));
}

#[test]
fn dropping_the_terminal_hangs_up_the_shell() {
    let host = TestHost::new();
    let term = bash(host.clone(), TermSize::new(80, 24));
    let pid = term.pid().unwrap();
    term.write("echo ready\r").unwrap();
    wait_screen(&term, "ready", |s| s.contains("\nready"));
    drop(term);
    host.wait_exit();
    wait_until("shell to be reaped", || !process_exists(pid));
}

#[test]
fn bad_configuration_is_rejected_before_spawning() {
    let host = TestHost::new();
    let mut config = TerminalConfig::new("/definitely/not/here", TermSize::new(80, 24));
    assert!(matches!(Terminal::spawn(config.clone(), host.clone()), Err(TerminalError::BadWorkingDir(_))));
    config.cwd = std::env::temp_dir();
    config.env = vec![("A=B".into(), "x".into())];
    assert!(matches!(Terminal::spawn(config.clone(), host.clone()), Err(TerminalError::BadEnv { .. })));
    config.env.clear();
    config.command = Some(CommandSpec { program: "no-such-program-xyz".into(), args: vec![] });
    match Terminal::spawn(config, host) {
        Err(err @ TerminalError::Spawn { .. }) => {
            let TerminalError::Spawn { program, source } = &err else { unreachable!() };
            assert_eq!(program, "no-such-program-xyz");
            assert_eq!(err.to_string(), format!("could not spawn no-such-program-xyz: {source}"));
            assert!(std::error::Error::source(&err).is_some(), "the spawn's own error is kept");
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(term) => {
            // Some PTY backends report exec failure as an exit instead.
            assert!(term.wait_exit(PATIENCE).is_some_and(|s| !s.success()));
        }
    }
}

#[test]
fn bracketed_paste_is_wrapped_when_the_program_asks() {
    let host = TestHost::new();
    // Turn on bracketed paste, then echo raw input bytes in a visible form.
    let script = r#"printf '\033[?2004h'; stty raw -echo; r=$(dd bs=1 count=14 2>/dev/null | od -An -c | tr -s ' '); stty sane; printf '\r\n%s\r\n' "$r"; sleep 1"#;
    let term = sh(host.clone(), script);
    wait_until("bracketed paste mode", || term.input_modes().bracketed_paste);
    term.paste("hi\x1b").unwrap();
    wait_screen(&term, "pasted bytes", |s| s.contains("033 [ 2 0 0 ~ h i 033 [ 2 0 1 ~"));
    host.wait_exit();
}

#[test]
fn restored_snapshot_is_shown_above_the_new_session() {
    let mut old = terminal::Screen::new(TermSize::new(80, 24), terminal::ScreenConfig::default()).unwrap();
    old.feed(b"old output \x1b[32mgreen\x1b[0m\r\n$ ");
    let snapshot = old.ansi_snapshot(terminal::persist::MAX_SNAPSHOT_BYTES);

    let host = TestHost::new();
    let mut config = TerminalConfig::new(std::env::temp_dir(), TermSize::new(80, 24));
    config.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), "echo fresh".into()] });
    config.persistence = terminal::Persistence::Restore(snapshot);
    let term = Terminal::spawn(config, host.clone()).unwrap();
    host.wait_exit();
    let text = term.read_text(1000);
    assert_eq!(text, format!("old output green\n$\n{}\nfresh", terminal::persist::RESTORED_MARKER));
}

#[test]
fn selection_and_scrollback_through_a_live_terminal() {
    let host = TestHost::new();
    let term = sh(host.clone(), "seq 1 100; printf 'alpha beta'");
    host.wait_exit();
    wait_screen(&term, "output", |s| s.contains("alpha beta"));
    let copied = term.with_screen(|screen| {
        screen.start_selection(terminal::SelectionKind::Semantic, 23, 7, terminal::Side::Left);
        screen.selection_text()
    });
    assert_eq!(copied.as_deref(), Some("beta"));
    term.with_screen(|screen| screen.scroll_pages(100));
    let top = term.snapshot();
    assert_eq!(top.display_offset, top.history_size);
    assert_eq!(top.row_text(0), "1");
    term.with_screen(|screen| screen.scroll_to_bottom());
    assert_eq!(term.snapshot().display_offset, 0);
}
