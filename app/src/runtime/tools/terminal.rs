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

/// The user's shell (what a terminal node runs without a command).
fn shell() -> String {
    std::env::var("SHELL").ok().filter(|s| s.starts_with('/')).unwrap_or_else(|| "/bin/sh".into())
}

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
    let title = args.title.unwrap_or_else(|| "Terminal".to_owned());
    let command = args.command;
    ctx.on_main(move |rt| {
        let id = open_node(rt, &identity, &title, None)?;
        if let Some(cmd) = command {
            let t = rt.terminals.get(&id).ok_or_else(|| ToolError::failed("the terminal did not start"))?;
            t.term.write(format!("{cmd}\r")).map_err(model_error)?;
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
    let display = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
    let found = ExternalTerminal::find(preferred.as_ref(), std::env::var_os("PATH").as_deref(), display);
    ctx.on_main(move |rt| {
        let folder = caller_project(rt, &identity)?.folder().to_owned();
        match found {
            Ok(terminal) => {
                let env = [(CTL_ENV.to_owned(), ctl_path().display().to_string())];
                let pid = terminal.launch(&title, &command, &folder, &env).map_err(model_error)?;
                Ok(json!({"where": "external", "terminal": terminal.program.display().to_string(), "pid": pid}))
            }
            Err(why @ (ExternalTerminalError::NoDisplay | ExternalTerminalError::NoneFound(_))) => {
                let id = open_node(rt, &identity, &title, Some(vec![shell(), "-c".into(), command]))?;
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
