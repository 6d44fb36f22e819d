//! The catalogue as an MCP server, built on the `rmcp` SDK: `tools/list`
//! publishes [`AGENT_TOOLS`] and `tools/call` hands the call to an
//! [`McpBackend`]. One handler serves both transports: stdio for
//! `termsprawl-ctl mcp` ([`McpServer`], forwarding to the tool server through a
//! [`ToolCaller`]) and streamable HTTP at `POST /mcp` (`mcp_http`, calling the
//! invoke path directly).
//!
//! Revisions: 2026-07-28 (no `initialize`; `server/discover` and per-request
//! `_meta`, an unsupported version answered with rmcp's
//! `UNSUPPORTED_PROTOCOL_VERSION` error) and, over `initialize`, 2025-11-25,
//! 2025-06-18, 2025-03-26 and 2024-11-05. rmcp does the negotiating; this
//! module only pins the list.

use std::future::Future;
use std::io::{self, BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use parking_lot::{Condvar, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{QuitReason, RequestContext, RoleServer, ServerInitializeError};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::runtime::Handle;

use crate::catalogue::AGENT_TOOLS;
use crate::client::{ClientError, ToolClient};
use crate::operation::Operation;

/// MCP protocol revisions served, newest first. Pinned rather than rmcp's
/// full list so a client is only ever offered revisions tested here. An
/// `initialize` naming one this list lacks (or 2026-07-28, which has no
/// `initialize`) gets [`ProtocolVersion::LATEST_WITH_INITIALIZE`].
pub(crate) const PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2026_07_28,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2024_11_05,
];

/// Longest stdin line accepted (the HTTP body cap plus JSON-RPC framing).
const MAX_LINE: usize = 1024 * 1024;
/// Bytes buffered between the line pumps and rmcp in each direction.
const PIPE_BUFFER: usize = 2 * MAX_LINE;

/// What `initialize` tells the agent about the tools.
const INSTRUCTIONS: &str = "Tools for the termsprawl canvas you are running in. Call guide_read \
                            with topic overview first; browsers and terminals you open are \
                            visible to the user.";

/// [`AGENT_TOOLS`] as rmcp tools, converted once through their JSON form so
/// every field the catalogue publishes (name, description, inputSchema) is
/// carried over verbatim. A failure here is a catalogue bug, reported to the
/// client as an internal error rather than a panic in the agent's adapter.
static MCP_TOOLS: LazyLock<Result<Vec<Tool>, serde_json::Error>> = LazyLock::new(|| {
    AGENT_TOOLS.iter().map(|spec| serde_json::to_value(spec).and_then(serde_json::from_value::<Tool>)).collect()
});

/// Runs one tool call; implemented by [`ToolClient`].
pub trait ToolCaller {
    /// Calls `operation` with `args` (an object, or null) and returns its value.
    fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError>;
}

impl ToolCaller for ToolClient {
    fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError> {
        ToolClient::call(self, operation, args)
    }
}

/// Why a tool call failed: the message the agent reads, and the tool
/// server's stable error code when there is one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolFailure {
    /// The message, verbatim from the tool server.
    pub(crate) message: String,
    /// The error body's `code` (`browser_disabled`, `invalid_arguments`, …).
    pub(crate) code: Option<String>,
}

/// Where [`McpHandler`] sends what it cannot answer from the catalogue.
pub(crate) trait McpBackend: Send + Sync + 'static {
    /// Runs `operation` (a known name) with `args` for the request in `context`.
    fn call(
        &self,
        operation: Operation,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<Value, ToolFailure>> + Send;

    /// Runs before every answer that can open a client's session:
    /// `initialize`, `server/discover`, and (2026-07-28 clients may skip
    /// both) `tools/list` and `tools/call`. Must be cheap after the first.
    fn opening(&self, context: &RequestContext<RoleServer>) -> impl Future<Output = ()> + Send {
        let _ = context;
        std::future::ready(())
    }
}

/// The rmcp [`ServerHandler`] both transports serve. Cloning shares the backend.
#[derive(Debug)]
pub(crate) struct McpHandler<B> {
    pub(crate) backend: Arc<B>,
}

impl<B> Clone for McpHandler<B> {
    fn clone(&self) -> Self {
        McpHandler { backend: Arc::clone(&self.backend) }
    }
}

