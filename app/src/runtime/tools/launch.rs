//! Agent PTY preparation: the launch hook every PTY passes through (session
//! provisioning, identity environment, per-agent MCP and status-hook
//! configuration under `agent-tools/launch/<nodeId>/`), and how an agent's CLI is found.
//!
//! The session token never goes into a PTY's environment or argv: the agent
//! (or the `termsprawl-ctl mcp` server its CLI starts) reads it from the
//! private session file named by `TERMSPRAWL_NODE_ID` and `TERMSPRAWL_DATA_DIR`.

use super::context::model_error;
use super::link::ToolPhase;
use crate::model::AgentKind;
use crate::runtime::terminals::{self, LaunchDecision, NotLaunched, PtyLaunch};
use crate::runtime::LaunchHook;
use crate::runtime::Runtime;
use local_guard::FileError;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use terminal::agents::AgentSpec;
use terminal::{shell_quote, CommandSpec};
use tool_server::{IntegrationState, IntegrationStatus, ToolError, ToolIdentity};

/// Environment variable naming the `termsprawl-ctl` binary in agent PTYs.
pub const CTL_ENV: &str = "TERMSPRAWL_CTL";

/// The PTY launch hook of the tool runtime, for `Runtime::set_pty_launch_hook`.
pub fn launch_hook() -> LaunchHook {
    Arc::new(pty_launch_hook)
}

impl Runtime {
    /// Installs the tool runtime's launch hook ([`pty_launch_hook`]): agent
    /// PTYs wait for the tool server so they start with credentials. The
    /// runtime does this before any project opens (opening one starts its
    /// terminals).
    pub(crate) fn install_tool_launch_hook(&mut self) {
        self.set_pty_launch_hook(launch_hook());
    }
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

/// The gemini hook events whose reports drive an agent node's state (the ones
/// `HookReport::from_gemini` reads).
const GEMINI_HOOK_EVENTS: [&str; 7] =
    ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "Notification", "SessionEnd"];

/// Milliseconds gemini lets one hook run (its `timeout` is in ms; default 60 000).
const GEMINI_HOOK_TIMEOUT_MS: u64 = 5000;

/// The `name` of the hook termsprawl adds (gemini shows it in `/hooks` and logs).
const GEMINI_HOOK_NAME: &str = "termsprawl-status";

/// Gemini-cli's variable naming its system defaults file (the lowest settings layer).
pub const GEMINI_SYSTEM_DEFAULTS_ENV: &str = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH";

/// Gemini-cli's variable naming its system settings file, beside which it
/// looks for `system-defaults.json` when [`GEMINI_SYSTEM_DEFAULTS_ENV`] is unset.
const GEMINI_SYSTEM_SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";

/// Gemini-cli's own system settings file, when [`GEMINI_SYSTEM_SETTINGS_ENV`] is unset.
#[cfg(target_os = "macos")]
const GEMINI_SYSTEM_SETTINGS: &str = "/Library/Application Support/GeminiCli/settings.json";
#[cfg(not(target_os = "macos"))]
const GEMINI_SYSTEM_SETTINGS: &str = "/etc/gemini-cli/settings.json";

/// The per-run system defaults file written for gemini under `launch/<nodeId>/`.
const GEMINI_DEFAULTS_FILE: &str = "gemini-system-defaults.json";

/// The system defaults file gemini would read without termsprawl, found as
/// gemini-cli's `getSystemDefaultsPath` does (an empty variable counts as unset).
fn gemini_system_defaults_source(var: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let set = |name: &str| var(name).filter(|v| !v.is_empty());
    if let Some(path) = set(GEMINI_SYSTEM_DEFAULTS_ENV) {
        return PathBuf::from(path);
    }
    let settings = set(GEMINI_SYSTEM_SETTINGS_ENV).unwrap_or_else(|| GEMINI_SYSTEM_SETTINGS.to_owned());
    Path::new(&settings).parent().unwrap_or(Path::new("")).join("system-defaults.json")
}

