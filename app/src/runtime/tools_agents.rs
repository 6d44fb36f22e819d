//! Agents in the tool runtime: `agent_launch`, `context_read`, and the PTY
//! preparation of agent nodes (session provisioning, identity environment,
//! per-agent MCP configuration under `agent-tools/launch/<nodeId>/`).
//!
//! The session token never goes into a PTY's environment or argv: the agent
//! (or the `termsprawl-ctl mcp` server its CLI starts) reads it from the
//! private session file named by `TERMSPRAWL_NODE_ID` and `TERMSPRAWL_DATA_DIR`.

use super::terminals::{LaunchDecision, PtyLaunch};
use super::tools::{arg, beside, caller_project, target_node, OpContext, ToolPhase};
use super::Runtime;
use crate::model::{AgentKind, Command, Node, NodeKind, Rect};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use terminal::agents::AgentSpec;
use terminal::CommandSpec;
use tool_server::{IntegrationState, IntegrationStatus, ToolIdentity, ToolRequest};

/// Size of a new agent node.
const AGENT_SIZE: (f64, f64) = (760.0, 480.0);
/// Most transcript text `context_read` returns (the end is kept).
pub const CONTEXT_CHARS: usize = 100_000;
/// Environment variable naming the `termsprawl-ctl` binary in agent PTYs.
pub const CTL_ENV: &str = "TERMSPRAWL_CTL";
/// Largest transcript file read whole (larger ones are read from their tail).
const TRANSCRIPT_READ_LIMIT: u64 = 8 * 1024 * 1024;

/// The `termsprawl-ctl` next to the running executable, else the one on PATH.
pub fn ctl_path() -> PathBuf {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join("termsprawl-ctl")));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("termsprawl-ctl"))
}

/// Resolves and probes an agent's executable (presets on PATH, `custom` from
/// `agent-tools/preferences.json`); a missing one is a needs-setup error naming what was looked for.
pub fn resolve_agent(kind: AgentKind, agent_tools: &Path) -> Result<(AgentSpec, PathBuf), String> {
    super::terminals::resolve_agent(kind, &agent_tools.join("preferences.json"), std::env::var_os("PATH").as_deref())
        .map_err(|why| why.message())
}

/// Writes the agent's MCP configuration under `launch/<nodeId>/` and returns
/// the CLI arguments that load it (none for CLIs without native MCP config,
/// which use `$TERMSPRAWL_CTL call …` as the guides describe).
pub fn write_launch_config(
    agent_tools: &Path,
    node: &str,
    kind: AgentKind,
    data_dir: &Path,
) -> Result<Vec<String>, String> {
    let launch = agent_tools.join("launch");
    let dir = launch.join(node);
    for d in [&launch, &dir] {
        local_guard::files::ensure_private_dir(d).map_err(|e| e.to_string())?;
    }
    let ctl = ctl_path().display().to_string();
    let env = json!({"TERMSPRAWL_NODE_ID": node, "TERMSPRAWL_DATA_DIR": data_dir.display().to_string()});
    match kind {
        AgentKind::Claude | AgentKind::Openclaude => {
            let config = json!({"mcpServers": {"termsprawl": {"type": "stdio", "command": ctl, "args": ["mcp", "--adapter", "claude-mcp"], "env": env}}});
            local_guard::files::write_private_json(&dir, "mcp.json", &config).map_err(|e| e.to_string())?;
            Ok(vec!["--mcp-config".into(), dir.join("mcp.json").display().to_string()])
        }
        AgentKind::Codex => {
            // Codex reads MCP servers from `-c key=<TOML>` overrides (its own
            // config.toml stays the user's), and starts them with a filtered
            // environment, so the identity goes in the server's own `env`.
            let q = |s: &str| json!(s).to_string();
            Ok(vec![
                "-c".into(),
                format!("mcp_servers.termsprawl.command={}", q(&ctl)),
                "-c".into(),
                "mcp_servers.termsprawl.args=[\"mcp\",\"--adapter\",\"codex-mcp\"]".into(),
                "-c".into(),
                format!(
                    "mcp_servers.termsprawl.env={{TERMSPRAWL_NODE_ID={},TERMSPRAWL_DATA_DIR={}}}",
                    q(node),
                    q(&data_dir.display().to_string())
                ),
            ])
        }
        _ => Ok(vec![]),
    }
}

/// Why a warm agent needs a fresh launch (also how that state is recognised later).
const WARM_WITHOUT_CREDENTIALS: &str =
    "this agent started before its tool credentials existed; close it and launch a fresh one";