impl<B: McpBackend> ServerHandler for McpHandler<B> {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        // What `initialize` answers when the client names no revision served
        // there (rmcp never answers `initialize` with 2026-07-28).
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info.server_info = Implementation::new("termsprawl", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.to_owned());
        info
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(PROTOCOL_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.backend.opening(&context).await;
        self.negotiate_initialize(&request)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.backend.opening(&context).await;
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.backend.opening(&context).await;
        match &*MCP_TOOLS {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools.clone())),
            Err(e) => Err(ErrorData::internal_error(format!("catalogue entry is not an MCP tool: {e}"), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Unknown names never reach the tool server: every revision served
        // makes them a protocol error, -32602 (invalid params), not a tool failure.
        let Some(operation) = Operation::from_name(&request.name) else {
            return Err(ErrorData::invalid_params(format!("Unknown tool: {}", request.name.escape_debug()), None));
        };
        self.backend.opening(&context).await;
        let args = request.arguments.map_or(Value::Null, Value::Object);
        let result = match self.backend.call(operation, args, &context).await {
            Ok(value) => tool_result(value),
            // A refusal or an unreachable server is the agent's to read, so it
            // is a tool error carrying the server's message, not a protocol error.
            // The code rides along as structured content, beside the same text.
            Err(ToolFailure { message, code }) => {
                let mut result = CallToolResult::error(vec![ContentBlock::text(message.clone())]);
                if let Some(code) = code {
                    result.structured_content = Some(json!({"error": message, "code": code}));
                }
                result
            }
        };
        Ok(result.into())
    }
}

/// The stdio backend: a blocking [`ToolCaller`] (HTTP to the tool server),
/// and the adapter name announced once, when the client first connects.
#[derive(Debug)]
pub(crate) struct CallerBackend<C> {
    caller: Arc<C>,
    adapter: Option<String>,
    announced: AtomicBool,
}

impl<C: ToolCaller + Send + Sync + 'static> CallerBackend<C> {
    /// Calls the tool server off the async runtime: [`ToolCaller`] blocks on
    /// HTTP, which would otherwise stall the transport (and `ping`) meanwhile.
    async fn call_blocking(&self, operation: Operation, args: Value) -> Result<Value, ToolFailure> {
        let caller = Arc::clone(&self.caller);
        match tokio::task::spawn_blocking(move || caller.call(operation.name(), args)).await {
            Ok(outcome) => outcome.map_err(|e| {
                let code = match &e {
                    ClientError::Refused { code, .. } => code.clone(),
                    _ => None,
                };
                ToolFailure { message: e.to_string(), code }
            }),
            Err(e) => Err(ToolFailure { message: format!("the tool call was aborted: {e}"), code: None }),
        }
    }
}

impl<C: ToolCaller + Send + Sync + 'static> McpBackend for CallerBackend<C> {
    fn call(
        &self,
        operation: Operation,
        args: Value,
        _context: &RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<Value, ToolFailure>> + Send {
        self.call_blocking(operation, args)
    }

    async fn opening(&self, _context: &RequestContext<RoleServer>) {
        // Announced before the reply, so the canvas shows the session as
        // connected by the time the agent's client sees its first answer
        // (`initialize`, or `server/discover` for 2026-07-28 clients).
        if self.announced.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(adapter) = self.adapter.clone() {
            let announced = self.call_blocking(Operation::SessionInfo, json!({ "adapter": adapter })).await;
            if let Err(e) = announced {
                tracing::warn!(error = %e.message, "could not announce the MCP adapter to the tool server");
            }
        }
    }
}

/// The MCP stdio adapter: [`McpHandler`] forwarding to a [`ToolCaller`].
/// Cloning shares the caller.
#[derive(Debug)]
pub struct McpServer<C> {
    handler: McpHandler<CallerBackend<C>>,
}

impl<C> Clone for McpServer<C> {
    fn clone(&self) -> Self {
        McpServer { handler: self.handler.clone() }
    }
}