/// The system defaults document gemini gets for one run: the machine's own
/// file at `source` (a missing one is empty) with one more hook group per
/// event of [`GEMINI_HOOK_EVENTS`] running `argv`, after that file's own
/// groups (gemini concatenates each event's hook groups across its layers).
/// `Err`: why nothing may be injected, the file being unreadable or not a
/// settings object gemini could merge into.
fn gemini_system_defaults(source: &Path, argv: &[String]) -> Result<Value, String> {
    let command: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    let command = command.join(" ");
    if command.contains('$') {
        // Gemini expands `$VAR` in every settings string, quotes or not.
        return Err(format!("the hook command ({command}) holds a '$', which gemini would expand"));
    }
    let shown = source.display();
    let mut settings = match std::fs::read_to_string(source) {
        // Gemini reads its settings as JSON with comments (`strip-json-comments`).
        Ok(text) => serde_json::from_reader::<_, Value>(json_comments::StripComments::new(text.as_bytes()))
            .map_err(|e| format!("{shown} is not valid JSON ({e})"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(format!("{shown} could not be read ({e})")),
    };
    let Some(top) = settings.as_object_mut() else { return Err(format!("{shown} is not a JSON object")) };
    let Value::Object(hooks) = top.entry("hooks").or_insert_with(|| json!({})) else {
        return Err(format!("`hooks` in {shown} is not an object"));
    };
    let group = json!({"hooks": [{"name": GEMINI_HOOK_NAME, "type": "command", "command": command, "timeout": GEMINI_HOOK_TIMEOUT_MS}]});
    for event in GEMINI_HOOK_EVENTS {
        let Value::Array(groups) = hooks.entry(event).or_insert_with(|| json!([])) else {
            return Err(format!("`hooks.{event}` in {shown} is not an array"));
        };
        groups.push(group.clone());
    }
    Ok(settings)
}

/// Gemini's part of [`write_launch_config`]: `launch/<nodeId>/`
/// [`GEMINI_DEFAULTS_FILE`] (the system defaults at `source` plus the status
/// hooks), loaded through [`GEMINI_SYSTEM_DEFAULTS_ENV`]. The user's own
/// files are only read; when the one at `source` cannot be merged into,
/// nothing is injected and `hooks_skipped` says why.
fn write_gemini_config(dir: &Path, argv: &[String], source: &Path) -> Result<LaunchConfig, FileError> {
    match gemini_system_defaults(source, argv) {
        Ok(settings) => {
            local_guard::files::write_private_json(dir, GEMINI_DEFAULTS_FILE, &settings)?;
            let path = dir.join(GEMINI_DEFAULTS_FILE).display().to_string();
            Ok(LaunchConfig { env: vec![(GEMINI_SYSTEM_DEFAULTS_ENV.into(), path)], ..LaunchConfig::default() })
        }
        Err(why) => Ok(LaunchConfig {
            hooks_skipped: Some(format!(
                "gemini status hooks not injected: {why}; gemini reads its own settings as usual and its state is guessed"
            )),
            ..LaunchConfig::default()
        }),
    }
}

/// What an agent's launch gets from [`write_launch_config`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchConfig {
    /// CLI arguments, before the agent's own launch arguments.
    pub args: Vec<String>,
    /// Environment for the agent's PTY.
    pub env: Vec<(String, String)>,
    /// Why the CLI's status hooks were left out (the launch goes on without them).
    pub hooks_skipped: Option<String>,
}

/// Writes the agent's MCP configuration under `launch/<nodeId>/` and returns
/// the CLI arguments that load it (none for CLIs without native MCP config,
/// which use `$TERMSPRAWL_CTL call …` as the guides describe), with the
/// status hooks of CLIs that have them, all running `termsprawl-ctl hook`:
/// claude's `--settings` hooks, codex's `notify` program, and gemini's
/// hooks in a per-run system defaults file named by its environment.
pub fn write_launch_config(
    agent_tools: &Path,
    node: &str,
    kind: AgentKind,
    data_dir: &Path,
) -> Result<LaunchConfig, FileError> {
    let launch = agent_tools.join("launch");
    let dir = launch.join(node);
    for d in [&launch, &dir] {
        local_guard::files::ensure_private_dir(d)?;
    }
    let ctl = ctl_path().display().to_string();
    let env = json!({"TERMSPRAWL_NODE_ID": node, "TERMSPRAWL_DATA_DIR": data_dir.display().to_string()});
    match kind {
        AgentKind::Claude | AgentKind::OpenClaude => {
            let config = json!({"mcpServers": {"termsprawl": {"type": "stdio", "command": ctl, "args": ["mcp", "--adapter", "claude-mcp"], "env": env}}});
            local_guard::files::write_private_json(&dir, "mcp.json", &config)?;
            let settings = claude_hook_settings(&hook_command(&ctl, "claude", node, data_dir));
            local_guard::files::write_private_json(&dir, "settings.json", &settings)?;
            let args = vec![
                "--mcp-config".into(),
                dir.join("mcp.json").display().to_string(),
                "--settings".into(),
                dir.join("settings.json").display().to_string(),
            ];
            Ok(LaunchConfig { args, ..LaunchConfig::default() })
        }
        AgentKind::Codex => {
            // Codex reads MCP servers from `-c key=<TOML>` overrides (its own
            // config.toml stays the user's), and starts them with a filtered
            // environment, so the identity goes in the server's own `env`.
            let q = |s: &str| json!(s).to_string();
            let args = vec![
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
                // Approvals and plan prompts reach only codex's TUI notifications, sent
                // as OSC 9 (codex-cli 0.171 checks the method's name): the node's
                // terminal signals catch them and call the person. Codex sends them
                // only while its terminal is unfocused (focus reporting, which tmux
                // passes on with `focus-events`).
                "-c".into(),
                r#"tui.notification_method="osc9""#.into(),
                "-c".into(),
                r#"tui.notifications=["approval-requested","plan-mode-prompt"]"#.into(),
            ];
            Ok(LaunchConfig { args, ..LaunchConfig::default() })
        }
        AgentKind::Gemini => {
            let source = gemini_system_defaults_source(&|v| std::env::var(v).ok());
            write_gemini_config(&dir, &hook_command(&ctl, "gemini", node, data_dir), &source)
        }
        _ => Ok(LaunchConfig::default()),
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
/// gets its session provisioned (token reused across restarts), its MCP and
/// status-hook configuration (arguments and environment) and its first instruction. A warm tmux agent that started
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
        let mut config = write_launch_config(&dir, &node, agent, rt.data_dir()).map_err(model_error)?;
        config.args.extend(spec.launch_args(prompt.as_deref()));
        Ok((CommandSpec { program: exe.display().to_string(), args: config.args }, config.env, config.hooks_skipped))
    });
    let status = match prepared {
        Ok((command, env, hooks_skipped)) => {
            launch.command = Some(command);
            launch.env.extend(env);
            match hooks_skipped {
                Some(why) => {
                    rt.notify(format!("agent {node}: {why}"), true);
                    IntegrationStatus::with_detail(IntegrationState::Ready, why)
                }
                None => IntegrationStatus::new(IntegrationState::Ready),
            }
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
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn codex_gets_its_mcp_server_and_the_identity_through_config_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        let config = write_launch_config(&tools, "agent-7", AgentKind::Codex, Path::new("/data dir")).unwrap();
        assert!(config.env.is_empty() && config.hooks_skipped.is_none(), "{config:?}");
        let args = config.args;
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
                r#"tui.notification_method="osc9""#,
                r#"tui.notifications=["approval-requested","plan-mode-prompt"]"#,
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
        let args = write_launch_config(&tools, "n1", AgentKind::Claude, dir.path()).unwrap().args;
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
        // Gemini gets no arguments; its hooks ride in the environment (unless
        // this machine's own system defaults file cannot be merged into).
        let gemini = write_launch_config(&tools, "n3", AgentKind::Gemini, dir.path()).unwrap();
        assert!(gemini.args.is_empty());
        let file = tools.join("launch/n3").join(GEMINI_DEFAULTS_FILE).display().to_string();
        match &gemini.hooks_skipped {
            None => assert_eq!(gemini.env, [(GEMINI_SYSTEM_DEFAULTS_ENV.to_owned(), file)]),
            Some(_) => assert!(gemini.env.is_empty()),
        }
        assert_eq!(std::fs::metadata(tools.join("launch/n1")).unwrap().permissions().mode() & 0o777, 0o700);
    }

    /// A private `launch/<node>/` directory, as `write_launch_config` makes it.
    fn launch_dir(root: &Path, node: &str) -> PathBuf {
        let dir = root.join(node);
        local_guard::files::ensure_private_dir(&dir).unwrap();
        dir
    }

    fn gemini_argv(node: &str, data_dir: &Path) -> Vec<String> {
        hook_command("/opt/term sprawl/termsprawl-ctl", "gemini", node, data_dir)
    }

    #[test]
    fn gemini_gets_its_status_hooks_through_a_per_run_system_defaults_file() {
        let root = tempfile::tempdir().unwrap();
        let dir = launch_dir(root.path(), "g1");
        let missing = root.path().join("etc/gemini-cli/system-defaults.json");
        let config = write_gemini_config(&dir, &gemini_argv("g1", Path::new("/data dir")), &missing).unwrap();
        let file = dir.join(GEMINI_DEFAULTS_FILE);
        assert_eq!(config.env, [(GEMINI_SYSTEM_DEFAULTS_ENV.to_owned(), file.display().to_string())]);
        assert!(config.args.is_empty() && config.hooks_skipped.is_none(), "{config:?}");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.to_lowercase().contains("token"), "{text}");
        let settings: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(settings.as_object().unwrap().len(), 1, "{settings}");
        let hooks = settings["hooks"].as_object().unwrap();
        assert_eq!(hooks.len(), GEMINI_HOOK_EVENTS.len());
        for event in GEMINI_HOOK_EVENTS {
            // Every event registered is one the hook parser reports.
            let input = json!({"hook_event_name": event, "tool_name": "x", "notification_type": "ToolPermission"});
            assert!(tool_server::HookReport::from_gemini(&input).is_some(), "{event}");
            let groups = hooks[event].as_array().unwrap();
            assert_eq!(groups.len(), 1, "{event}");
            let hook = &groups[0]["hooks"][0];
            assert_eq!((hook["type"].as_str(), hook["timeout"].as_u64()), (Some("command"), Some(5000)));
            assert_eq!(
                hook["command"],
                "'/opt/term sprawl/termsprawl-ctl' '--data-dir' '/data dir' '--node' 'g1' 'hook' '--agent' 'gemini'"
            );
        }
        // The command survives the shell gemini runs it through.
        let command = hooks["AfterAgent"][0]["hooks"][0]["command"].as_str().unwrap();
        let out = std::process::Command::new("sh").args(["-c", &format!("printf '%s|' {command}")]).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "/opt/term sprawl/termsprawl-ctl|--data-dir|/data dir|--node|g1|hook|--agent|gemini|"
        );
    }

    #[test]
    fn the_machines_system_defaults_are_kept_and_our_hooks_come_after_its_own() {
        let root = tempfile::tempdir().unwrap();
        let dir = launch_dir(root.path(), "g2");
        let source = root.path().join("system-defaults.json");
        let original = r#"{
          // set by the admin
          "ui": {"theme": "corp"},
          "mcpServers": {"corp": {"command": "corp-mcp", "args": ["--url", "http://x/*y*/"]}},
          "hooksConfig": {"enabled": true},
          "hooks": {
            "BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "audit.sh"}]}],
            "PreCompress": [{"hooks": [{"type": "command", "command": "save.sh"}]}] /* not ours */
          }
        }"#;
        std::fs::write(&source, original).unwrap();
        let config = write_gemini_config(&dir, &gemini_argv("g2", root.path()), &source).unwrap();
        assert!(config.hooks_skipped.is_none(), "{config:?}");
        let settings: Value = serde_json::from_slice(&std::fs::read(dir.join(GEMINI_DEFAULTS_FILE)).unwrap()).unwrap();
        assert_eq!(settings["ui"], json!({"theme": "corp"}));
        assert_eq!(settings["mcpServers"]["corp"]["args"], json!(["--url", "http://x/*y*/"]));
        assert_eq!(settings["hooksConfig"], json!({"enabled": true}));
        let hooks = &settings["hooks"];
        assert_eq!(hooks["PreCompress"], json!([{"hooks": [{"type": "command", "command": "save.sh"}]}]));
        let before_tool = hooks["BeforeTool"].as_array().unwrap();
        assert_eq!(before_tool.len(), 2);
        assert_eq!(before_tool[0]["hooks"][0]["command"], "audit.sh");
        assert_eq!(before_tool[1]["hooks"][0]["name"], GEMINI_HOOK_NAME);
        assert_eq!(hooks["SessionStart"].as_array().unwrap().len(), 1);
        // The machine's file is only read.
        assert_eq!(std::fs::read_to_string(&source).unwrap(), original);
    }

    #[test]
    fn a_system_defaults_file_gemini_could_not_merge_means_no_injection() {
        let root = tempfile::tempdir().unwrap();
        let cases = [
            ("{\"ui\": ", "is not valid JSON"),
            ("[1, 2]", "is not a JSON object"),
            ("{\"hooks\": \"on\"}", "`hooks` in"),
            ("{\"hooks\": {\"AfterAgent\": {\"command\": \"x\"}}}", "`hooks.AfterAgent` in"),
        ];
        for (i, (content, why)) in cases.iter().enumerate() {
            let node = format!("bad-{i}");
            let dir = launch_dir(root.path(), &node);
            let source = root.path().join(format!("defaults-{i}.json"));
            std::fs::write(&source, content).unwrap();
            let config = write_gemini_config(&dir, &gemini_argv(&node, root.path()), &source).unwrap();
            assert!(config.env.is_empty() && config.args.is_empty(), "{config:?}");
            let skipped = config.hooks_skipped.unwrap();
            assert!(skipped.starts_with("gemini status hooks not injected: "), "{skipped}");
            assert!(skipped.contains(why) && skipped.contains(&source.display().to_string()), "{skipped}");
            assert!(!dir.join(GEMINI_DEFAULTS_FILE).exists());
            assert_eq!(std::fs::read_to_string(&source).unwrap(), *content);
        }
        // Unreadable (a directory where the file would be).
        let dir = launch_dir(root.path(), "unreadable");
        let config = write_gemini_config(&dir, &gemini_argv("unreadable", root.path()), root.path()).unwrap();
        assert!(config.env.is_empty());
        assert!(config.hooks_skipped.unwrap().contains("could not be read"));
        // A '$' in the command would be expanded by gemini's settings loader.
        let dir = launch_dir(root.path(), "dollar");
        let config =
            write_gemini_config(&dir, &gemini_argv("dollar", Path::new("/data/$HOME")), Path::new("/nonexistent"))
                .unwrap();
        assert!(config.env.is_empty());
        assert!(config.hooks_skipped.unwrap().contains("'$'"));
    }

    #[test]
    fn the_system_defaults_source_is_found_as_gemini_finds_it() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        let source = |pairs| gemini_system_defaults_source(&vars(pairs));
        assert_eq!(
            source(&[
                (GEMINI_SYSTEM_DEFAULTS_ENV, "/srv/d.json"),
                (GEMINI_SYSTEM_SETTINGS_ENV, "/srv/s/settings.json")
            ]),
            Path::new("/srv/d.json")
        );
        assert_eq!(
            source(&[(GEMINI_SYSTEM_DEFAULTS_ENV, ""), (GEMINI_SYSTEM_SETTINGS_ENV, "/srv/s/settings.json")]),
            Path::new("/srv/s/system-defaults.json")
        );
        let default = Path::new(GEMINI_SYSTEM_SETTINGS).with_file_name("system-defaults.json");
        assert_eq!(source(&[]), default);
        #[cfg(target_os = "linux")]
        assert_eq!(default, Path::new("/etc/gemini-cli/system-defaults.json"));
    }
}
