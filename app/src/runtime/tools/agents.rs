//! Agent operations of the tool runtime: `agent_launch` (another agent CLI in
//! a new node beside the caller) and `context_read` (the transcripts of the
//! agents the user linked to the caller).

use super::context::{beside, caller_project, model_error, target_node, OpContext};
use crate::model::{AgentKind, Node, NodeKind};
use crate::runtime::agent_nodes::{resolve_cli, AgentUnavailable, NewAgent, AGENT_SIZE};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tool_server::{AgentLaunchArgs, ToolError};

/// Most transcript text `context_read` returns (the end is kept).
pub const CONTEXT_CHARS: usize = 100_000;
/// Largest transcript file read whole (larger ones are read from their tail).
const TRANSCRIPT_READ_LIMIT: u64 = 8 * 1024 * 1024;

/// `agent_launch`: resolves and probes the CLI, then opens an agent node
/// beside the caller through [`Runtime::open_agent`](crate::runtime::Runtime::open_agent),
/// the path the window's "New agent" takes too.
pub(crate) fn launch(ctx: &OpContext, args: AgentLaunchArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let kind = args.agent;
    let agent_tools = crate::paths::agent_tools(&ctx.data_dir);
    let exe = resolve_cli(kind, &agent_tools).map_err(|e| match e {
        AgentUnavailable::NotInstalled { .. } | AgentUnavailable::NotLoggedIn { .. } => {
            ToolError::not_found(e.to_string())
        }
        AgentUnavailable::Misconfigured(_) => ToolError::failed(e.to_string()),
    })?;
    let title = args.title.unwrap_or_else(|| kind.as_str().to_owned());
    let prompt = args.text;
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        let at = beside(p, &identity.node_id, AGENT_SIZE);
        let cwd = p.folder().to_path_buf();
        let id = rt.open_agent(NewAgent { kind, title, at, cwd, worktree: None, prompt }).map_err(model_error)?;
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
            NodeKind::Agent { agent: AgentKind::Claude | AgentKind::OpenClaude, cwd, .. } => {
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
pub(crate) fn context_read(ctx: &OpContext) -> Result<Value, ToolError> {
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
    let home = crate::model::persist::home_dir().ok_or_else(|| ToolError::failed("HOME is not set"))?;
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
    use crate::model::{Command, Rect};
    use crate::runtime::test_context::TestContext;
    use tool_server::ErrorCode;

    #[test]
    fn agent_launch_opens_a_configured_agent_beside_the_caller() {
        let mut ctx = TestContext::new();
        let e = ctx.run("agent_launch", json!({"agent": "custom"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Failed);
        assert_eq!(e.message(), "not launched: no custom agent is configured in preferences.json");
        let exe = ctx.root().join("my-agent");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let prefs = crate::paths::agent_tools(ctx.rt.data_dir()).join("preferences.json");
        std::fs::write(&prefs, json!({"custom": {"executable": exe}}).to_string()).unwrap();
        let v = ctx.run("agent_launch", json!({"agent": "custom", "title": "Helper", "text": "look around"})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(
            v,
            json!({"nodeId": id, "agent": "custom", "executable": exe.display().to_string(), "status": null})
        );
        let n = ctx.node(&id).unwrap();
        assert_eq!(n.title, "Helper");
        assert_eq!(n.kind, NodeKind::Agent { agent: AgentKind::Custom, cwd: ctx.folder(), worktree: None });
        assert_eq!(n.rect, Rect::new(640.0, 0.0, 760.0, 480.0));
        // The tool server is not running: the launch waits, its first instruction kept for it.
        assert_eq!(ctx.rt.tools.pending_prompts.get(&n.id).map(String::as_str), Some("look around"));
    }

    #[test]
    fn context_read_says_what_is_linked_and_why_nothing_is_read() {
        let mut ctx = TestContext::new();
        let v = ctx.run("context_read", json!({})).unwrap();
        assert_eq!(
            v,
            json!({"reader": "claude-jsonl", "peers": [], "sources": [], "text": "", "truncated": false,
                   "note": "no node is linked to yours; only the user links nodes (select two, then Ctrl+K, Link)"})
        );
        let me = crate::model::NodeId::new(&ctx.agent.node_id).unwrap();
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (2000.0, 0.0, 100.0, 80.0));
        let codex = ctx.add(
            NodeKind::Agent { agent: AgentKind::Codex, cwd: ctx.folder(), worktree: None },
            "c",
            (0.0, 900.0, 600.0, 400.0),
        );
        for peer in [&sticky, &codex] {
            ctx.rt.apply(Command::LinkNodes { a: me.clone(), b: peer.clone() }).unwrap();
        }
        let v = ctx.run("context_read", json!({})).unwrap();
        let mut skipped = v["skipped"].as_array().cloned().expect("skipped peers");
        skipped.sort_by_key(|s| s["nodeId"].as_str().map(str::to_owned));
        let mut expected = vec![
            json!({"nodeId": sticky, "reason": "a sticky node has no transcript"}),
            json!({"nodeId": codex, "reason": "no transcript reader for codex agents"}),
        ];
        expected.sort_by_key(|s| s["nodeId"].as_str().map(str::to_owned));
        assert_eq!(skipped, expected);
        assert_eq!(v["peers"], json!([]));
        assert!(v.get("note").is_none(), "{v}");
    }

    #[test]
    fn context_peers_are_the_linked_claude_agents_only() {
        use crate::model::{Camera, Project, ProjectId};
        let agent = |name: &str, kind: AgentKind, cwd: &str| {
            let mut n = Node::new(
                NodeKind::Agent { agent: kind, cwd: cwd.into(), worktree: None },
                name,
                Rect::new(0.0, 0.0, 100.0, 100.0),
            );
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
}
