//! Terminal signals through a real PTY: a scripted program emitting each
//! sequence, and the real claude CLI (tests/cdp/node_modules, 2.1.332),
//! whose `ESC ] 7501 ; ?` probe at start is answered, after which it reports
//! its state with OSC 7501 (here: idle at its prompt).

mod support;

use std::path::Path;
use support::*;
use terminal::signals::{ProgramState, ProgramStatus, Progress};
use terminal::{CommandSpec, TermSize, Terminal, TerminalConfig, TerminalSignal};

#[test]
fn a_scripted_program_signals_each_sequence_and_bad_ones_do_nothing() {
    let host = TestHost::new();
    let mut config = TerminalConfig::new(std::env::temp_dir(), TermSize::new(80, 24));
    let script = r"printf '\033]133;A\007$ \033]133;C\007'
printf '\033]9;4;1;30\007\033]9;hello\007\033]777;notify;T;B\033\\'
printf '\033]99;i=1:d=0;Deploy\033\\\033]99;i=1:p=body;shipped\033\\\033]99;e=1;aGk=\007'
printf '\033]9;%05000d\007\033]7501;state=bogus\007\033]133;D;x\007'
printf '\033]7501;state=done:app=script\033\\\033]133;D;4\007\007'";
    config.command = Some(CommandSpec { program: "sh".into(), args: vec!["-c".into(), script.into()] });
    let term = Terminal::spawn(config, host.clone()).unwrap();
    host.wait_exit();
    host.wait_for("the last mark", |r| r.signals.contains(&TerminalSignal::CommandFinished { exit: Some(4) }));
    let r = host.recorded.lock();
    assert_eq!(
        r.signals,
        vec![
            TerminalSignal::PromptShown,
            TerminalSignal::CommandStarted,
            TerminalSignal::Progress(Progress::Normal(30)),
            TerminalSignal::Notification { title: None, body: "hello".into() },
            TerminalSignal::Notification { title: Some("T".into()), body: "B".into() },
            TerminalSignal::Notification { title: Some("Deploy".into()), body: "shipped".into() },
            TerminalSignal::Notification { title: None, body: "hi".into() },
            TerminalSignal::ProgramStatus(ProgramStatus {
                state: ProgramState::Done,
                kind: None,
                app: Some("script".into()),
                progress: None,
                title: None,
                message: None,
            }),
            TerminalSignal::CommandFinished { exit: Some(4) },
        ]
    );
    assert_eq!(r.bells, 1);
    drop(r);
    assert_eq!(screen_text(&term).trim(), "$", "no sequence shows on the grid");
}

#[test]
fn the_real_claude_reports_its_state_once_its_status_probe_is_answered() {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cdp/node_modules/.bin/claude");
    if !bin.is_file() {
        assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "{} is not installed", bin.display());
        println!("SKIPPED: {} is not installed", bin.display());
        return;
    }
    // A fresh HOME where claude goes straight to its prompt: onboarding done,
    // the dummy key approved, the folder trusted. Without a prompt it calls no
    // API; the base URL points at a closed loopback port all the same.
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = (dir.path().join("home"), dir.path().join("proj"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    let key = format!("sk-ant-api03-{}", "x".repeat(80));
    let state = serde_json::json!({
        "hasCompletedOnboarding": true, "theme": "dark",
        "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
        "projects": {project.display().to_string(): {"hasTrustDialogAccepted": true}},
    });
    std::fs::write(home.join(".claude.json"), state.to_string()).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let api = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);

    let host = TestHost::new();
    let mut config = TerminalConfig::new(project, TermSize::new(100, 30));
    config.command = Some(CommandSpec { program: bin.display().to_string(), args: vec![] });
    config.env = [
        ("HOME", home.display().to_string()),
        ("ANTHROPIC_BASE_URL", api),
        ("ANTHROPIC_API_KEY", key),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("TMUX", String::new()),
    ]
    .map(|(k, v)| (k.to_owned(), v))
    .to_vec();
    let term = Terminal::spawn(config, host.clone()).unwrap();
    host.wait_for("claude's OSC 7501 report", |r| {
        r.signals
            .iter()
            .any(|s| matches!(s, TerminalSignal::ProgramStatus(p) if p.app.as_deref() == Some("claude-code")))
    });
    let first = host.recorded.lock().signals.iter().find_map(|s| match s {
        TerminalSignal::ProgramStatus(p) => Some(p.clone()),
        _ => None,
    });
    assert_eq!(first.map(|p| p.state), Some(ProgramState::Idle), "claude waits at its prompt");
    drop(term);
}
