//! Terminal operations of the agent tool runtime: terminal nodes on the
//! caller's canvas, driven through their live PTY sessions.

use super::context::{beside, caller_project, model_error, target_node, OpContext};
use super::launch::{ctl_path, CTL_ENV};
use crate::model::{Command, NodeId, NodeKind};
use crate::runtime::terminals::LiveTerminal;
use crate::runtime::Runtime;
use serde_json::{json, Value};
use tool_server::{ExternalArgs, NodeArgs, NodeTextArgs, ReadArgs, TerminalOpenArgs, ToolError, ToolIdentity};

/// Size of a new terminal node.
const TERMINAL_SIZE: (f64, f64) = (720.0, 440.0);
/// What terminal_read returns when maxChars is not given.
const DEFAULT_READ_CHARS: usize = 8_000;
/// Ctrl+C as the PTY sees it.
const ETX: &[u8] = b"\x03";

/// Opens a terminal node beside the caller; `command` runs as the node's program.
fn open_node(
    rt: &mut Runtime,
    identity: &ToolIdentity,
    title: &str,
    command: Option<Vec<String>>,
) -> Result<NodeId, ToolError> {
    let p = caller_project(rt, identity)?;
    let at = beside(p, &identity.node_id, TERMINAL_SIZE);
    let cwd = p.folder().to_path_buf();
    rt.add_node(NodeKind::Terminal { cwd, command, tmux_session: None }, title, TERMINAL_SIZE, Some(at))
        .map_err(model_error)
}

/// `terminal_open`: a shell beside the caller; a command is typed into it, so
/// the terminal stays usable after the command ends.
pub(crate) fn open(ctx: &OpContext, args: TerminalOpenArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let title = args.title.unwrap_or_else(|| crate::model::title::DEFAULT_TERMINAL_TITLE.to_owned());
    let command = args.command;
    ctx.on_main(move |rt| {
        let id = open_node(rt, &identity, &title, None)?;
        if let Some(cmd) = command {
            let t = rt.terminals.get(&id).ok_or_else(|| ToolError::failed("the terminal did not start"))?;
            t.term.write(format!("{cmd}\r").into_bytes()).map_err(model_error)?;
        }
        Ok(json!({"nodeId": id}))
    })
}

/// `terminal_external`: runs a command in the user's desktop terminal (the one
/// in preferences.json, else the first known one on PATH) in the project
/// folder. With no display and none configured (headless, CI) there is no
/// desktop to open a window on, so it runs in a new terminal node of the
/// canvas instead, and the answer says so.
pub(crate) fn external(ctx: &OpContext, args: ExternalArgs) -> Result<Value, ToolError> {
    use terminal::agents::ExternalTerminalPreference;
    use terminal::external::{ExternalTerminal, ExternalTerminalError};
    let identity = ctx.identity.clone();
    let command = args.command;
    let title = args.title.as_deref().unwrap_or(&command).chars().take(80).collect::<String>();
    let preferences = crate::paths::agent_tools(&ctx.data_dir).join("preferences.json");
    let preferred = ExternalTerminalPreference::load(&preferences).map_err(model_error)?;
    let desktop = ctx.desktop.read();
    let found = ExternalTerminal::find(preferred.as_ref(), desktop.path_var.as_deref(), desktop.display);
    let shell = desktop.shell;
    ctx.on_main(move |rt| {
        let folder = caller_project(rt, &identity)?.folder().to_owned();
        match found {
            Ok(terminal) => {
                let env = [(CTL_ENV.to_owned(), ctl_path().display().to_string())];
                let pid = terminal.launch(&title, &command, &folder, &env).map_err(model_error)?;
                Ok(json!({"where": "external", "terminal": terminal.program.display().to_string(), "pid": pid}))
            }
            Err(why @ (ExternalTerminalError::NoDisplay | ExternalTerminalError::NoneFound(_))) => {
                let id = open_node(rt, &identity, &title, Some(vec![shell, "-c".into(), command]))?;
                Ok(json!({"nodeId": id, "where": "canvas", "reason": why.to_string()}))
            }
            Err(e) => Err(model_error(e)),
        }
    })
}

/// Whether an operation may use an artifact node's terminal (reading what it
/// shows) or only terminal and agent nodes (typing into them).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