/// Whether a warm (still running) agent started without this app's tool
/// integration: it has no session file, or the one it has says exactly that (a
/// file written to report it is not credentials the running agent got).
fn predates_credentials(server: &tool_server::ToolServer, node: &str) -> bool {
    match server.persisted_status(node) {
        None => true,
        Some(s) => s.state == IntegrationState::NeedsSetup && s.detail.as_deref() == Some(WARM_WITHOUT_CREDENTIALS),
    }
}

/// The PTY launch hook (see `Runtime::set_pty_launch_hook`): every terminal
/// gets `TERMSPRAWL_CTL`; an agent PTY waits until the tool server runs, then
/// gets its session provisioned (token reused across restarts), its MCP
/// configuration and its first instruction. A warm tmux agent that started
/// before it had credentials is marked needs-setup: only a fresh launch inherits them.
pub fn pty_launch_hook(rt: &mut Runtime, launch: &mut PtyLaunch) -> LaunchDecision {
    launch.env.push((CTL_ENV.into(), ctl_path().display().to_string()));
    let Some(agent) = launch.agent else { return LaunchDecision::Launch };
    match rt.tools.phase {
        ToolPhase::Pending => return LaunchDecision::Defer,
        ToolPhase::Off => return LaunchDecision::Launch,
        ToolPhase::Running => {}
    }
    let Some(server) = rt.tools.server.clone() else { return LaunchDecision::Launch };
    let node = launch.node.to_string();
    let identity = ToolIdentity::new(node.clone(), launch.project.to_string());
    let dir = server.directory().to_path_buf();
    if launch.warm && predates_credentials(&server, &node) {
        let status = IntegrationStatus::with_detail(IntegrationState::NeedsSetup, WARM_WITHOUT_CREDENTIALS);
        if let Err(e) = server.provision(identity, status, true) {
            rt.notify(format!("agent {node}: tool session not provisioned: {e}"), true);
        }
        return LaunchDecision::Launch;
    }
    let prompt = rt.tools.pending_prompts.remove(&launch.node);
    let prepared = resolve_agent(agent, &dir).and_then(|(spec, exe)| {
        let mut args = write_launch_config(&dir, &node, agent, rt.data_dir())?;
        args.extend(spec.launch_args(prompt.as_deref()));
        Ok(CommandSpec { program: exe.display().to_string(), args })
    });
    let status = match prepared {
        Ok(command) => {
            launch.command = Some(command);
            IntegrationStatus::new(IntegrationState::Ready)
        }
        Err(e) => IntegrationStatus::with_detail(IntegrationState::NeedsSetup, e),
    };
    if let Err(e) = server.provision(identity, status, true) {
        rt.notify(format!("agent {node}: tool session not provisioned: {e}"), true);
    }
    LaunchDecision::Launch
}

/// `agent_launch`: resolves and probes the CLI, then opens an agent node beside the caller.
pub(crate) fn launch(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let kind: AgentKind = arg(req, "agent")?.parse().map_err(|e: crate::model::ModelError| e.to_string())?;
    let agent_tools = crate::paths::agent_tools(&ctx.data_dir);
    let (_, exe) = resolve_agent(kind, &agent_tools)?;
    let title = req.str_arg("title").unwrap_or(kind.as_str()).to_owned();
    let prompt = req.str_arg("text").map(str::to_owned);
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        let (x, y) = beside(p, &identity.node_id, AGENT_SIZE);
        let node = Node::new(NodeKind::Agent { agent: kind, cwd: p.folder().to_path_buf() }, title, Rect::new(x, y, AGENT_SIZE.0, AGENT_SIZE.1));
        let id = node.id.clone();
        if let Some(text) = prompt {
            rt.tools.pending_prompts.insert(id.clone(), text);
        }
        if let Err(e) = rt.apply(Command::AddNode { node }) {
            rt.tools.pending_prompts.remove(&id);
            return Err(e.to_string());
        }
        Ok(json!({"nodeId": id, "agent": kind.as_str(), "executable": exe.display().to_string(), "status": rt.tools.shared.status_of(id.as_str())}))
    })
}

/// Claude Code's transcript folder for a working directory: every character
/// that is not ASCII alphanumeric becomes `-`.
pub fn claude_project_dir(home: &Path, cwd: &Path) -> PathBuf {
    let escaped: String =
        cwd.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    home.join(".claude").join("projects").join(escaped)
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                Some("text") => p.get("text").and_then(Value::as_str).map(str::to_owned),
                Some("tool_use") => {
                    Some(format!("[tool call {}]", p.get("name").and_then(Value::as_str).unwrap_or("?")))
                }
                Some("tool_result") => Some(format!(
                    "[tool result] {}",
                    content_text(p.get("content").unwrap_or(&Value::Null)).chars().take(500).collect::<String>()
                )),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The claude-jsonl reader: one `role: text` block per user/assistant message.
pub fn render_claude_jsonl(jsonl: &str) -> String {
    let mut out = String::new();
    for line in jsonl.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if kind != "user" && kind != "assistant" {
            continue;
        }
        let Some(msg) = v.get("message") else { continue };
        let role = msg.get("role").and_then(Value::as_str).unwrap_or(kind);
        let text = content_text(msg.get("content").unwrap_or(&Value::Null));
        if !text.trim().is_empty() {
            out.push_str(&format!("{role}: {}\n\n", text.trim()));
        }
    }
    out
}

