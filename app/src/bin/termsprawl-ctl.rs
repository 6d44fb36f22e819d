//! `termsprawl-ctl`: the command-line side of the agent tool protocol.
//!
//! - `call OPERATION ['{json}' | -]` — the CLI fallback the guides document
//!   (`"$TERMSPRAWL_CTL" call OPERATION '{"argument":"value"}'`): one call to
//!   the running app's tool server as the agent node named by
//!   `TERMSPRAWL_NODE_ID` (or `--node`). The value is printed as pretty JSON.
//! - `mcp` — the same catalogue as an MCP server over stdio, for agent CLIs
//!   that speak MCP natively (claude, codex).
//! - `guide TOPIC`, `tools` — the guides and the catalogue, offline.
//! - `hook --agent claude|codex|gemini [JSON]` — what an agent CLI runs from
//!   its own hooks: the hook's JSON (stdin for claude and gemini, the last
//!   argument for codex's `notify`) becomes one report to the app
//!   (`POST /hook`). It always exits 0 and prints nothing claude or codex
//!   would show (gemini gets the empty JSON object it expects), within about
//!   a second even when the app is gone, so it never blocks or fails a turn.
//!
//! The data directory comes from `--data-dir`, `TERMSPRAWL_DATA_DIR`, or XDG
//! (see `termsprawl::paths`); the endpoint and the session token are read
//! from its `agent-tools/` directory by `tool_server::ToolClient`, so the
//! token never appears on a command line, in the environment, or in output.
//!
//! Exit status: 0 on success; 1 when the call failed (the server refused it,
//! or it is not running, or the session is gone); 2 for usage errors (bad
//! arguments JSON, no identity, unknown subcommand or topic).

use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::PossibleValuesParser;
use clap::{Parser, Subcommand};
use serde_json::Value;
use termsprawl::paths;
use tool_server::{
    guide, valid_node_id, ClientError, GuideTopic, HookAgent, HookReport, McpServer, ToolCaller, ToolClient,
    AGENT_TOOLS,
};

/// Environment variable naming the agent node this process speaks for; the
/// app sets it in every agent terminal.
const NODE_ID_ENV: &str = "TERMSPRAWL_NODE_ID";
/// Largest arguments document accepted on stdin; the server's body cap is
/// 128 KiB, so anything much larger could never be accepted anyway.
const MAX_STDIN_ARGS: u64 = 1024 * 1024;

/// Talk to the termsprawl agent tool server.
#[derive(Debug, Parser)]
#[command(name = "termsprawl-ctl", version, about, long_about = None)]
struct Cli {
    /// The termsprawl data directory (default: $TERMSPRAWL_DATA_DIR, then
    /// $XDG_DATA_HOME/termsprawl, then ~/.local/share/termsprawl).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// The agent node to act as (default: $TERMSPRAWL_NODE_ID).
    #[arg(long, global = true, value_name = "NODE_ID")]
    node: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Call one operation and print its value as JSON.
    Call {
        /// The operation's name, e.g. canvas_list (see `termsprawl-ctl tools`).
        operation: String,
        /// The arguments as a JSON object, or `-` to read them from stdin.
        /// Omit for operations without arguments.
        args: Option<String>,
    },
    /// Print a usage guide (offline).
    Guide {
        /// The guide's topic.
        #[arg(value_parser = PossibleValuesParser::new(GuideTopic::NAMES), default_value = "overview")]
        topic: String,
    },
    /// List the operations with a one-line summary each (offline).
    Tools {
        /// Print the full catalogue (descriptions and input schemas) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Report an agent CLI's hook to the app (run by the CLI, not by people).
    Hook {
        /// The CLI whose hook this is.
        #[arg(long, value_parser = PossibleValuesParser::new(HookAgent::NAMES))]
        agent: String,
        /// The hook's JSON when passed as an argument (codex `notify`); else it is read from stdin.
        payload: Option<String>,
    },
    /// Serve the catalogue as an MCP server over stdio.
    Mcp {
        /// The adapter name reported to the app when a client connects, which
        /// marks the agent's tools as connected.
        #[arg(long, default_value = "claude-mcp",
              value_parser = PossibleValuesParser::new(["claude-mcp", "codex-mcp"]))]
        adapter: String,
    },
}

/// Why a command failed, which decides the exit status.
#[derive(Debug)]
enum Failure {
    /// The invocation itself is wrong (exit 2).
    Usage(String),
    /// The call was made, or attempted, and failed (exit 1).
    Failed(String),
}

impl Failure {
    fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Usage(_) => ExitCode::from(2),
            Failure::Failed(_) => ExitCode::from(1),
        }
    }

    fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Failed(m) => m,
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        // ClientError's Display never includes the token (a Token has no
        // Display and a redacted Debug), so it is safe to show.
        Failure::Failed(e.to_string())
    }
}

fn main() -> ExitCode {
    // clap prints its own usage errors and exits 2 (0 for --help/--version).
    let cli = Cli::parse();
    init_logging();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // Agents parse this: keep it to one line whatever the server said.
            let _ = writeln!(io::stderr(), "termsprawl-ctl: {}", one_line(failure.message()));
            failure.exit_code()
        }
    }
}

/// Logs go to stderr (stdout carries values, or the MCP stream), warnings
/// only unless `RUST_LOG` asks for more.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(io::stderr).with_target(false).try_init();
}

