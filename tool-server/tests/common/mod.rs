//! Shared test support: a recording `ToolHost` whose `execute` can be held
//! open until the test releases it, and a raw HTTP/1.1 client over
//! `TcpStream` so every byte on the wire is under the test's control.

#![allow(dead_code)]

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_vocab::AgentActivity;
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tool_server::{
    ExecuteFuture, HookReport, IntegrationState, IntegrationStatus, ServerConfig, ToolCall, ToolError, ToolHost,
    ToolIdentity, ToolServer, ToolSession,
};

/// Generous bound for anything that waits on another thread or socket.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Polls `condition` until it holds, failing the test after [`PATIENCE`].
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// One `execute` call as the host saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub node_id: String,
    pub project_id: String,
    pub operation: String,
    pub args: Value,
}

/// A `ToolHost` that records everything and, when `hold` is on, keeps each
/// `execute` pending until [`FakeHost::release_oldest`].
#[derive(Default)]
pub struct FakeHost {
    pub browser: AtomicBool,
    pub hold: AtomicBool,
    pub invalid_nodes: Mutex<HashSet<String>>,
    pub started: Mutex<Vec<Call>>,
    pub finished: Arc<Mutex<Vec<Call>>>,
    pub statuses: Mutex<Vec<(String, IntegrationStatus)>>,
    /// Hook reports received, with the reporting node.
    pub hooks: Mutex<Vec<(String, HookReport)>>,
    /// What `activity` answers, per node.
    pub activities: Mutex<std::collections::HashMap<String, AgentActivity>>,
    held: Mutex<Vec<oneshot::Sender<()>>>,
}

impl FakeHost {
    pub fn new() -> Arc<FakeHost> {
        Arc::new(FakeHost::default())
    }

    /// Labels of started calls: the `text` argument, else the operation name.
    pub fn started_labels(&self) -> Vec<String> {
        self.started.lock().iter().map(label).collect()
    }

    pub fn finished_labels(&self) -> Vec<String> {
        self.finished.lock().iter().map(label).collect()
    }

    /// Lets the oldest held `execute` complete.
    pub fn release_oldest(&self) {
        let mut held = self.held.lock();
        assert!(!held.is_empty(), "nothing is held");
        let _ = held.remove(0).send(());
    }

    pub fn held_count(&self) -> usize {
        self.held.lock().len()
    }
}

fn label(call: &Call) -> String {
    call.args.get("text").and_then(Value::as_str).map_or_else(|| call.operation.clone(), str::to_owned)
}

impl ToolHost for FakeHost {
    fn execute(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture {
        let call = Call {
            node_id: identity.node_id.clone(),
            project_id: identity.project_id.clone(),
            operation: call.operation().name().to_owned(),
            args: Value::Object(call.args()),
        };
        // Hold before recording the start, so a test that sees the start can
        // always release it.
        let gate = if self.hold.load(Ordering::SeqCst) {
            let (tx, rx) = oneshot::channel();
            self.held.lock().push(tx);
            Some(rx)
        } else {
            None
        };
        self.started.lock().push(call.clone());
        let finished = Arc::clone(&self.finished);
        Box::pin(async move {
            if let Some(rx) = gate {
                let _ = rx.await;
            }
            finished.lock().push(call.clone());
            if call.args.get("text").and_then(Value::as_str) == Some("fail") {
                return Err(ToolError::refused("the fake host refused"));
            }
            Ok(json!({"echo": call.operation, "args": call.args, "by": call.node_id}))
        })
    }

    fn valid(&self, identity: &ToolIdentity) -> bool {
        !self.invalid_nodes.lock().contains(&identity.node_id)
    }

    fn browser_enabled(&self) -> bool {
        self.browser.load(Ordering::SeqCst)
    }

    fn project_folder(&self, project_id: &str) -> Option<std::path::PathBuf> {
        Some(std::path::Path::new("/projects").join(project_id))
    }

    fn on_status(&self, node_id: &str, status: &IntegrationStatus) {
        self.statuses.lock().push((node_id.to_owned(), status.clone()));
    }

    fn on_hook(&self, identity: &ToolIdentity, report: HookReport) {
        self.hooks.lock().push((identity.node_id.clone(), report));
    }

    fn activity(&self, node_id: &str) -> Option<AgentActivity> {
        self.activities.lock().get(node_id).cloned()
    }
}

/// A started server with its host and data directory.
pub struct Fixture {
    pub host: Arc<FakeHost>,
    pub server: ToolServer,
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with_config(ServerConfig::default())
    }

    pub fn with_config(config: ServerConfig) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let host = FakeHost::new();
        let server = ToolServer::start_with_config(dir.path(), host.clone(), config).unwrap();
        Fixture { host, server, dir }
    }

    /// Provisions a ready session for `node` in `project`; returns its token.
    pub fn session(&self, node: &str, project: &str) -> String {
        self.provision(node, project).token.expose().to_owned()
    }

    pub fn provision(&self, node: &str, project: &str) -> ToolSession {
        self.server
            .provision(ToolIdentity::new(node, project), IntegrationStatus::new(IntegrationState::Ready), false)
            .unwrap()
    }

    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// One `POST /call` on a fresh connection.
    pub fn call(&self, token: &str, body: &Value) -> Response {
        let mut conn = Conn::open(self.port());
        conn.send(&call_request(self.port(), token, &body.to_string()));
        conn.response()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.server.close();
    }
}

/// A complete `POST /call` request.
/// A `POST /hook` request with `body`.
pub fn hook_request(port: u16, token: &str, body: &str) -> String {
    call_request(port, token, body).replacen("POST /call", "POST /hook", 1)
}

pub fn call_request(port: u16, token: &str, body: &str) -> String {
    format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A client connection that can pipeline and read responses one by one.
pub struct Conn {
    pub stream: TcpStream,
    buffer: Vec<u8>,
}

impl Conn {
    pub fn open(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        stream.set_write_timeout(Some(PATIENCE)).unwrap();
        Conn { stream, buffer: Vec::new() }
    }

    pub fn send(&mut self, bytes: &str) {
        self.stream.write_all(bytes.as_bytes()).unwrap();
    }

    /// Writes, tolerating a peer that already closed.
    pub fn send_lossy(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    fn fill(&mut self) -> usize {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).expect("read from server");
        self.buffer.extend_from_slice(&chunk[..n]);
        n
    }

    /// Reads one response (Content-Length framed, as the server always sends).
    pub fn response(&mut self) -> Response {
        let head_end = loop {
            if let Some(at) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            assert!(
                self.fill() > 0,
                "connection closed before a response: {:?}",
                String::from_utf8_lossy(&self.buffer)
            );
        };
        let head = String::from_utf8(self.buffer[..head_end].to_vec()).unwrap();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').unwrap();
                (n.trim().to_owned(), v.trim().to_owned())
            })
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        let total = head_end + 4 + length;
        while self.buffer.len() < total {
            assert!(self.fill() > 0, "connection closed mid-body");
        }
        let body = self.buffer[head_end + 4..total].to_vec();
        self.buffer.drain(..total);
        Response { status, headers, body }
    }

    /// True once the server has closed the connection (EOF or reset) with
    /// nothing more to read.
    pub fn closed_by_server(&mut self) -> bool {
        let mut chunk = [0u8; 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => true,
            Ok(n) => panic!("unexpected bytes: {:?}", String::from_utf8_lossy(&chunk[..n])),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => true,
            Err(e) => panic!("connection still open after waiting: {e}"),
        }
    }
}

/// Permission bits of a path (not following links).
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}