fn read_tail(path: &Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    if len > TRANSCRIPT_READ_LIMIT {
        f.seek(SeekFrom::Start(len - TRANSCRIPT_READ_LIMIT))?;
    }
    let mut bytes = Vec::new();
    f.take(TRANSCRIPT_READ_LIMIT).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Reads the transcripts of Claude-family agents working in `cwds`, oldest
/// first, keeping the last [`CONTEXT_CHARS`] characters.
pub fn read_transcripts(home: &Path, cwds: &[PathBuf]) -> (Vec<String>, String, bool) {
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = vec![];
    for cwd in cwds {
        let Ok(entries) = std::fs::read_dir(claude_project_dir(home, cwd)) else { continue };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "jsonl") {
                let mtime = e.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
                files.push((mtime, path));
            }
        }
    }
    files.sort();
    let mut text = String::new();
    let mut sources = vec![];
    for (_, path) in files {
        match read_tail(&path) {
            Ok(jsonl) => {
                text.push_str(&format!(
                    "## transcript {}\n\n",
                    path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                ));
                text.push_str(&render_claude_jsonl(&jsonl));
                sources.push(path.display().to_string());
            }
            Err(e) => tracing::debug!(path = %path.display(), error = %e, "transcript not readable"),
        }
    }
    let total = text.chars().count();
    let truncated = total > CONTEXT_CHARS;
    if truncated {
        text = text.chars().skip(total - CONTEXT_CHARS).collect();
    }
    (sources, text, truncated)
}

/// The peers whose work `caller` may read: the agent nodes the user linked to
/// it that have a supported transcript reader (Claude-family: claude-jsonl),
/// with the folders their transcripts are kept for; and the linked nodes
/// skipped, each with the reason.
pub(crate) fn linked_peers(p: &crate::model::Project, caller: &Node) -> (Vec<(String, PathBuf)>, Vec<Value>) {
    let mut peers = vec![];
    let mut skipped = vec![];
    for id in &caller.links {
        let Some(n) = p.node(id) else { continue };
        match &n.kind {
            NodeKind::Agent { agent: AgentKind::Claude | AgentKind::Openclaude, cwd } => {
                let cwd = if cwd.as_os_str().is_empty() { p.folder().to_path_buf() } else { p.folder().join(cwd) };
                peers.push((n.id.to_string(), cwd));
            }
            NodeKind::Agent { agent, .. } => skipped
                .push(json!({"nodeId": n.id, "reason": format!("no transcript reader for {} agents", agent.as_str())})),
            other => {
                skipped.push(json!({"nodeId": n.id, "reason": format!("a {} node has no transcript", other.name())}))
            }
        }
    }
    (peers, skipped)
}

