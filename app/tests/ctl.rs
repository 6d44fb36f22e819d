//! End-to-end tests for `termsprawl-ctl`: the built binary is run as a
//! subprocess against a real `tool_server::ToolServer` started in-process on a
//! temporary data directory. The server's `ToolHost` is a test double that
//! echoes each accepted request back (and fails one operation on purpose):
//! the ctl's job is transport, so what matters is that requests reach the host
//! as the right identity and that values and errors come back intact.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

use local_guard::files::write_private_json;
use serde_json::{json, Value};
use tempfile::TempDir;
use tool_server::{
    guide, ExecuteFuture, GuideTopic, HookEvent, HookReport, IntegrationState, IntegrationStatus, Operation, ToolCall,
    ToolError, ToolHost, ToolIdentity, ToolServer, AGENT_TOOLS,
};

const CTL: &str = env!("CARGO_BIN_EXE_termsprawl-ctl");
const NODE: &str = "agent-7";
const PROJECT: &str = "proj-ctl";

/// Echoes accepted requests; `terminal_close` fails with a two-line message
/// so the one-line error rendering is exercised. Hook reports are recorded.
#[derive(Default)]
struct EchoHost {
    hooks: Arc<parking_lot::Mutex<Vec<(String, HookReport)>>>,
}

impl ToolHost for EchoHost {
    fn execute(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture {
        let reply = if let ToolCall::TerminalClose(args) = &call {
            Err(ToolError::not_found(format!("terminal {} is not open\n(it was closed by the user)", args.node_id)))
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

    fn project_folder(&self, _project_id: &str) -> Option<std::path::PathBuf> {
        None
    }

    fn on_hook(&self, identity: &ToolIdentity, report: HookReport) {
        self.hooks.lock().push((identity.node_id.clone(), report));
    }
}

/// A running server with one provisioned agent session.
struct Fixture {
    dir: TempDir,
    server: Option<ToolServer>,
    token: String,
    hooks: Arc<parking_lot::Mutex<Vec<(String, HookReport)>>>,
}

/// One finished ctl run.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// Asserts exit status 1 with exactly one stderr line containing `needle`.
    fn assert_failed(&self, needle: &str) {
        assert_eq!(self.code, Some(1), "{self:?}");
        assert_eq!(self.stderr.lines().count(), 1, "one line: {self:?}");
        assert!(self.stderr.contains(needle), "{needle:?} in {self:?}");
        assert!(self.stdout.is_empty(), "{self:?}");
    }

    /// Asserts a usage error (exit status 2) mentioning `needle`.
    fn assert_usage(&self, needle: &str) {
        assert_eq!(self.code, Some(2), "{self:?}");
        assert!(self.stderr.contains(needle), "{needle:?} in {self:?}");
        assert!(self.stdout.is_empty(), "{self:?}");
    }
}

impl Fixture {
    fn start() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut fixture = Fixture { dir, server: None, token: String::new(), hooks: Arc::default() };
        fixture.restart(false);
        fixture
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn agent_tools(&self) -> PathBuf {
        termsprawl::paths::agent_tools(&self.data())
    }

    fn server(&self) -> &ToolServer {
        self.server.as_ref().unwrap()
    }

    /// (Re)starts the server; with `reuse`, the node's persisted session is
    /// provisioned again with its token, as the app does for a surviving agent.
    fn restart(&mut self, reuse: bool) {
        drop(self.server.take());
        let server = ToolServer::start(&self.data(), Arc::new(EchoHost { hooks: self.hooks.clone() })).unwrap();
        let session = server
            .provision(ToolIdentity::new(NODE, PROJECT), IntegrationStatus::new(IntegrationState::Ready), reuse)
            .unwrap();
        self.token = session.token.expose().to_owned();
        self.server = Some(server);
    }

    /// Restarts the server without provisioning anything: the session file
    /// stays on disk but its token is dormant, as after an app restart
    /// before the agent node is prepared again.
    fn restart_dormant(&mut self) {
        drop(self.server.take());
        self.server = Some(ToolServer::start(&self.data(), Arc::new(EchoHost { hooks: self.hooks.clone() })).unwrap());
    }

    /// The ctl as an agent terminal runs it: identity and data directory from
    /// the environment, and nothing of the developer's own data reachable.
    fn ctl(&self, args: &[&str]) -> Command {
        let mut command = Command::new(CTL);
        command
            .args(args)
            .env("TERMSPRAWL_NODE_ID", NODE)
            .env("TERMSPRAWL_DATA_DIR", self.data())
            .env("XDG_DATA_HOME", self.dir.path().join("xdg"))
            .env("HOME", self.dir.path().join("home"))
            .env_remove("RUST_LOG");
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_command(self.ctl(args), None)
    }

    fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        self.run_command(self.ctl(args), Some(stdin))
    }

    /// Runs to completion and checks the token never appears in the output.
    fn run_command(&self, mut command: Command, stdin: Option<&str>) -> Run {
        command
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            pipe.write_all(text.as_bytes()).unwrap();
        }
        let output = child.wait_with_output().unwrap();
        let run = Run {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        };
        assert!(
            !run.stdout.contains(&self.token) && !run.stderr.contains(&self.token),
            "the session token leaked into the output"
        );
        run
    }
}

