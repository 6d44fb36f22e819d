//! Opening an agent node: the one path `agent_launch` and the window's
//! "New agent" share. The CLI is resolved and probed first (a missing one is
//! refused with what to install); the node then goes on the canvas, and the
//! PTY launch hook gives it its tool session, identity environment, MCP
//! configuration and first instruction, whoever asked for it.

use super::terminals::{self, NotLaunched};
use super::Runtime;
use crate::model::{AgentKind, AgentWorktree, Command, ModelError, Node, NodeId, NodeKind, Rect};
use std::path::{Path, PathBuf};

/// Size of a new agent node.
pub const AGENT_SIZE: (f64, f64) = (760.0, 480.0);

/// Why an agent's CLI cannot be launched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentUnavailable {
    /// Not installed (not on PATH / not executable).
    #[error("needs setup: {kind} is not installed (`{looked_for}` is not on PATH): {install}")]
    NotInstalled {
        /// The agent.
        kind: AgentKind,
        /// The executable looked for.
        looked_for: String,
        /// How to install it.
        install: &'static str,
    },
    /// Installed, but its login is missing.
    #[error("needs setup: {kind} is not logged in: {how}")]
    NotLoggedIn {
        /// The agent.
        kind: AgentKind,
        /// The resolved executable.
        executable: PathBuf,
        /// How to log it in.
        how: &'static str,
    },
    /// preferences.json is malformed or names no custom agent, or the agent runs outside the app.
    #[error("{0}")]
    Misconfigured(String),
}

/// How a person installs `kind`'s CLI.
pub fn install_hint(kind: AgentKind) -> &'static str {
    terminal::agents::install_hint(kind)
}

/// Resolves and probes `kind`'s CLI (presets on PATH, `custom` from
/// `<agent tools>/preferences.json`) and a preset's login: the executable,
/// or why it cannot run.
pub fn resolve_cli(kind: AgentKind, agent_tools: &Path) -> Result<PathBuf, AgentUnavailable> {
    let path = std::env::var_os("PATH");
    let prefs = agent_tools.join("preferences.json");
    let var = |v: &str| std::env::var(v).ok();
    match terminals::resolve_agent(kind, &prefs, path.as_deref(), &var) {
        Ok((_, exe)) => Ok(exe),
        Err(NotLaunched::NeedsSetup { looked_for }) => {
            Err(AgentUnavailable::NotInstalled { kind, looked_for, install: install_hint(kind) })
        }
        Err(NotLaunched::NeedsLogin { how, .. }) => {
            // Found installed before the login was looked for: where, for the palette.
            let executable = terminals::resolve_agent(kind, &prefs, path.as_deref(), &|_| None)
                .map(|(_, exe)| exe)
                .unwrap_or_default();
            Err(AgentUnavailable::NotLoggedIn { kind, executable, how })
        }
        Err(why) => Err(AgentUnavailable::Misconfigured(why.message())),
    }
}

/// An agent node to open.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAgent {
    /// Which agent.
    pub kind: AgentKind,
    /// Its title.
    pub title: String,
    /// Its top-left corner.
    pub at: (f64, f64),
    /// Where it runs: the project folder, or its worktree's folder.
    pub cwd: PathBuf,
    /// Its worktree, when it runs in one.
    pub worktree: Option<AgentWorktree>,
    /// Its first instruction.
    pub prompt: Option<String>,
}