/// `context_read`: the transcripts of the agents the user linked to the caller.
pub(crate) fn context_read(ctx: &OpContext) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let (peers, skipped) = ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        Ok(linked_peers(p, target_node(p, &identity.node_id)?))
    })?;
    let mut cwds: Vec<PathBuf> = vec![];
    for (_, cwd) in &peers {
        if !cwds.contains(cwd) {
            cwds.push(cwd.clone());
        }
    }
    let home = crate::model::persist::home_dir().ok_or("HOME is not set")?;
    let (sources, text, truncated) = read_transcripts(&home, &cwds);
    let ids: Vec<&String> = peers.iter().map(|(id, _)| id).collect();
    let mut v =
        json!({"reader": "claude-jsonl", "peers": ids, "sources": sources, "text": text, "truncated": truncated});
    if !skipped.is_empty() {
        v["skipped"] = json!(skipped);
    }
    if peers.is_empty() && skipped.is_empty() {
        v["note"] = json!("no node is linked to yours; only the user links nodes (select two, then Ctrl+K, Link)");
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_peers_are_the_linked_claude_agents_only() {
        use crate::model::{Camera, Project, ProjectId};
        let agent = |name: &str, kind: AgentKind, cwd: &str| {
            let mut n =
                Node::new(NodeKind::Agent { agent: kind, cwd: cwd.into() }, name, Rect::new(0.0, 0.0, 100.0, 100.0));
            n.id = crate::model::NodeId::new(name).unwrap();
            n
        };
        let mut caller = agent("me", AgentKind::External, "");
        let linked_claude = agent("claude-1", AgentKind::Claude, "sub");
        let unlinked_claude = agent("claude-2", AgentKind::Claude, "");
        let codex = agent("codex-1", AgentKind::Codex, "");
        let mut sticky = Node::new(NodeKind::Sticky { text: "x".into() }, "s", Rect::new(0.0, 0.0, 100.0, 100.0));
        sticky.id = crate::model::NodeId::new("note").unwrap();
        for peer in [&linked_claude, &codex, &sticky] {
            caller.links.insert(peer.id.clone());
        }
        let nodes = vec![caller.clone(), linked_claude, unlinked_claude, codex, sticky];
        let (p, _) =
            Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w/proj", Camera::default(), nodes, 0).unwrap();
        let caller = p.nodes().find(|n| n.id.as_str() == "me").unwrap();
        let (peers, skipped) = linked_peers(&p, caller);
        assert_eq!(peers, [("claude-1".to_owned(), PathBuf::from("/w/proj/sub"))]);
        let reasons: Vec<String> = skipped
            .iter()
            .map(|s| format!("{} {}", s["nodeId"].as_str().unwrap(), s["reason"].as_str().unwrap()))
            .collect();
        assert_eq!(reasons, ["codex-1 no transcript reader for codex agents", "note a sticky node has no transcript"]);
    }

    #[test]
    fn codex_gets_its_mcp_server_and_the_identity_through_config_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        let args = write_launch_config(&tools, "agent-7", AgentKind::Codex, Path::new("/data dir")).unwrap();
        let overrides: Vec<&str> = args
            .chunks(2)
            .map(|pair| {
                assert_eq!(pair[0], "-c", "{args:?}");
                pair[1].as_str()
            })
            .collect();
        let ctl = json!(ctl_path().display().to_string()).to_string();
        assert_eq!(
            overrides,
            [
                format!("mcp_servers.termsprawl.command={ctl}").as_str(),
                r#"mcp_servers.termsprawl.args=["mcp","--adapter","codex-mcp"]"#,
                r#"mcp_servers.termsprawl.env={TERMSPRAWL_NODE_ID="agent-7",TERMSPRAWL_DATA_DIR="/data dir"}"#,
            ]
        );
        // Nothing else is written for codex: its own config stays the user's.
        assert_eq!(std::fs::read_dir(tools.join("launch/agent-7")).unwrap().count(), 0);
    }

    #[test]
    fn claude_transcripts_are_found_rendered_and_capped() {
        let home = tempfile::tempdir().unwrap();
        let cwd = PathBuf::from("/work/my.proj");
        let dir = claude_project_dir(home.path(), &cwd);
        assert!(dir.ends_with(".claude/projects/-work-my-proj"));
        std::fs::create_dir_all(&dir).unwrap();
        let lines = [
            json!({"type": "user", "message": {"role": "user", "content": "build the parser"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Done: parser.rs"}, {"type": "tool_use", "name": "Edit", "input": {}}]}}),
            json!({"type": "summary", "summary": "ignored"}),
        ];
        let body: String = lines.iter().map(|l| format!("{l}\nnot json\n")).collect();
        std::fs::write(dir.join("s1.jsonl"), body).unwrap();
        let (sources, text, truncated) = read_transcripts(home.path(), std::slice::from_ref(&cwd));
        assert_eq!(sources.len(), 1);
        assert!(!truncated);
        assert!(text.contains("user: build the parser"), "{text}");
        assert!(text.contains("assistant: Done: parser.rs\n[tool call Edit]"), "{text}");
        assert!(!text.contains("ignored"));

        let big =
            json!({"type": "user", "message": {"role": "user", "content": "x".repeat(CONTEXT_CHARS + 10) + "END"}});
        std::fs::write(dir.join("s2.jsonl"), big.to_string()).unwrap();
        let (_, text, truncated) = read_transcripts(home.path(), &[cwd]);
        assert!(truncated);
        assert_eq!(text.chars().count(), CONTEXT_CHARS);
        assert!(text.trim_end().ends_with("END"));
    }

    #[test]
    fn launch_config_names_the_ctl_but_holds_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        let args = write_launch_config(&tools, "n1", AgentKind::Claude, dir.path()).unwrap();
        assert_eq!(args[0], "--mcp-config");
        let cfg: Value = serde_json::from_slice(&std::fs::read(&args[1]).unwrap()).unwrap();
        assert_eq!(cfg["mcpServers"]["termsprawl"]["args"][0], "mcp");
        assert_eq!(cfg["mcpServers"]["termsprawl"]["env"]["TERMSPRAWL_NODE_ID"], "n1");
        assert!(write_launch_config(&tools, "n3", AgentKind::Gemini, dir.path()).unwrap().is_empty());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(tools.join("launch/n1")).unwrap().permissions().mode() & 0o777, 0o700);
    }
}