#[test]
fn session_info_prints_the_identity_as_json() {
    let fixture = Fixture::start();
    let run = fixture.run(&["call", "session_info"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.is_empty(), "{run:?}");
    assert!(run.stdout.contains("\n  \""), "pretty-printed: {run:?}");
    let value = run.json();
    assert_eq!(value["identity"], json!({"nodeId": NODE, "projectId": PROJECT}));
    assert_eq!(value["endpoint"]["url"], fixture.server().url());
    let operations: Vec<&str> = value["operations"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let expected: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
    assert_eq!(operations, expected);
    // A plain CLI call announces no adapter, so the status is unchanged.
    assert_eq!(value["status"], json!({"state": "ready"}));
}

#[test]
fn flags_override_the_environment() {
    let fixture = Fixture::start();
    let data = fixture.data();
    let mut command = fixture.ctl(&["--data-dir", data.to_str().unwrap(), "--node", NODE, "call", "session_info"]);
    command.env("TERMSPRAWL_NODE_ID", "someone-else").env("TERMSPRAWL_DATA_DIR", fixture.dir.path().join("elsewhere"));
    let run = fixture.run_command(command, None);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.json()["identity"]["nodeId"], NODE);

    // Without either, the XDG default is used, which holds no server here.
    let mut command = fixture.ctl(&["call", "session_info"]);
    command.env_remove("TERMSPRAWL_DATA_DIR");
    fixture.run_command(command, None).assert_failed("the tool server is not running");
}

#[test]
fn guides_online_and_offline() {
    let fixture = Fixture::start();
    let run = fixture.run(&["call", "guide_read", r#"{"topic":"canvas"}"#]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.json(), json!({"topic": "canvas", "text": guide(GuideTopic::Canvas)}));

    // Offline: no identity and no server needed.
    let mut command = fixture.ctl(&["guide", "terminal"]);
    command.env_remove("TERMSPRAWL_NODE_ID").env("TERMSPRAWL_DATA_DIR", fixture.dir.path().join("none"));
    let run = fixture.run_command(command, None);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, format!("{}\n", guide(GuideTopic::Terminal)));

    fixture.run(&["guide", "weather"]).assert_usage("invalid value 'weather'");
}

#[test]
fn canvas_operations_reach_the_host() {
    let fixture = Fixture::start();
    let run = fixture.run(&["call", "canvas_move", r#"{"nodeId":"n-2","x":10,"y":-20.5}"#]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.json(),
        json!({
            "operation": "canvas_move",
            "args": {"nodeId": "n-2", "x": 10, "y": -20.5},
            "nodeId": NODE,
            "projectId": PROJECT,
        })
    );

    // Arguments from stdin with `-`.
    let run = fixture.run_stdin(&["call", "canvas_select", "-"], "{\"nodeIds\": [\"n-1\", \"n-3\"]}\n");
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.json()["args"], json!({"nodeIds": ["n-1", "n-3"]}));

    // No arguments at all.
    let run = fixture.run(&["call", "canvas_list"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.json()["operation"], "canvas_list");
    assert_eq!(fixture.server().pending_operations(PROJECT), 0);
}

#[test]
fn refused_calls_exit_1_with_one_line() {
    let fixture = Fixture::start();
    fixture.run(&["call", "canvas_teleport", "{}"]).assert_failed("Unknown operation canvas_teleport");
    fixture
        .run(&["call", "canvas_move", r#"{"nodeId":"n","x":1,"y":2,"z":3}"#])
        .assert_failed("canvas_move does not accept argument z");
    fixture
        .run(&["call", "canvas_move", r#"{"nodeId":"n","x":1e9,"y":2}"#])
        .assert_failed("x must be between -1000000 and 1000000");
    fixture.run(&["call", "browser_list"]).assert_failed("Enable agent browser control");
    // The host's two-line message arrives intact, on one line.
    let run = fixture.run(&["call", "terminal_close", r#"{"nodeId":"n-9"}"#]);
    run.assert_failed("terminal n-9 is not open (it was closed by the user)");
}

#[test]
fn usage_errors_exit_2() {
    let fixture = Fixture::start();
    fixture.run(&["call", "canvas_list", "{nodeId: 1}"]).assert_usage("arguments are not valid JSON");
    fixture.run(&["call", "canvas_list", "[\"n-1\"]"]).assert_usage("arguments must be a JSON object");
    fixture.run_stdin(&["call", "canvas_list", "-"], "").assert_usage("arguments are not valid JSON");
    fixture.run(&["teleport"]).assert_usage("unrecognized subcommand 'teleport'");
    fixture.run(&["call"]).assert_usage("<OPERATION>");
    fixture.run(&["--node", "../etc", "call", "session_info"]).assert_usage("invalid node id");

    let mut command = fixture.ctl(&["call", "session_info"]);
    command.env_remove("TERMSPRAWL_NODE_ID");
    fixture.run_command(command, None).assert_usage("set TERMSPRAWL_NODE_ID");
    let mut command = fixture.ctl(&["mcp"]);
    command.env("TERMSPRAWL_NODE_ID", "");
    fixture.run_command(command, None).assert_usage("set TERMSPRAWL_NODE_ID");
}

#[test]
fn revoked_and_dormant_sessions_exit_1() {
    let mut fixture = Fixture::start();
    assert_eq!(fixture.run(&["call", "session_info"]).code, Some(0));

    // A restarted server has not re-provisioned the node: the session file
    // is still there, but the server no longer honours its token.
    fixture.restart_dormant();
    fixture.run(&["call", "session_info"]).assert_failed("Unknown or revoked session");
    fixture.run(&["call", "canvas_list"]).assert_failed("Unknown or revoked session");

    // Re-provisioned with reuse: the same token works against the new port.
    fixture.restart(true);
    assert_eq!(fixture.run(&["call", "canvas_list"]).code, Some(0));

    // Revoked: the session file is gone.
    assert!(fixture.server().revoke(NODE).unwrap());
    fixture.run(&["call", "session_info"]).assert_failed("no tool session for this node");
}

#[test]
fn server_not_running_exits_1() {
    let mut fixture = Fixture::start();
    let mut server = fixture.server.take().unwrap();
    server.close().unwrap();
    fixture.run(&["call", "session_info"]).assert_failed("the tool server is not running");
}

#[test]
fn hooks_report_each_cli_to_the_app_silently() {
    let fixture = Fixture::start();
    let permission = json!({"hook_event_name": "Notification", "notification_type": "permission_prompt",
                            "message": "Claude needs your permission to use Bash", "session_id": "s"});
    let run = fixture.run_stdin(&["hook", "--agent", "claude"], &permission.to_string());
    assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (Some(0), "", ""), "{run:?}");
    let codex = json!({"type": "agent-turn-complete", "thread-id": "t", "last-assistant-message": "Done."});
    let run = fixture.run(&["hook", "--agent", "codex", &codex.to_string()]);
    assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (Some(0), "", ""), "{run:?}");
    let run = fixture.run_stdin(&["hook", "--agent", "gemini"], r#"{"hook_event_name":"AfterAgent"}"#);
    assert_eq!((run.code, run.stdout.trim()), (Some(0), "{}"), "gemini reads a JSON object: {run:?}");
    // Input that says nothing reportable, or is not JSON, is dropped quietly.
    for (agent, input) in [("claude", "not json"), ("claude", r#"{"hook_event_name":"PreCompact"}"#), ("codex", "{}")] {
        let run = fixture.run_stdin(&["hook", "--agent", agent], input);
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (Some(0), "", ""), "{run:?}");
    }
    let got: Vec<(String, HookEvent, Option<String>)> = fixture
        .hooks
        .lock()
        .iter()
        .map(|(n, r)| (n.clone(), r.event, r.detail.clone().or(r.message.clone())))
        .collect();
    assert_eq!(
        got,
        [
            (NODE.into(), HookEvent::PermissionRequested, Some("Claude needs your permission to use Bash".into())),
            (NODE.into(), HookEvent::TurnComplete, Some("Done.".into())),
            (NODE.into(), HookEvent::TurnComplete, None),
        ]
    );
}

#[test]
fn a_hook_returns_at_once_when_the_app_is_gone_or_hung() {
    let mut fixture = Fixture::start();
    let input = r#"{"hook_event_name":"Stop"}"#;
    let timed = |fixture: &Fixture, what: &str| {
        let started = std::time::Instant::now();
        let run = fixture.run_stdin(&["hook", "--agent", "claude"], input);
        let took = started.elapsed();
        println!("hook with {what}: exit {:?} in {} ms", run.code, took.as_millis());
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (Some(0), "", ""), "{what}: {run:?}");
        // Bounded far below the client's 120 s call timeout: a hook never waits like an operation.
        assert!(took < std::time::Duration::from_secs(5), "{what}: the hook took {took:?}");
    };
    // A revoked session, then an app that closed (its endpoint file is gone).
    assert!(fixture.server().revoke(NODE).unwrap());
    timed(&fixture, "a revoked session");
    fixture.restart(false);
    let endpoint = fixture.agent_tools().join("endpoint.json");
    let stale = std::fs::read(&endpoint).unwrap();
    fixture.server.take().unwrap().close().unwrap();
    timed(&fixture, "the app closed");
    // The app died without cleaning up: its endpoint file names a closed port.
    std::fs::write(&endpoint, &stale).unwrap();
    timed(&fixture, "a stale endpoint");
    // Something accepts connections but never answers (a hung app).
    let hung = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", hung.local_addr().unwrap().port());
    write_private_json(&fixture.agent_tools(), "endpoint.json", &json!({"url": url, "instanceId": "hung"})).unwrap();
    timed(&fixture, "a hung app");
    assert!(fixture.hooks.lock().is_empty());
}

#[test]
fn non_loopback_endpoints_are_refused_without_connecting() {
    let fixture = Fixture::start();
    // Something listens on another loopback address; a client that followed
    // the endpoint file there would hand it the bearer token.
    let decoy = TcpListener::bind("127.0.0.2:0").unwrap();
    decoy.set_nonblocking(true).unwrap();
    let port = decoy.local_addr().unwrap().port();
    for url in [
        format!("http://127.0.0.2:{port}"),
        format!("https://127.0.0.1:{}", fixture.server().port()),
        "http://203.0.113.9:80".to_owned(),
    ] {
        write_private_json(&fixture.agent_tools(), "endpoint.json", &json!({"url": url, "instanceId": "decoy"}))
            .unwrap();
        fixture.run(&["call", "session_info"]).assert_failed("invalid tool endpoint");
    }
    // The ctl has exited, so any connection it made would be queued by now.
    assert_eq!(
        decoy.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "the ctl connected to a non-loopback-endpoint"
    );
}

#[test]
fn tools_lists_the_catalogue_offline() {
    let fixture = Fixture::start();
    let mut command = fixture.ctl(&["tools"]);
    command.env_remove("TERMSPRAWL_NODE_ID").env("TERMSPRAWL_DATA_DIR", fixture.dir.path().join("none"));
    let run = fixture.run_command(command, None);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), AGENT_TOOLS.len());
    for (line, spec) in lines.iter().zip(AGENT_TOOLS.iter()) {
        let (name, summary) = line.split_once(' ').unwrap();
        assert_eq!(name, spec.name());
        assert_eq!(summary.trim_start(), spec.description.lines().next().unwrap());
    }

    let run = fixture.run(&["tools", "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let tools = run.json();
    let tools = tools.as_array().unwrap();
    assert_eq!(tools.len(), 28);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{tool}");
    }
}

/// A `termsprawl-ctl mcp` process spoken to line by line.
struct McpProcess {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl McpProcess {
    fn spawn(fixture: &Fixture, args: &[&str]) -> McpProcess {
        let mut child =
            fixture.ctl(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        McpProcess { child, input, output }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        let reply = self.request(id, "tools/call", json!({"name": name, "arguments": arguments}));
        reply["result"].clone()
    }

    /// Closes stdin and returns (exit code, stderr).
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.input);
        let mut rest = String::new();
        self.output.read_to_string(&mut rest).unwrap();
        assert!(rest.is_empty(), "unexpected output {rest:?}");
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr).unwrap();
        }
        (self.child.wait().unwrap().code(), stderr)
    }
}

fn result_value(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn mcp_serves_the_catalogue_and_survives_a_server_restart() {
    let mut fixture = Fixture::start();
    let mut mcp = McpProcess::spawn(&fixture, &["mcp", "--adapter", "codex-mcp"]);
    let init = mcp.request(1, "initialize", json!({"protocolVersion": "2025-06-18"}));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    // initialize announced the adapter, which the server recorded.
    assert_eq!(
        fixture.server().session(NODE).unwrap().status,
        IntegrationStatus { state: IntegrationState::Connected, adapter: Some("codex-mcp".into()), detail: None }
    );
    let listed = mcp.request(2, "tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 28);

    let value = result_value(&mcp.call(3, "canvas_list", json!({})));
    assert_eq!((value["operation"].as_str(), value["nodeId"].as_str()), (Some("canvas_list"), Some(NODE)));

    let failed = mcp.call(4, "terminal_close", json!({"nodeId": "n-9"}));
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(failed["content"][0]["text"].as_str().unwrap().contains("terminal n-9 is not open"));
    assert_eq!(failed["structuredContent"]["code"], "not_found", "{failed}");

    // The app restarts on a new port: the adapter re-reads endpoint.json and
    // the session file for each call, so the agent's tools keep working.
    let old_port = fixture.server().port();
    fixture.restart(true);
    assert_ne!(fixture.server().port(), old_port);
    let value = result_value(&mcp.call(5, "canvas_move", json!({"nodeId": "n-1", "x": 1, "y": 2})));
    assert_eq!(value["args"], json!({"nodeId": "n-1", "x": 1, "y": 2}));

    // While it is down, a call fails as a tool error and the adapter lives on.
    fixture.server.take();
    let down = mcp.call(6, "canvas_list", json!({}));
    assert_eq!(down["isError"], true, "{down}");
    assert_eq!(down["content"][0]["text"], "the tool server is not running");
    let pong = mcp.request(7, "ping", json!({}));
    assert_eq!(pong["result"], json!({}));

    let (code, stderr) = mcp.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains(&fixture.token), "the token leaked to stderr");
}

/// The first interpreter that can import the MCP SDK: `TERMSPRAWL_TEST_PYTHON`,
/// then the repository's `.venv`, then `python3` on PATH.
fn python_with_mcp() -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let candidates = [
        std::env::var_os("TERMSPRAWL_TEST_PYTHON").map(PathBuf::from),
        Some(repo.join(".venv/bin/python3")),
        Some(PathBuf::from("python3")),
    ];
    candidates.into_iter().flatten().find(|python| {
        Command::new(python)
            .args(["-c", "import mcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn mcp_interoperates_with_the_python_sdk() {
    let Some(python) = python_with_mcp() else {
        let why = "`python3 -c 'import mcp'` fails (install it: see tests/mcp/README.md)";
        // ./dev test sets up the SDK, so there a missing one is a failure, not a skip.
        assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "{why}");
        println!("SKIPPED mcp_interoperates_with_the_python_sdk: {why}");
        return;
    };
    let fixture = Fixture::start();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client.py");
    let mut command = Command::new(&python);
    command
        .arg(&script)
        .env("TERMSPRAWL_CTL", CTL)
        .env("TERMSPRAWL_NODE_ID", NODE)
        .env("TERMSPRAWL_PROJECT_ID", PROJECT)
        .env("TERMSPRAWL_DATA_DIR", fixture.data());
    let run = fixture.run_command(command, None);
    println!("{}", run.stdout.trim_end());
    assert_eq!(run.code, Some(0), "{run:?}");
    let summary = run.stdout.lines().last().unwrap_or_default();
    let passed: usize = summary
        .strip_prefix("mcp: ")
        .and_then(|s| s.strip_suffix(" passed, 0 failed"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected summary: {run:?}"));
    // 2 initialize + 2 listing + 2 per tool + 4 session_info + 7 calls.
    assert_eq!(passed, 2 + 2 + 2 * 28 + 4 + 7, "{run:?}");
    assert_eq!(fixture.server().session(NODE).unwrap().status.adapter.as_deref(), Some("claude-mcp"));
}
