//! The MCP clients agents really use, unmodified, against both of
//! termsprawl's MCP transports: `termsprawl-ctl mcp` (stdio) and the tool
//! server's `/mcp` (streamable HTTP). A real `tool_server::ToolServer` runs
//! in-process on a temporary data directory with a host double that echoes
//! accepted calls (and fails `terminal_close`): what is under test is the
//! protocol between the clients and termsprawl, not the canvas.
//!
//! Clients (pinned and installed by `./dev setup`, nothing fetched here): the
//! official Python SDK (`.venv`), the TypeScript SDKs v1 and v2, the MCP
//! conformance suite, `claude` and `codex` (`tests/cdp/node_modules`). A test
//! whose client is missing prints `SKIPPED …` and passes, except under
//! `TERMSPRAWL_TEST_STRICT` (`./dev test`), where it fails.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;

use serde_json::{json, Value};
use tempfile::TempDir;
use tool_server::{
    ExecuteFuture, IntegrationState, IntegrationStatus, ToolCall, ToolError, ToolHost, ToolIdentity, ToolServer,
    AGENT_TOOLS,
};

const CTL: &str = env!("CARGO_BIN_EXE_termsprawl-ctl");
const NODE: &str = "agent-mcp";
const PROJECT: &str = "proj-mcp";

/// Echoes accepted calls as `{operation, args, nodeId, projectId}`;
/// `terminal_close` fails, so host errors can be checked.
struct EchoHost;

impl ToolHost for EchoHost {
    fn execute(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture {
        let reply = if let ToolCall::TerminalClose(args) = &call {
            Err(ToolError::not_found(format!("terminal {} is not open", args.node_id)))
        } else {
            Ok(json!({
                "operation": call.operation().name(),
                "args": call.args(),
                "nodeId": identity.node_id,
                "projectId": identity.project_id,
            }))
        };
        Box::pin(std::future::ready(reply))
    }

    fn valid(&self, identity: &ToolIdentity) -> bool {
        identity.project_id == PROJECT
    }

    fn browser_enabled(&self) -> bool {
        false
    }

    fn project_folder(&self, _project_id: &str) -> Option<PathBuf> {
        None
    }
}

/// A running server with one provisioned agent session and a private home.
struct Fixture {
    dir: TempDir,
    server: ToolServer,
    token: String,
}

impl Fixture {
    fn start() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let server = ToolServer::start(&dir.path().join("data"), Arc::new(EchoHost)).unwrap();
        let session = server
            .provision(ToolIdentity::new(NODE, PROJECT), IntegrationStatus::new(IntegrationState::Ready), false)
            .unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Fixture { token: session.token.expose().to_owned(), dir, server }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.server.url())
    }

    /// `program` with what the client scripts read (see tests/mcp/revisions.py),
    /// a fresh HOME, and the clients' offline settings.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let names: Vec<&str> = AGENT_TOOLS.iter().map(|t| t.name()).collect();
        let mut command = Command::new(program);
        command
            .current_dir(repo())
            .env("TERMSPRAWL_CTL", CTL)
            .env("TERMSPRAWL_NODE_ID", NODE)
            .env("TERMSPRAWL_DATA_DIR", self.data())
            .env("TERMSPRAWL_MCP_URL", self.mcp_url())
            .env("TERMSPRAWL_TOKEN", &self.token)
            .env("TERMSPRAWL_TOOLS", names.join(","))
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("GIT_ALLOW_PROTOCOL", "file")
            .env("RUST_LOG", "error");
        if let Some(bin) = node_dir() {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut paths = vec![bin];
            paths.extend(std::env::split_paths(&path));
            command.env("PATH", std::env::join_paths(paths).unwrap());
        }
        command
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `third_party/node/bin` when setup put Node there.
fn node_dir() -> Option<PathBuf> {
    let dir = repo().join("third_party/node/bin");
    dir.join("node").exists().then_some(dir)
}

fn node() -> PathBuf {
    node_dir().map_or_else(|| PathBuf::from("node"), |dir| dir.join("node"))
}