impl<C: ToolCaller + Send + Sync + 'static> McpServer<C> {
    /// An adapter forwarding to `caller`. With `adapter` (`claude-mcp`,
    /// `codex-mcp`), `initialize` reports it through `session_info`, which
    /// marks the session connected.
    pub fn new(caller: C, adapter: Option<String>) -> Self {
        let backend = CallerBackend { caller: Arc::new(caller), adapter, announced: AtomicBool::new(false) };
        McpServer { handler: McpHandler { backend: Arc::new(backend) } }
    }

    /// Serves MCP on this process's stdin and stdout until stdin closes.
    pub fn serve_stdio(&self) -> io::Result<()> {
        // Unlocked handles: the pumps run on their own threads, and the
        // standard locks cannot move there.
        self.serve(io::BufReader::new(io::stdin()), io::stdout())
    }

    /// Serves newline-delimited JSON-RPC from `input` to `output` until
    /// `input` reaches EOF and every request read has been answered.
    ///
    /// rmcp runs on a single-threaded runtime of its own, behind an in-memory
    /// pipe fed by two line pumps on scoped threads. The pumps are what keep
    /// this a blocking call over plain readers and writers, and they keep
    /// what clients of this adapter have always relied on where rmcp differs:
    /// requests are answered one at a time in order (rmcp runs them
    /// concurrently), EOF waits for in-flight calls (so `printf '…' |
    /// termsprawl-ctl mcp` loses no answers), and an `initialize` that omits
    /// `capabilities` or `clientInfo` is still accepted.
    pub fn serve(&self, input: impl BufRead + Send, output: impl Write + Send) -> io::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (client, server) = tokio::io::duplex(PIPE_BUFFER);
        let (server_read, server_write) = tokio::io::split(server);
        let (from_server, to_server) = tokio::io::split(client);
        let pending = Pending::default();
        let handle = runtime.handle();
        let outcome = std::thread::scope(|scope| {
            let reader = scope.spawn(|| pump_requests(input, to_server, handle, &pending));
            let writer = scope.spawn(|| pump_replies(from_server, output, handle, &pending));
            let served = runtime.block_on(self.run(server_read, server_write));
            // Answers still owed will never come; let the reader finish.
            pending.server_gone();
            let wrote = writer.join().unwrap_or_else(|_| Err(io::Error::other("the MCP reply pump panicked")));
            let read = reader.join().unwrap_or_else(|_| Err(io::Error::other("the MCP request pump panicked")));
            served.and(read).and(wrote)
        });
        // A tool call still in flight on the blocking pool (the client hung
        // up mid-call) must not keep the adapter alive after the session.
        runtime.shutdown_background();
        outcome
    }

    async fn run<R, W>(&self, input: R, output: W) -> io::Result<()>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let running = match rmcp::serve_server(self.handler.clone(), (input, output)).await {
            Ok(running) => running,
            // The client left before initializing: nothing to serve, not a failure.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(io::Error::other(e)),
        };
        match running.waiting().await {
            Ok(QuitReason::JoinError(e)) | Err(e) => Err(io::Error::other(e)),
            // Closed (stdin hit EOF) or cancelled: the session simply ended.
            Ok(_) => Ok(()),
        }
    }
}