fn run(cli: Cli) -> Result<(), Failure> {
    let data = paths::data_dir(cli.data_dir.as_deref());
    let state = paths::agent_tools(&data);
    match cli.command {
        Command::Call { operation, args } => {
            let node = node_id(cli.node)?;
            let args = parse_args(args.as_deref())?;
            let client = ToolClient::from_state_dir(&state, &node)?;
            let value = client.call(&operation, args)?;
            let text = serde_json::to_string_pretty(&value)
                .map_err(|e| Failure::Failed(format!("cannot render the value: {e}")))?;
            print_out(&text)
        }
        Command::Guide { topic } => {
            let topic = GuideTopic::from_name(&topic)
                .ok_or_else(|| Failure::Usage(format!("unknown guide topic {topic:?}")))?;
            print_out(guide(topic))
        }
        Command::Tools { json } => {
            let text = if json {
                serde_json::to_string_pretty(&*AGENT_TOOLS)
                    .map_err(|e| Failure::Failed(format!("cannot render the catalogue: {e}")))?
            } else {
                tools_table()
            };
            print_out(text.trim_end())
        }
        Command::Hook { agent, payload } => {
            report_hook(cli.node, &state, &agent, payload.as_deref());
            Ok(())
        }
        Command::Mcp { adapter } => {
            let node = node_id(cli.node)?;
            let caller = StateDirCaller { state, node };
            let server = McpServer::new(caller, Some(adapter));
            server.serve_stdio().map_err(|e| Failure::Failed(format!("MCP stdio: {e}")))
        }
    }
}

/// The node id from `--node` or the environment, checked before any file is
/// touched so a typo is a usage error rather than a missing session.
fn node_id(explicit: Option<String>) -> Result<String, Failure> {
    let node = explicit.or_else(|| std::env::var(NODE_ID_ENV).ok()).filter(|n| !n.is_empty()).ok_or_else(|| {
        Failure::Usage(format!(
            "no agent identity: set {NODE_ID_ENV} (termsprawl sets it in agent terminals) or pass --node"
        ))
    })?;
    if !valid_node_id(&node) {
        return Err(Failure::Usage(format!(
            "invalid node id {:?}: expected letters, digits, '_' or '-'",
            node.chars().take(140).collect::<String>()
        )));
    }
    Ok(node)
}

/// The call's arguments: absent → none; `-` → a JSON object from stdin;
/// otherwise the text must be a JSON object.
fn parse_args(args: Option<&str>) -> Result<Value, Failure> {
    let text = match args {
        None => return Ok(Value::Null),
        Some("-") => {
            let mut text = String::new();
            io::stdin()
                .take(MAX_STDIN_ARGS + 1)
                .read_to_string(&mut text)
                .map_err(|e| Failure::Usage(format!("cannot read arguments from stdin: {e}")))?;
            if text.len() as u64 > MAX_STDIN_ARGS {
                return Err(Failure::Usage(format!("arguments on stdin exceed {MAX_STDIN_ARGS} bytes")));
            }
            text
        }
        Some(text) => text.to_owned(),
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|e| Failure::Usage(format!("arguments are not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(Failure::Usage("arguments must be a JSON object, e.g. '{\"nodeId\":\"n-1\"}'".into()));
    }
    Ok(value)
}

/// Sends one hook report; every failure is only logged (at debug level:
/// claude shows a hook's stderr in its transcript), since a hook must never
/// fail or hold up the agent's turn.
fn report_hook(node: Option<String>, state: &std::path::Path, agent: &str, payload: Option<&str>) {
    let Some(agent) = HookAgent::from_name(agent) else { return };
    if agent == HookAgent::Gemini {
        // Gemini parses a hook's stdout as JSON; an empty object changes nothing.
        let _ = print_out("{}");
    }
    let text = match payload {
        Some(text) => text.to_owned(),
        None => {
            let stdin = io::stdin();
            if stdin.is_terminal() {
                return;
            }
            let mut text = String::new();
            if stdin.lock().take(MAX_STDIN_ARGS).read_to_string(&mut text).is_err() {
                return;
            }
            text
        }
    };
    let Ok(input) = serde_json::from_str::<Value>(&text) else {
        tracing::debug!("hook input is not JSON");
        return;
    };
    let Some(report) = HookReport::from_input(agent, &input) else { return };
    let Ok(node) = node_id(node) else {
        tracing::debug!("hook outside a termsprawl agent terminal");
        return;
    };
    match ToolClient::from_state_dir(state, &node).and_then(|c| c.report_hook(&report)) {
        Ok(()) => tracing::debug!(event = ?report.event, "hook reported"),
        Err(e) => tracing::debug!(error = %e, "hook not reported"),
    }
}

/// `name  first line of the description`, one operation per line.
fn tools_table() -> String {
    let width = AGENT_TOOLS.iter().map(|t| t.name().len()).max().unwrap_or(0);
    AGENT_TOOLS
        .iter()
        .map(|t| {
            let summary = t.description.lines().next().unwrap_or("");
            format!("{:width$}  {summary}\n", t.name())
        })
        .collect()
}

/// Writes `text` and a newline to stdout; a closed pipe is a failure, not a panic.
fn print_out(text: &str) -> Result<(), Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    writeln!(out, "{text}").and_then(|()| out.flush()).map_err(|e| Failure::Failed(format!("cannot write output: {e}")))
}

/// Replaces control characters (newlines included) so a message stays on one line.
fn one_line(message: &str) -> String {
    message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// Forwards MCP tool calls, re-reading `endpoint.json` and the session file
/// for every call: the MCP server lives as long as the agent CLI, which can
/// outlive an app restart (new port, re-provisioned session), and a missing
/// server should fail one call with a clear message, not the whole adapter.
struct StateDirCaller {
    state: PathBuf,
    node: String,
}

impl ToolCaller for StateDirCaller {
    fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError> {
        ToolClient::from_state_dir(&self.state, &self.node)?.call(operation, args)
    }
}