/// Runs `f` with the live terminal of a terminal or agent node (or, to read, an
/// artifact node) of the caller's canvas.
fn with_terminal<R: Send + 'static>(
    ctx: &OpContext,
    id: String,
    access: Access,
    f: impl FnOnce(&LiveTerminal) -> Result<R, ToolError> + Send + 'static,
) -> Result<R, ToolError> {
    let identity = ctx.identity.clone();
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &id)?;
        let readable_artifact = access == Access::Read && matches!(n.kind, NodeKind::Artifact { .. });
        if !matches!(n.kind, NodeKind::Terminal { .. } | NodeKind::Agent { .. }) && !readable_artifact {
            return Err(ToolError::invalid_argument(format!("node {id} is a {} node, not a terminal", n.kind.name())));
        }
        let t = rt.terminals.get(&n.id).ok_or_else(|| ToolError::not_found(format!("terminal {id} is not running")))?;
        f(t)
    })
}

fn write(t: &LiveTerminal, id: &str, bytes: Vec<u8>) -> Result<(), ToolError> {
    if t.exited.is_some() || t.term.exit_status().is_some() {
        return Err(ToolError::refused(format!("the program in terminal {id} has exited")));
    }
    t.term.write(bytes).map_err(|e| ToolError::failed(format!("terminal {id}: {e}")))
}

/// `terminal_read`: the last maxChars of scrollback and screen.
pub(crate) fn read(ctx: &OpContext, args: ReadArgs) -> Result<Value, ToolError> {
    let max = args.max_chars.map_or(DEFAULT_READ_CHARS, |n| n as usize).max(1);
    with_terminal(ctx, args.node_id, Access::Read, move |t| {
        let mut v = json!({"text": t.term.read_text(max)});
        if let Some(status) = t.term.exit_status() {
            v["exited"] = json!({"code": status.code, "signal": status.signal});
        }
        Ok(v)
    })
}

/// `terminal_submit`: text, then Enter.
pub(crate) fn submit(ctx: &OpContext, args: NodeTextArgs) -> Result<Value, ToolError> {
    let NodeTextArgs { node_id: id, text } = args;
    let mut bytes = text.into_bytes();
    bytes.push(b'\r');
    with_terminal(ctx, id.clone(), Access::Write, move |t| write(t, &id, bytes).map(|()| json!({"submitted": true})))
}

/// `terminal_input`: raw text, control characters included.
pub(crate) fn input(ctx: &OpContext, args: NodeTextArgs) -> Result<Value, ToolError> {
    let NodeTextArgs { node_id: id, text } = args;
    let bytes = text.into_bytes();
    with_terminal(ctx, id.clone(), Access::Write, move |t| write(t, &id, bytes).map(|()| json!({"sent": true})))
}

/// `terminal_interrupt`: Ctrl+C to the foreground program.
pub(crate) fn interrupt(ctx: &OpContext, args: NodeArgs) -> Result<Value, ToolError> {
    let id = args.node_id;
    with_terminal(ctx, id.clone(), Access::Write, move |t| {
        write(t, &id, ETX.to_vec()).map(|()| json!({"interrupted": true}))
    })
}

/// `terminal_close`: removes a terminal node (its process is hung up).
pub(crate) fn close(ctx: &OpContext, args: NodeArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let id = args.node_id;
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &id)?;
        if !matches!(n.kind, NodeKind::Terminal { .. }) {
            return Err(ToolError::invalid_argument(format!(
                "node {id} is a {} node; terminal_close closes terminal nodes only",
                n.kind.name()
            )));
        }
        let nid = n.id.clone();
        rt.apply(Command::RemoveNodes { ids: vec![nid.clone()] }).map_err(model_error)?;
        Ok(json!({"closed": nid}))
    })
}

#[cfg(test)]
mod tests {
    use super::super::desktop::DesktopEnv;
    use crate::model::{ArtifactView, NodeId, NodeKind};
    use crate::runtime::terminals::{FakeSession, RecordingSpawner};
    use crate::runtime::test_context::{tool, TestContext};
    use serde_json::json;
    use std::sync::Arc;
    use terminal::{CommandSpec, ExitStatus};
    use tool_server::ErrorCode;

