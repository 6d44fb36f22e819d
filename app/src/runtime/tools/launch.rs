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
    let path = std::env::var_os("PATH");
    terminals::resolve_agent(kind, &agent_tools.join("preferences.json"), path.as_deref(), &|v| std::env::var(v).ok())
        .map_err(|why| match why {
            NotLaunched::NeedsSetup { .. } | NotLaunched::NeedsLogin { .. } => ToolError::not_found(why.message()),
            _ => ToolError::failed(why.message()),
        })
}

/// The claude hook events whose reports drive an agent node's state.
const CLAUDE_HOOK_EVENTS: [&str; 10] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "Stop",
    "StopFailure",
    "SessionEnd",
];

/// Seconds claude lets one hook run; `termsprawl-ctl hook` gives up after about one.
const CLAUDE_HOOK_TIMEOUT_S: u64 = 5;

/// `text` quoted for a POSIX shell (claude runs hook commands through one).
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The `termsprawl-ctl hook` command line for `agent` in node `node`; the
/// identity rides in argv too (a tmux session may not carry the launch
/// environment), the token never does: the ctl reads it from the session file.
fn hook_command(ctl: &str, agent: &str, node: &str, data_dir: &Path) -> Vec<String> {
    let data = data_dir.display().to_string();
    let mut argv = vec![ctl.to_owned()];
    argv.extend(["--data-dir", &data, "--node", node, "hook", "--agent", agent].map(str::to_owned));
    argv
}

/// Claude's `--settings` document: every event of [`CLAUDE_HOOK_EVENTS`]
/// runs the ctl's hook command. Claude merges it with the user's own
/// settings for this run; the user's files are never touched.
fn claude_hook_settings(argv: &[String]) -> serde_json::Value {
    let command: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    let hook =
        json!([{"hooks": [{"type": "command", "command": command.join(" "), "timeout": CLAUDE_HOOK_TIMEOUT_S}]}]);
    let hooks: serde_json::Map<String, serde_json::Value> =
        CLAUDE_HOOK_EVENTS.iter().map(|e| ((*e).to_owned(), hook.clone())).collect();
    json!({"hooks": hooks})
}

/// Writes the agent's MCP configuration under `launch/<nodeId>/` and returns
/// the CLI arguments that load it (none for CLIs without native MCP config,
/// which use `$TERMSPRAWL_CTL call …` as the guides describe), with the
/// status hooks of CLIs that have them: claude's `--settings` hooks and
/// codex's `notify` program, both running `termsprawl-ctl hook`.
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
            let settings = claude_hook_settings(&hook_command(&ctl, "claude", node, data_dir));
            local_guard::files::write_private_json(&dir, "settings.json", &settings)?;
            Ok(vec![
                "--mcp-config".into(),
                dir.join("mcp.json").display().to_string(),
                "--settings".into(),
                dir.join("settings.json").display().to_string(),
            ])
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
                // Codex runs its notify program with the event's JSON as the last argument.
                "-c".into(),
                format!("notify={}", json!(hook_command(&ctl, "codex", node, data_dir))),
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
                format!(r#"notify=[{ctl},"--data-dir","/data dir","--node","agent-7","hook","--agent","codex"]"#)
                    .as_str(),
            ]
        );
        // Nothing else is written for codex: its own config stays the user's.
        assert_eq!(std::fs::read_dir(tools.join("launch/agent-7")).unwrap().count(), 0);
    }

    #[test]
    fn hook_commands_survive_the_shell() {
        assert_eq!(shell_quote("/opt/my dir/it's"), r"'/opt/my dir/it'\''s'");
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s|' {}", shell_quote("a 'b' $HOME \\"))])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a 'b' $HOME \\|");
    }

    #[test]
    fn launch_config_names_the_ctl_but_holds_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        let args = write_launch_config(&tools, "n1", AgentKind::Claude, dir.path()).unwrap();
        assert_eq!((args[0].as_str(), args[2].as_str()), ("--mcp-config", "--settings"));
        let cfg: Value = serde_json::from_slice(&std::fs::read(&args[1]).unwrap()).unwrap();
        assert_eq!(cfg["mcpServers"]["termsprawl"]["args"][0], "mcp");
        assert_eq!(cfg["mcpServers"]["termsprawl"]["env"]["TERMSPRAWL_NODE_ID"], "n1");
        let settings: Value = serde_json::from_slice(&std::fs::read(&args[3]).unwrap()).unwrap();
        let hooks = settings["hooks"].as_object().unwrap();
        assert_eq!(hooks.len(), CLAUDE_HOOK_EVENTS.len());
        let command = hooks["Notification"][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(command.ends_with("'--node' 'n1' 'hook' '--agent' 'claude'"), "{command}");
        assert!(!std::fs::read_to_string(&args[3]).unwrap().contains("token"));
        assert!(write_launch_config(&tools, "n3", AgentKind::Gemini, dir.path()).unwrap().is_empty());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(tools.join("launch/n1")).unwrap().permissions().mode() & 0o777, 0o700);
    }
}
