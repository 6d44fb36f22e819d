//! Agent PTY preparation: the launch hook every PTY passes through (session
//! provisioning, identity environment, per-agent MCP configuration under
//! `agent-tools/launch/<nodeId>/`), and how an agent's CLI is found.
//!
//! The session token never goes into a PTY's environment or argv: the agent
//! (or the `termsprawl-ctl mcp` server its CLI starts) reads it from the
//! private session file named by `TERMSPRAWL_NODE_ID` and `TERMSPRAWL_DATA_DIR`.

use super::context::model_error;
use super::link::ToolPhase;
use crate::model::AgentKind;
use crate::runtime::terminals::{self, LaunchDecision, LaunchHook, NotLaunched, PtyLaunch};
use crate::runtime::Runtime;
use local_guard::FileError;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use terminal::agents::AgentSpec;
use terminal::CommandSpec;
use tool_server::{IntegrationState, IntegrationStatus, ToolError, ToolIdentity};

/// Environment variable naming the `termsprawl-ctl` binary in agent PTYs.
pub const CTL_ENV: &str = "TERMSPRAWL_CTL";

/// The PTY launch hook of the tool runtime, for `Runtime::set_pty_launch_hook`.
pub fn launch_hook() -> LaunchHook {
    Arc::new(pty_launch_hook)
}

/// The `termsprawl-ctl` next to the running executable, else the one on PATH.
pub fn ctl_path() -> PathBuf {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join("termsprawl-ctl")));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("termsprawl-ctl"))
}

/// Resolves and probes an agent's executable (presets on PATH, `custom` from
/// `agent-tools/preferences.json`); a missing one is a needs-setup error naming what was looked for.
pub fn resolve_agent(kind: AgentKind, agent_tools: &Path) -> Result<(AgentSpec, PathBuf), ToolError> {
    terminals::resolve_agent(kind, &agent_tools.join("preferences.json"), std::env::var_os("PATH").as_deref()).map_err(
        |why| match why {
            NotLaunched::NeedsSetup { .. } => ToolError::not_found(why.message()),
            _ => ToolError::failed(why.message()),
        },
    )
}

/// Writes the agent's MCP configuration under `launch/<nodeId>/` and returns
/// the CLI arguments that load it (none for CLIs without native MCP config,
/// which use `$TERMSPRAWL_CTL call …` as the guides describe).
pub fn write_launch_config(
    agent_tools: &Path,
    node: &str,
    kind: AgentKind,
    data_dir: &Path,
) -> Result<Vec<String>, FileError> {
    let launch = agent_tools.join("launch");
    let dir = launch.join(node);
    for d in [&launch, &dir] {
        local_guard::files::ensure_private_dir(d)?;
    }
    let ctl = ctl_path().display().to_string();
    let env = json!({"TERMSPRAWL_NODE_ID": node, "TERMSPRAWL_DATA_DIR": data_dir.display().to_string()});
    match kind {
        AgentKind::Claude | AgentKind::Openclaude => {
            let config = json!({"mcpServers": {"termsprawl": {"type": "stdio", "command": ctl, "args": ["mcp", "--adapter", "claude-mcp"], "env": env}}});
            local_guard::files::write_private_json(&dir, "mcp.json", &config)?;
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
        let mut args = write_launch_config(&dir, &node, agent, rt.data_dir()).map_err(model_error)?;
        args.extend(spec.launch_args(prompt.as_deref()));
        Ok(CommandSpec { program: exe.display().to_string(), args })
    });
    let status = match prepared {
        Ok(command) => {
            launch.command = Some(command);
            IntegrationStatus::new(IntegrationState::Ready)
        }
        Err(e) => IntegrationStatus::with_detail(IntegrationState::NeedsSetup, e.message),
    };
    if let Err(e) = server.provision(identity, status, true) {
        rt.notify(format!("agent {node}: tool session not provisioned: {e}"), true);
    }
    LaunchDecision::Launch
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

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