    #[test]
    fn terminal_open_adds_a_shell_node_and_asks_the_spawner() {
        let mut ctx = TestContext::new();
        let v = ctx.run("terminal_open", json!({"title": "Build"})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(v, json!({"nodeId": id}));
        let n = ctx.node(&id).unwrap();
        assert_eq!(n.title, "Build");
        assert_eq!(n.kind, NodeKind::Terminal { cwd: ctx.folder(), command: None, tmux_session: None });
        let specs = ctx.spawner.specs();
        let spec = specs.iter().find(|s| s.node.as_str() == id).expect("the spawner was asked for the node");
        assert_eq!(spec.config.cwd, ctx.folder());
    }

    #[test]
    fn terminal_open_with_a_command_needs_a_started_terminal() {
        // The recording spawner starts nothing: the command cannot be typed.
        let mut ctx = TestContext::new();
        let e = ctx.run("terminal_open", json!({"command": "make"})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::Failed, "the terminal did not start"));
    }

    #[test]
    fn terminal_operations_refuse_nodes_that_are_not_running_terminals() {
        let mut ctx = TestContext::new();
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (700.0, 0.0, 100.0, 80.0));
        let term = ctx.run("terminal_open", json!({})).unwrap()["nodeId"].as_str().unwrap().to_owned();
        let file = ctx.folder().join("a.txt");
        std::fs::write(&file, "a").unwrap();
        let view = ArtifactView::Editor;
        let artifact =
            ctx.add(NodeKind::Artifact { path: file, view, base: None }, "a.txt", (0.0, 900.0, 400.0, 300.0));