/// Renders an operation's value as MCP content: a PNG value (`{mimeType:
/// "image/…", data}`) becomes an image block plus its remaining fields as
/// JSON text, anything else JSON text.
fn tool_result(value: Value) -> CallToolResult {
    let image = value
        .get("mimeType")
        .and_then(Value::as_str)
        .filter(|m| m.starts_with("image/"))
        .zip(value.get("data").and_then(Value::as_str))
        .map(|(mime, data)| (mime.to_owned(), data.to_owned()));
    if let Some((mime, data)) = image {
        let mut rest = value;
        if let Some(object) = rest.as_object_mut() {
            object.remove("data");
        }
        return CallToolResult::success(vec![ContentBlock::image(data, mime), ContentBlock::text(rest.to_string())]);
    }
    let text = match value {
        Value::String(text) => text,
        other => other.to_string(),
    };
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// Requests sent to rmcp and not yet answered, so the request pump can keep
/// requests in order and hold the pipe open at EOF until the last answer is out.
#[derive(Default)]
struct Pending {
    state: Mutex<PendingState>,
    changed: Condvar,
}

#[derive(Default)]
struct PendingState {
    unanswered: usize,
    server_gone: bool,
}

impl Pending {
    fn sent(&self) {
        self.state.lock().unanswered += 1;
    }

    /// Saturating: an error reply to a malformed line may answer something
    /// that was never counted, and undercounting only risks an early EOF,
    /// where overcounting would hang the adapter.
    fn answered(&self) {
        let mut state = self.state.lock();
        state.unanswered = state.unanswered.saturating_sub(1);
        self.changed.notify_all();
    }

    fn server_gone(&self) {
        self.state.lock().server_gone = true;
        self.changed.notify_all();
    }

    fn wait_until_answered(&self) {
        let mut state = self.state.lock();
        while state.unanswered > 0 && !state.server_gone {
            self.changed.wait(&mut state);
        }
    }
}

/// Copies `input` to rmcp line by line, a request only once the one before
/// it is answered, then closes the pipe once every request has been answered.
fn pump_requests(
    mut input: impl BufRead,
    mut to_server: WriteHalf<DuplexStream>,
    runtime: &Handle,
    pending: &Pending,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input.by_ref().take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // Skip the rest of the oversized line: it cannot be parsed, and
            // rmcp, like the other SDKs, ignores what it cannot parse.
            input.skip_until(b'\n')?;
            tracing::warn!("ignoring an MCP message over {MAX_LINE} bytes");
            continue;
        }
        let (message, is_request) = prepare(&line);
        if is_request {
            // One request at a time, as this adapter has always served them:
            // rmcp would run them concurrently and answer out of order, and
            // the tool server's operations are meant to apply in the order the
            // agent issued them. Notifications (a cancel, say) still go
            // straight through.
            pending.wait_until_answered();
            pending.sent();
        }
        let forwarded = runtime.block_on(async {
            to_server.write_all(&message).await?;
            to_server.write_all(b"\n").await?;
            to_server.flush().await
        });
        if forwarded.is_err() {
            // rmcp has stopped reading: the session is over, and its own
            // outcome says why.
            return Ok(());
        }
    }
    pending.wait_until_answered();
    // Only an already-closed pipe can fail here, which is the goal anyway.
    let _ = runtime.block_on(to_server.shutdown());
    Ok(())
}

/// Copies rmcp's replies to `output`, counting answers for [`Pending`]. After
/// a write error it keeps draining so rmcp never blocks on a full pipe, and
/// reports the error once the session ends.
fn pump_replies(
    from_server: ReadHalf<DuplexStream>,
    mut output: impl Write,
    runtime: &Handle,
    pending: &Pending,
) -> io::Result<()> {
    let mut replies = tokio::io::BufReader::new(from_server);
    let mut line = Vec::new();
    let mut failure = None;
    loop {
        line.clear();
        if runtime.block_on(replies.read_until(b'\n', &mut line))? == 0 {
            break;
        }
        if failure.is_none() {
            if let Err(e) = output.write_all(&line).and_then(|()| output.flush()) {
                failure = Some(e);
            }
        }
        let is_answer = serde_json::from_slice::<Value>(&line).is_ok_and(|reply| {
            reply.get("method").is_none() && (reply.get("result").is_some() || reply.get("error").is_some())
        });
        if is_answer {
            pending.answered();
        }
    }
    failure.map_or(Ok(()), Err)
}