/// An installed npm client binary, or `None` (reported by [`missing`]).
fn npm_bin(name: &str) -> Option<PathBuf> {
    let path = repo().join("tests/cdp/node_modules/.bin").join(name);
    path.exists().then_some(path)
}

/// Skips a test whose client is not installed, or fails it under `./dev test`.
fn missing(test: &str, what: &str) {
    assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "{test}: {what} is not installed (./dev setup)");
    println!("SKIPPED {test}: {what} is not installed (./dev setup installs it)");
}

fn run(mut command: Command) -> Output {
    command.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

/// Checks a script's `NAME: N passed, 0 failed` summary and returns N.
fn passed(output: &Output, name: &str) -> usize {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(output.status.success(), "{summary}\n{stderr}");
    summary
        .strip_prefix(&format!("{name}: "))
        .and_then(|s| s.strip_suffix(" passed, 0 failed"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected summary {summary:?}\n{stderr}"))
}

/// Checks per transport and revision: negotiated, listed, every tool called,
/// the host reached, a host error, an unknown tool.
const CHECKS_PER_SESSION: usize = 5 + 28;

#[test]
fn mcp_python_sdk_speaks_every_revision_over_stdio_and_http() {
    let python = repo().join(".venv/bin/python3");
    let has_sdk = Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !has_sdk {
        return missing("mcp_python_sdk", "the Python MCP SDK (.venv)");
    }
    let fx = Fixture::start();
    let mut command = fx.command(&python);
    command.arg("tests/mcp/revisions.py");
    let output = run(command);
    // Two transports × five revisions.
    assert_eq!(passed(&output, "mcp-revisions"), 2 * 5 * CHECKS_PER_SESSION);
}

#[test]
fn mcp_typescript_sdks_speak_every_revision_over_stdio_and_http() {
    if npm_bin("conformance").is_none() {
        return missing("mcp_typescript_sdks", "tests/cdp/node_modules");
    }
    let fx = Fixture::start();
    let mut command = fx.command(node());
    command.arg("tests/mcp/typescript_sdks.cjs");
    let output = run(command);
    // v1: two transports × four revisions and 2024-10-07 (answered with 2025-11-25); v2: two × five.
    assert_eq!(passed(&output, "mcp-typescript"), (2 * 5 + 2 * 5) * CHECKS_PER_SESSION);
}

/// The proxy the conformance suite needs (it sends no token); killed on drop.
struct Proxy {
    child: Child,
    port: u16,
}

impl Proxy {
    fn start(fx: &Fixture) -> Proxy {
        let mut command = fx.command(node());
        command.arg("tests/mcp/token_proxy.cjs").stdin(Stdio::null()).stdout(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the proxy printed {line:?}"));
        Proxy { child, port }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_conformance_suite_passes_against_the_http_endpoint() {
    let Some(conformance) = npm_bin("conformance") else {
        return missing("mcp_conformance", "@modelcontextprotocol/conformance");
    };
    let fx = Fixture::start();
    let proxy = Proxy::start(&fx);
    let suite = |url: &str, scenario: &str| {
        let mut command = fx.command(&conformance);
        command.args(["server", "--url", url, "--scenario", scenario]);
        run(command)
    };
    // Every generic server scenario for the revisions served, the streamable
    // HTTP ones included (several POST streams at once, SSE polling); logging
    // is not offered, so logging-set-level does not apply.
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
        "server-sse-polling",
    ] {
        let output = suite(&format!("http://127.0.0.1:{}/mcp", proxy.port), scenario);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && stdout.contains(" 0 failed"), "{scenario}:\n{stdout}");
    }
    // Straight at the endpoint, without the token: the suite fails, so the
    // passes above are the endpoint's and the check can fail.
    let output = suite(&fx.mcp_url(), "tools-list");
    assert!(!output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn claude_mcp_list_shows_stdio_and_http_connected_and_a_down_server_failed() {
    let Some(claude) = npm_bin("claude") else {
        return missing("claude_mcp_list", "@anthropic-ai/claude-code");
    };
    let fx = Fixture::start();
    let project = fx.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let claude_in_project = |args: &[&str]| {
        let mut command = fx.command(&claude);
        command.current_dir(&project).args(args);
        let output = run(command);
        assert!(output.status.success(), "claude {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let stdio = json!({
        "type": "stdio",
        "command": CTL,
        "args": ["mcp"],
        "env": {"TERMSPRAWL_NODE_ID": NODE, "TERMSPRAWL_DATA_DIR": fx.data()},
    });
    claude_in_project(&["mcp", "add-json", "-s", "local", "termsprawl", &stdio.to_string()]);
    // The line docs/agents.md gives; claude expands ${TERMSPRAWL_TOKEN} when it connects.
    let url = fx.mcp_url();
    claude_in_project(&[
        "mcp",
        "add",
        "--transport",
        "http",
        "termsprawl-http",
        &url,
        "--header",
        "Authorization: Bearer ${TERMSPRAWL_TOKEN}",
    ]);
    let down = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port())
    };
    claude_in_project(&["mcp", "add", "--transport", "http", "termsprawl-down", &down]);

    let listing = claude_in_project(&["mcp", "list"]);
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("{name} missing from:\n{listing}"))
            .to_owned()
    };
    assert!(line("termsprawl").contains("✔ Connected"), "{listing}");
    assert!(line("termsprawl-http").contains("✔ Connected"), "{listing}");
    assert!(line("termsprawl-down").contains("✘ Failed to connect"), "{listing}");
    // Connecting over stdio announced the adapter.
    assert_eq!(fx.server.session(NODE).unwrap().status.adapter.as_deref(), Some("claude-mcp"));
    let config = std::fs::read_to_string(fx.home().join(".claude.json")).unwrap();
    assert!(!config.contains(&fx.token), "the token was written to claude's config");
}

#[test]
fn codex_app_server_lists_every_tool_over_stdio_and_http() {
    let Some(codex) = npm_bin("codex") else {
        return missing("codex_app_server", "@openai/codex");
    };
    let fx = Fixture::start();
    let codex_home = fx.dir.path().join("codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let data = fx.data();
    let config = format!(
        "[mcp_servers.termsprawl]\ncommand = {ctl}\nargs = [\"mcp\", \"--adapter\", \"codex-mcp\"]\n\
         env = {{ TERMSPRAWL_NODE_ID = {node}, TERMSPRAWL_DATA_DIR = {data} }}\n\n\
         [mcp_servers.termsprawl_http]\nurl = {url}\nbearer_token_env_var = \"TERMSPRAWL_TOKEN\"\n",
        ctl = json!(CTL),
        node = json!(NODE),
        data = json!(data),
        url = json!(fx.mcp_url()),
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();

    let mut command = fx.command(&codex);
    command
        .args(["app-server", "--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps"])
        .env("CODEX_HOME", &codex_home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    for message in [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "termsprawl-test", "version": "0"}}}),
        json!({"method": "initialized"}),
        json!({"id": 2, "method": "mcpServerStatus/list", "params": {}}),
    ] {
        writeln!(input, "{message}").unwrap();
    }
    // Read on a thread, so a codex that never answers fails the test (after
    // a generous wait) instead of hanging the suite.
    let stdout = child.stdout.take().unwrap();
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(message) = serde_json::from_str::<Value>(&line) {
                if message["id"] == 2 {
                    let _ = answer.send(message);
                    return;
                }
            }
        }
    });
    let status = answered.recv_timeout(std::time::Duration::from_secs(180));
    drop(input);
    let _ = child.kill();
    let _ = child.wait();
    let status = status.expect("codex answered mcpServerStatus/list");
    let servers = status["result"]["data"].as_array().unwrap_or_else(|| panic!("{status}"));
    let mut expected: Vec<&str> = AGENT_TOOLS.iter().map(|t| t.name()).collect();
    expected.sort_unstable();
    for name in ["termsprawl", "termsprawl_http"] {
        let server = servers.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{name} in {status}"));
        let mut tools: Vec<&str> =
            server["tools"].as_object().map(|t| t.keys().map(String::as_str).collect()).unwrap_or_default();
        tools.sort_unstable();
        assert_eq!(tools, expected, "{name}: {server}");
    }
    assert_eq!(fx.server.session(NODE).unwrap().status.adapter.as_deref(), Some("codex-mcp"));
}