        let e = ctx.run("terminal_read", json!({"nodeId": sticky})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message(), format!("node {sticky} is a sticky node, not a terminal"));
        let e = ctx.run("terminal_read", json!({"nodeId": "n-missing"})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::NotFound, "no node n-missing on this canvas"));
        let e = ctx.run("terminal_read", json!({"nodeId": term})).unwrap_err();
        assert_eq!((e.code, e.message().to_owned()), (ErrorCode::NotFound, format!("terminal {term} is not running")));
        let e = ctx.run("terminal_submit", json!({"nodeId": term, "text": "ls"})).unwrap_err();
        assert_eq!((e.code, e.message().to_owned()), (ErrorCode::NotFound, format!("terminal {term} is not running")));

        // An artifact view may be read (its viewer is not running here) but never typed into.
        let e = ctx.run("terminal_read", json!({"nodeId": artifact})).unwrap_err();
        assert_eq!(e.message(), format!("terminal {artifact} is not running"));
        for (op, args) in [
            ("terminal_submit", json!({"nodeId": artifact, "text": "x"})),
            ("terminal_input", json!({"nodeId": artifact, "text": "x"})),
            ("terminal_interrupt", json!({"nodeId": artifact})),
        ] {
            let e = ctx.run(op, args).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{op}");
            assert_eq!(e.message(), format!("node {artifact} is a artifact node, not a terminal"), "{op}");
        }
    }

    #[test]
    fn terminal_close_removes_terminal_nodes_only() {
        let mut ctx = TestContext::new();
        let term = ctx.run("terminal_open", json!({})).unwrap()["nodeId"].as_str().unwrap().to_owned();
        let agent = ctx.agent.node_id.clone();
        let e = ctx.run("terminal_close", json!({"nodeId": agent})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message(), format!("node {agent} is a agent node; terminal_close closes terminal nodes only"));
        assert_eq!(ctx.run("terminal_close", json!({"nodeId": term})).unwrap(), json!({"closed": term}));
        assert!(ctx.node(&term).is_none());
        let e = ctx.run("terminal_close", json!({"nodeId": term})).unwrap_err();
        assert_eq!((e.code, e.message().to_owned()), (ErrorCode::NotFound, format!("no node {term} on this canvas")));
    }

    /// A context whose terminals start (as fakes) and one terminal node opened by the first agent.
    fn running_terminal() -> (TestContext, String, Arc<FakeSession>) {
        let mut ctx = TestContext::with_terminals();
        let id = ctx.run("terminal_open", json!({})).unwrap()["nodeId"].as_str().unwrap().to_owned();
        let fake = ctx.spawner.terminal(&id).expect("the terminal started");
        (ctx, id, fake)
    }

    #[test]
    fn terminal_open_starts_a_shell_in_the_project_folder_with_the_nodes_identity() {
        let mut ctx = TestContext::with_terminals();
        let v = ctx.run("terminal_open", json!({"title": "Build"})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(v, json!({"nodeId": id}));
        let specs = ctx.spawner.specs();
        let [spec] = specs.as_slice() else { panic!("one terminal asked for: {specs:?}") };
        assert_eq!(spec.node.as_str(), id);
        assert_eq!((&spec.config.cwd, &spec.config.command), (&ctx.folder(), &None), "the user's shell in the folder");
        let project = ctx.agent.project_id.clone();
        let data = ctx.root().join("data").display().to_string();
        let ctl = super::super::launch::ctl_path().display().to_string();
        let env = [
            ("TERMSPRAWL_NODE_ID", id.as_str()),
            ("TERMSPRAWL_PROJECT_ID", project.as_str()),
            (crate::paths::DATA_DIR_ENV, data.as_str()),
            (super::super::launch::CTL_ENV, ctl.as_str()),
        ];
        assert_eq!(spec.config.env, env.map(|(k, v)| (k.to_owned(), v.to_owned())), "its identity and the ctl");
        let node = NodeId::new(&id).unwrap();
        let live = ctx.rt.terminals.get(&node).expect("the node's terminal runs");
        assert_eq!((live.exited.as_ref(), live.agent, live.warm), (None, None, false));
        let fake = ctx.spawner.terminal(&id).unwrap();
        assert_eq!(fake.writes(), Vec::<Vec<u8>>::new(), "nothing typed without a command");
        assert!(!fake.hung_up());
    }

    #[test]
    fn terminal_open_types_its_command_and_enter_into_the_new_shell() {
        let mut ctx = TestContext::with_terminals();
        let v = ctx.run("terminal_open", json!({"command": "make -j2"})).unwrap();
        let id = v["nodeId"].as_str().unwrap().to_owned();
        assert_eq!(v, json!({"nodeId": id}));
        assert_eq!(ctx.spawner.terminal(&id).unwrap().writes(), vec![b"make -j2\r".to_vec()]);
        let n = ctx.node(&id).unwrap();
        assert_eq!(n.kind, NodeKind::Terminal { cwd: ctx.folder(), command: None, tmux_session: None });
    }

    #[test]
    fn terminal_read_returns_the_screens_text_within_the_callers_limit() {
        let (mut ctx, id, fake) = running_terminal();
        fake.show("first line\r\nsecond line\r\n$ ");
        assert_eq!(
            ctx.run("terminal_read", json!({"nodeId": id})).unwrap(),
            json!({"text": "first line\nsecond line\n$"})
        );
        assert_eq!(
            ctx.run("terminal_read", json!({"nodeId": id, "maxChars": 13})).unwrap(),
            json!({"text": "second line\n$"})
        );
        // Another agent on the canvas reads it too: terminals have no owner.
        let other = ctx.add_agent("Agent B");
        let v = ctx.call(&other, tool("terminal_read", json!({"nodeId": id, "maxChars": 1}))).unwrap();
        assert_eq!(v, json!({"text": "$"}));
    }

    #[test]
    fn terminal_submit_writes_the_text_then_enter() {
        let (mut ctx, id, fake) = running_terminal();
        assert_eq!(
            ctx.run("terminal_submit", json!({"nodeId": id, "text": "cargo test"})).unwrap(),
            json!({"submitted": true})
        );
        let other = ctx.add_agent("Agent B");
        let v = ctx.call(&other, tool("terminal_submit", json!({"nodeId": id, "text": ""}))).unwrap();
        assert_eq!(v, json!({"submitted": true}));
        assert_eq!(fake.writes(), vec![b"cargo test\r".to_vec(), b"\r".to_vec()]);
    }

    #[test]
    fn terminal_input_writes_the_text_as_is() {
        let (mut ctx, id, fake) = running_terminal();
        let v = ctx.run("terminal_input", json!({"nodeId": id, "text": "y\u{1b}[A\t"})).unwrap();
        assert_eq!(v, json!({"sent": true}));
        assert_eq!(fake.writes(), vec![b"y\x1b[A\t".to_vec()]);
    }

    #[test]
    fn terminal_interrupt_sends_ctrl_c() {
        let (mut ctx, id, fake) = running_terminal();
        assert_eq!(ctx.run("terminal_interrupt", json!({"nodeId": id})).unwrap(), json!({"interrupted": true}));
        assert_eq!(fake.writes(), vec![b"\x03".to_vec()]);
    }

    #[test]
    fn terminal_close_removes_a_running_terminal_and_hangs_it_up() {
        let (mut ctx, id, fake) = running_terminal();
        assert_eq!(ctx.run("terminal_close", json!({"nodeId": id})).unwrap(), json!({"closed": id}));
        assert!(ctx.node(&id).is_none());
        assert!(ctx.rt.terminals.get(&NodeId::new(&id).unwrap()).is_none());
        assert!(fake.hung_up(), "closing the node hangs its program up");
        let e = ctx.run("terminal_read", json!({"nodeId": id})).unwrap_err();
        assert_eq!((e.code, e.message().to_owned()), (ErrorCode::NotFound, format!("no node {id} on this canvas")));
    }

    #[test]
    fn an_exited_terminal_is_read_with_its_status_and_refuses_input() {
        let (mut ctx, id, fake) = running_terminal();
        fake.show("bye\r\n");
        fake.exit(ExitStatus { code: 2, signal: None });
        // The host's report reaches the main thread on the next turn.
        ctx.rt.tick();
        let node = NodeId::new(&id).unwrap();
        assert_eq!(ctx.rt.terminals.get(&node).unwrap().exited, Some(ExitStatus { code: 2, signal: None }));
        assert_eq!(
            ctx.run("terminal_read", json!({"nodeId": id})).unwrap(),
            json!({"text": "bye", "exited": {"code": 2, "signal": null}})
        );
        for (op, args) in [
            ("terminal_submit", json!({"nodeId": id, "text": "ls"})),
            ("terminal_input", json!({"nodeId": id, "text": "x"})),
            ("terminal_interrupt", json!({"nodeId": id})),
        ] {
            let e = ctx.run(op, args).unwrap_err();
            assert_eq!(e.code, ErrorCode::Refused, "{op}");
            assert_eq!(e.message(), format!("the program in terminal {id} has exited"), "{op}");
        }
        assert_eq!(fake.writes(), Vec::<Vec<u8>>::new(), "nothing reached the ended program");
        // A signal's name is reported too.
        let (mut ctx, id, fake) = running_terminal();
        fake.exit(ExitStatus { code: 1, signal: Some("Hangup".into()) });
        let v = ctx.run("terminal_read", json!({"nodeId": id})).unwrap();
        assert_eq!(v, json!({"text": "", "exited": {"code": 1, "signal": "Hangup"}}));
    }

    /// A context whose `terminal_external` sees a desktop with (or without) a
    /// display and `<tmp>/bin` as PATH, where `fake-term` records how it was started.
    fn desktop(display: bool) -> (TestContext, std::path::PathBuf) {
        let ctx = TestContext::with_terminals();
        let bin = ctx.root().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let out = ctx.root().join("fake-term.out");
        let script = format!(
            "#!/bin/sh\n{{ printf '%s\\n' \"$@\"; pwd; printf '%s\\n' \"$TERMSPRAWL_CTL\"; }} > {out}.tmp && mv {out}.tmp {out}\n",
            out = out.display()
        );
        let exe = bin.join("fake-term");
        std::fs::write(&exe, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = DesktopEnv { display, path_var: Some(bin.into_os_string()), shell: "/bin/bash".into() };
        (ctx.with_desktop(env), out)
    }

    /// Names `executable` as the external terminal in preferences.json.
    fn prefer(ctx: &TestContext, executable: &str) {
        let prefs = crate::paths::agent_tools(&ctx.root().join("data")).join("preferences.json");
        let text = json!({"externalTerminal": {"executable": executable, "args": ["-e"]}}).to_string();
        std::fs::write(prefs, text).unwrap();
    }

    #[test]
    fn terminal_external_without_a_display_runs_the_command_in_a_canvas_terminal() {
        let (mut ctx, _) = desktop(false);
        let v = ctx.run("terminal_external", json!({"command": "gh auth login", "title": "login"})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(
            v,
            json!({"nodeId": id, "where": "canvas", "reason": "there is no display to open a desktop terminal on"})
        );
        let n = ctx.node(&id).unwrap();
        assert_eq!(n.title, "login");
        let command = Some(vec!["/bin/bash".to_owned(), "-c".into(), "gh auth login".into()]);
        assert_eq!(n.kind, NodeKind::Terminal { cwd: ctx.folder(), command, tmux_session: None });
        let spec = ctx.spawner.specs().into_iter().find(|s| s.node.as_str() == id).expect("the node started");
        let program = CommandSpec { program: "/bin/bash".into(), args: vec!["-c".into(), "gh auth login".into()] };
        assert_eq!(spec.config.command, Some(program), "the user's shell runs the command");

        // With a display but no known terminal on PATH, the canvas too; an untitled node is named by its command.
        let (mut ctx, _) = desktop(true);
        let v = ctx.run("terminal_external", json!({"command": "sudo true"})).unwrap();
        assert_eq!(v["where"], "canvas");
        let reason = v["reason"].as_str().unwrap();
        assert!(reason.starts_with("no desktop terminal found on PATH (looked for x-terminal-emulator, "), "{reason}");
        assert_eq!(ctx.node(v["nodeId"].as_str().unwrap()).unwrap().title, "sudo true");
    }

    #[test]
    fn terminal_external_opens_the_desktop_terminal_in_the_project_folder() {
        // The configured terminal is used with or without a display.
        for display in [false, true] {
            let (mut ctx, out) = desktop(display);
            prefer(&ctx, "fake-term");
            let v = ctx.run("terminal_external", json!({"command": "echo hi", "title": "greet"})).unwrap();
            let exe = ctx.root().join("bin/fake-term");
            assert_eq!((v["where"].as_str(), v["terminal"].as_str()), (Some("external"), exe.to_str()), "{v}");
            assert!(v["pid"].as_u64().is_some_and(|pid| pid > 0), "{v}");
            assert_eq!(v.as_object().unwrap().len(), 3, "{v}");
            let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let seen = loop {
                if let Ok(seen) = std::fs::read_to_string(&out) {
                    break seen;
                }
                assert!(std::time::Instant::now() < end, "the desktop terminal never ran");
                std::thread::sleep(std::time::Duration::from_millis(10));
            };
            let args = terminal::external::ExternalTerminal { program: exe, args: vec!["-e".into()] }
                .arguments("greet", "echo hi");
            let ctl = super::super::launch::ctl_path().display().to_string();
            let mut want = args.join("\n");
            want.push_str(&format!("\n{}\n{ctl}\n", ctx.folder().display()));
            assert_eq!(seen, want, "its arguments, working directory and the ctl");
            let nodes = ctx.rt.project().unwrap().nodes().count();
            assert_eq!(nodes, 1, "no canvas node: only the agent");
        }
    }

    #[test]
    fn terminal_external_refuses_a_configured_terminal_that_is_missing() {
        let (mut ctx, _) = desktop(true);
        prefer(&ctx, "no-such-terminal");
        let e = ctx.run("terminal_external", json!({"command": "true"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Failed);
        assert_eq!(
            e.message(),
            "the externalTerminal in preferences.json, \"no-such-terminal\", was not found on PATH"
        );
        assert!(ctx.spawner.specs().is_empty(), "nothing started instead");
    }

    #[test]
    fn input_that_missed_the_main_threads_deadline_is_never_typed_later() {
        let deadline = std::time::Duration::from_millis(40);
        let mut ctx = TestContext::with(deadline, RecordingSpawner::starting());
        let id = ctx.run("terminal_open", json!({})).unwrap()["nodeId"].as_str().unwrap().to_owned();
        let fake = ctx.spawner.terminal(&id).unwrap();
        let agent = ctx.agent.clone();
        let reply = ctx.submit(&agent, tool("terminal_submit", json!({"nodeId": id, "text": "rm -rf build"})));
        // The loop does not turn: the operation's job waits past its deadline.
        std::thread::sleep(deadline * 5);
        let e = ctx.finish(reply).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::Timeout, super::super::TIMEOUT_MESSAGE));
        for _ in 0..5 {
            ctx.rt.tick();
        }
        assert_eq!(fake.writes(), Vec::<Vec<u8>>::new(), "the late input was dropped, not typed");
        let v = ctx.run("terminal_submit", json!({"nodeId": id, "text": "ls"})).unwrap();
        assert_eq!((v, fake.writes()), (json!({"submitted": true}), vec![b"ls\r".to_vec()]));
    }

    #[test]
    fn resizing_a_terminal_node_resizes_its_terminal() {
        let (mut ctx, id, fake) = running_terminal();
        let before = fake.size();
        ctx.run("canvas_resize", json!({"nodeId": id, "width": 360, "height": 220})).unwrap();
        let node = ctx.node(&id).unwrap();
        let want = ctx.rt.terminal_size_for(&node.rect);
        assert_ne!((want.cols, want.rows), (before.cols, before.rows), "a smaller node has fewer cells");
        assert_eq!((fake.size().cols, fake.size().rows), (want.cols, want.rows));
    }
}