/// The line to hand rmcp for `line`, and whether it is a request (a reply is
/// owed). An `initialize` gets the fields rmcp requires and older clients of
/// this adapter omit: an empty `capabilities`, an anonymous `clientInfo` and,
/// as before, the newest revision `initialize` serves when none is named. Anything else,
/// junk included, passes through for rmcp to judge.
fn prepare(line: &[u8]) -> (Vec<u8>, bool) {
    let raw = line.strip_suffix(b"\n").unwrap_or(line).to_vec();
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(&raw) else {
        return (raw, false);
    };
    let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
    let is_request = method.is_some() && message.get("id").is_some_and(|id| !id.is_null());
    if method.as_deref() != Some("initialize") {
        return (raw, is_request);
    }
    let params = message.entry("params").or_insert_with(|| json!({}));
    if let Some(params) = params.as_object_mut() {
        params.entry("protocolVersion").or_insert_with(|| json!(ProtocolVersion::LATEST_WITH_INITIALIZE.to_string()));
        params.entry("capabilities").or_insert_with(|| json!({}));
        params.entry("clientInfo").or_insert_with(|| json!({"name": "unknown", "version": ""}));
    }
    match serde_json::to_vec(&message) {
        Ok(prepared) => (prepared, is_request),
        Err(_) => (raw, is_request),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread::JoinHandle;

    /// Records calls and answers from a script, at the ToolCaller boundary.
    #[derive(Default)]
    struct Recorder {
        calls: Mutex<Vec<(String, Value)>>,
    }

    impl ToolCaller for Recorder {
        fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError> {
            self.calls.lock().push((operation.to_owned(), args.clone()));
            match operation {
                "browser_screenshot" => Ok(json!({"mimeType": "image/png", "data": "iVBOR", "width": 2})),
                "terminal_close" => Err(ClientError::Refused {
                    status: 400,
                    message: "Enable agent browser control".into(),
                    code: Some("browser_disabled".into()),
                }),
                _ => Ok(json!({"op": operation, "args": args})),
            }
        }
    }

    /// A client speaking raw lines to [`McpServer::serve`] running on its
    /// own thread over OS pipes, so the tests see exactly what goes over the wire.
    struct Session {
        server: McpServer<Recorder>,
        input: io::PipeWriter,
        output: io::BufReader<io::PipeReader>,
        thread: JoinHandle<io::Result<()>>,
    }

    impl Session {
        fn start(adapter: Option<&str>) -> Session {
            let server = McpServer::new(Recorder::default(), adapter.map(str::to_owned));
            let (server_input, input) = io::pipe().unwrap();
            let (output, server_output) = io::pipe().unwrap();
            let serving = server.clone();
            let thread = std::thread::spawn(move || serving.serve(io::BufReader::new(server_input), server_output));
            Session { server, input, output: io::BufReader::new(output), thread }
        }

        fn send(&mut self, line: &[u8]) {
            self.input.write_all(line).unwrap();
            self.input.write_all(b"\n").unwrap();
            self.input.flush().unwrap();
        }

        fn reply(&mut self) -> Value {
            let mut line = String::new();
            self.output.read_line(&mut line).unwrap();
            serde_json::from_str(&line).unwrap()
        }

        fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            self.send(message.to_string().as_bytes());
            let reply = self.reply();
            assert_eq!(reply["id"], id, "{reply}");
            reply
        }

        fn initialize(&mut self) -> Value {
            self.request(
                0,
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                }),
            )
        }

        fn calls(&self) -> Vec<(String, Value)> {
            self.server.handler.backend.caller.calls.lock().clone()
        }

        /// Closes the client's end and checks the server ends cleanly,
        /// with nothing left unsaid.
        fn finish(mut self) {
            drop(self.input);
            let mut rest = String::new();
            self.output.read_to_string(&mut rest).unwrap();
            assert_eq!(rest, "");
            self.thread.join().unwrap().unwrap();
        }
    }

    fn init_params(version: &str) -> Value {
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        })
    }

    #[test]
    fn initialize_negotiates_and_announces_the_adapter() {
        let mut session = Session::start(Some("claude-mcp"));
        let reply = session.request(1, "initialize", init_params("2025-03-26"));
        assert_eq!(reply["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(reply["result"]["serverInfo"]["name"], "termsprawl");
        assert!(reply["result"]["capabilities"]["tools"].is_object());
        assert_eq!(
            session.calls(),
            vec![("session_info".to_owned(), json!({"adapter": "claude-mcp"}))],
            "announced before initialize returned"
        );
        session.finish();

        let mut session = Session::start(None);
        let reply = session.request(2, "initialize", init_params("1999-01-01"));
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "the newest revision with initialize");
        assert!(session.calls().is_empty(), "no adapter, no announcement");
        session.finish();
    }

    fn modern_meta(version: &str) -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        })
    }

    #[test]
    fn initialize_serves_2025_11_25_and_every_older_revision() {
        for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
            let mut session = Session::start(None);
            let reply = session.request(1, "initialize", init_params(version));
            assert_eq!(reply["result"]["protocolVersion"], version);
            session.finish();
        }
        // 2026-07-28 has no initialize: a client naming it there gets the newest that has one.
        let mut session = Session::start(None);
        let reply = session.request(1, "initialize", init_params("2026-07-28"));
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
        session.finish();
    }

    #[test]
    fn revision_2026_07_28_discovers_then_serves_requests_with_meta() {
        let mut session = Session::start(Some("claude-mcp"));
        let reply = session.request(1, "server/discover", json!({"_meta": modern_meta("2026-07-28")}));
        let versions = reply["result"]["supportedVersions"].as_array().unwrap();
        let served: Vec<String> = PROTOCOL_VERSIONS.iter().map(ToString::to_string).collect();
        assert_eq!(versions.len(), served.len(), "{reply}");
        assert!(versions.iter().all(|v| served.contains(&v.as_str().unwrap().to_owned())), "{reply}");
        assert!(reply["result"]["capabilities"]["tools"].is_object(), "{reply}");

        // The version is checked on every request, with the spec's error.
        let reply = session.request(2, "tools/list", json!({"_meta": modern_meta("2099-01-01")}));
        assert_eq!(reply["error"]["code"], -32022, "{reply}");

        let reply = session.request(3, "tools/list", json!({"_meta": modern_meta("2026-07-28")}));
        assert_eq!(reply["result"]["tools"].as_array().unwrap().len(), Operation::ALL.len(), "{reply}");
        let reply = session.request(
            4,
            "tools/call",
            json!({"name": "terminal_close", "arguments": {"nodeId": "t"}, "_meta": modern_meta("2026-07-28")}),
        );
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        let reply = session.request(
            5,
            "tools/call",
            json!({"name": "rm_rf", "arguments": {}, "_meta": modern_meta("2026-07-28")}),
        );
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        // No initialize: the adapter was announced at discover, once.
        assert_eq!(
            session.calls(),
            vec![
                ("session_info".to_owned(), json!({"adapter": "claude-mcp"})),
                ("terminal_close".to_owned(), json!({"nodeId": "t"})),
            ]
        );
        session.finish();
    }

    #[test]
    fn lists_the_catalogue() {
        let mut session = Session::start(None);
        session.initialize();
        let reply = session.request(1, "tools/list", json!({}));
        let tools = reply["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), Operation::ALL.len());
        for (tool, spec) in tools.iter().zip(AGENT_TOOLS.iter()) {
            // Every entry goes out exactly as the catalogue publishes it.
            assert_eq!(tool, &serde_json::to_value(spec).unwrap());
        }
        assert_eq!(tools[0]["inputSchema"]["additionalProperties"], false);
        session.finish();
    }

    #[test]
    fn forwards_calls_and_maps_results() {
        let mut session = Session::start(None);
        session.initialize();
        let reply = session.request(3, "tools/call", json!({"name": "canvas_list", "arguments": {}}));
        assert_eq!(reply["result"]["isError"], false);
        let text: Value = serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["op"], "canvas_list");

        let reply =
            session.request(4, "tools/call", json!({"name": "browser_screenshot", "arguments": {"nodeId": "b"}}));
        assert_eq!(reply["result"]["content"][0], json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"}));
        let rest: Value = serde_json::from_str(reply["result"]["content"][1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(rest, json!({"mimeType": "image/png", "width": 2}));

        let reply = session.request(5, "tools/call", json!({"name": "terminal_close", "arguments": {"nodeId": "t"}}));
        assert_eq!(reply["result"]["isError"], true);
        assert_eq!(reply["result"]["content"][0]["text"], "Enable agent browser control");
        assert_eq!(
            reply["result"]["structuredContent"],
            json!({"error": "Enable agent browser control", "code": "browser_disabled"})
        );

        let reply = session.request(6, "tools/call", json!({"name": "rm_rf"}));
        assert_eq!(reply["error"]["code"], -32602);
        let calls = session.calls();
        assert_eq!(calls.len(), 3, "unknown tools are not forwarded");
        assert_eq!(calls[1], ("browser_screenshot".to_owned(), json!({"nodeId": "b"})));
        session.finish();
    }

    #[test]
    fn skips_notifications_and_junk_and_rejects_unknown_methods() {
        let mut session = Session::start(None);
        session.initialize();
        // None of these gets a reply (rmcp, like the other official SDKs,
        // ignores unparsable lines rather than answering them), and none ends
        // the session: the next reply read is the ping's.
        session.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        session.send(b"");
        session.send(b"not json");
        session.send(b"\xff\xfe");
        let reply = session.request(7, "ping", json!({}));
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
        let reply = session.request(9, "resources/list", json!({}));
        assert_eq!(reply["error"]["code"], -32601);
        session.finish();
    }
}