impl Runtime {
    /// Puts a new agent node on the active canvas; the launch hook then starts
    /// it with its session, environment and MCP configuration. The first
    /// instruction waits for that launch (and goes if the node does not go on).
    pub fn open_agent(&mut self, new: NewAgent) -> Result<NodeId, ModelError> {
        let kind = NodeKind::Agent { agent: new.kind, cwd: new.cwd, worktree: new.worktree };
        let node = Node::new(kind, new.title, Rect::new(new.at.0, new.at.1, AGENT_SIZE.0, AGENT_SIZE.1));
        let id = node.id.clone();
        if let Some(text) = new.prompt {
            self.tools.pending_prompts.insert(id.clone(), text);
        }
        if let Err(e) = self.apply(Command::AddNode { node }) {
            self.tools.pending_prompts.remove(&id);
            return Err(e);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::services::{start_services, ServiceOptions};
    use crate::runtime::test_context::TestContext;
    use serde_json::json;

    /// What a node's PTY was started with, its node id written as `<node>`.
    fn started_as(ctx: &TestContext, node: &NodeId) -> (Option<terminal::CommandSpec>, PathBuf, Vec<(String, String)>) {
        let spec =
            ctx.spawner.specs().into_iter().rev().find(|s| &s.node == node).expect("the agent's PTY was asked for");
        let anon = |v: &str| v.replace(node.as_str(), "<node>");
        let command = spec.config.command.map(|c| terminal::CommandSpec {
            program: anon(&c.program),
            args: c.args.iter().map(|a| anon(a)).collect(),
        });
        let env = spec.config.env.iter().map(|(k, v)| (k.clone(), anon(v))).collect();
        (command, spec.config.cwd, env)
    }

    #[test]
    fn an_agent_opened_from_the_window_starts_exactly_as_agent_launch_starts_one() {
        let mut ctx = TestContext::new();
        let exe = ctx.root().join("my-agent");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let tools = crate::paths::agent_tools(ctx.rt.data_dir());
        std::fs::write(tools.join("preferences.json"), json!({"custom": {"executable": exe}}).to_string()).unwrap();
        let _services = start_services(&mut ctx.rt, &ServiceOptions::default()).expect("tool server");

        let v = ctx.run("agent_launch", json!({"agent": "custom"})).unwrap();
        let by_tool = NodeId::new(v["nodeId"].as_str().unwrap()).unwrap();
        let folder = ctx.folder();
        let new = NewAgent {
            kind: AgentKind::Custom,
            title: "custom".into(),
            at: (0.0, 2000.0),
            cwd: folder.clone(),
            worktree: None,
            prompt: None,
        };
        let by_window = ctx.rt.open_agent(new).unwrap();
        ctx.rt.sync_terminals();

        let (a, b) = (ctx.node(by_tool.as_str()).unwrap(), ctx.node(by_window.as_str()).unwrap());
        assert_eq!(a.kind, b.kind);
        assert_eq!((a.title.as_str(), a.rect.w, a.rect.h), (b.title.as_str(), b.rect.w, b.rect.h));
        let started = started_as(&ctx, &by_tool);
        assert_eq!(started, started_as(&ctx, &by_window), "same command, folder and environment");
        assert_eq!(started.0.as_ref().map(|c| c.program.clone()), Some(exe.display().to_string()));
        assert!(started.2.iter().any(|(k, v)| k == "TERMSPRAWL_NODE_ID" && v == "<node>"), "{:?}", started.2);
        assert!(started.2.iter().any(|(k, _)| k == "TERMSPRAWL_CTL"));
        assert!(
            !started.2.iter().any(|(_, v)| v.len() == 64 && v.bytes().all(|c| c.is_ascii_hexdigit())),
            "no token in the environment"
        );
        // Both got a tool session, in the same state.
        let server = ctx.rt.tools.server().expect("running").clone();
        for id in [&by_tool, &by_window] {
            assert!(server.session(id.as_str()).is_some(), "{id} has a session");
        }
        assert_eq!(server.persisted_status(by_tool.as_str()), server.persisted_status(by_window.as_str()));
    }

    #[test]
    fn a_missing_cli_is_refused_with_its_install_line() {
        let dir = tempfile::tempdir().unwrap();
        // No preferences: the custom agent is not configured.
        match resolve_cli(AgentKind::Custom, dir.path()) {
            Err(AgentUnavailable::Misconfigured(why)) => assert!(why.contains("no custom agent"), "{why}"),
            other => panic!("{other:?}"),
        }
        std::fs::write(dir.path().join("preferences.json"), r#"{"custom":{"executable":"/nonexistent/agent"}}"#)
            .unwrap();
        let e = resolve_cli(AgentKind::Custom, dir.path()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "needs setup: custom is not installed (`/nonexistent/agent` is not on PATH): set custom in preferences.json"
        );
        assert_eq!(install_hint(AgentKind::Codex), "npm i -g @openai/codex");
    }

    #[test]
    fn a_worktree_agent_is_saved_with_its_worktree_and_removing_it_by_command_undo_or_redo_keeps_the_worktree() {
        let (_t, root) = crate::worktree::tests::repo();
        let plan = crate::worktree::plan(&root, "claude").unwrap();
        crate::worktree::create(&plan).unwrap();
        let mut ctx = TestContext::new();
        let wt = plan.worktree();
        let new = NewAgent {
            kind: AgentKind::Claude,
            title: format!("claude — {}", wt.branch),
            at: (0.0, 2000.0),
            cwd: plan.dir.clone(),
            worktree: Some(wt.clone()),
            prompt: None,
        };
        let id = ctx.rt.open_agent(new).unwrap();
        let saved = serde_json::to_value(&ctx.node(id.as_str()).unwrap().kind).unwrap();
        assert_eq!(saved["worktree"], json!({"repo": root, "branch": "agent/claude-1", "base": "main"}));
        ctx.rt.apply(Command::RemoveNodes { ids: vec![id.clone()] }).unwrap();
        ctx.rt.undo().unwrap();
        assert!(ctx.node(id.as_str()).is_some());
        ctx.rt.redo().unwrap();
        assert!(ctx.node(id.as_str()).is_none());
        assert!(plan.dir.join("a.txt").is_file(), "the worktree is only ever removed by the person's choice");
    }
}
