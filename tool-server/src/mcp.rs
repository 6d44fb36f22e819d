//! The catalogue as an MCP server over stdio, for `termsprawl-ctl mcp`, built
//! on the `rmcp` SDK: `tools/list` publishes [`AGENT_TOOLS`] and `tools/call`
//! forwards to the tool server through a [`ToolCaller`].

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, LazyLock};

use parking_lot::{Condvar, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{QuitReason, RequestContext, RoleServer, ServerInitializeError};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::runtime::Handle;

use crate::catalogue::AGENT_TOOLS;
use crate::client::{ClientError, ToolClient};
use crate::operation::Operation;

/// MCP protocol revisions this adapter speaks, newest first. Pinned rather
/// than rmcp's full list so a client is only ever offered revisions this
/// adapter has been tested against; an unknown request falls back to the first.
const PROTOCOL_VERSIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_03_26, ProtocolVersion::V_2024_11_05];

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
static MCP_TOOLS: LazyLock<Result<Vec<Tool>, String>> = LazyLock::new(|| {
    AGENT_TOOLS
        .iter()
        .map(|spec| {
            serde_json::to_value(spec)
                .and_then(serde_json::from_value::<Tool>)
                .map_err(|e| format!("catalogue entry is not an MCP tool: {e}"))
        })
        .collect()
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

/// The MCP stdio adapter: an rmcp [`ServerHandler`] forwarding to a
/// [`ToolCaller`]. Cloning shares the caller.
#[derive(Debug)]
pub struct McpServer<C> {
    shared: Arc<Shared<C>>,
}

/// The state every clone of an [`McpServer`] shares.
#[derive(Debug)]
struct Shared<C> {
    caller: C,
    adapter: Option<String>,
}

impl<C> Clone for McpServer<C> {
    fn clone(&self) -> Self {
        McpServer { shared: Arc::clone(&self.shared) }
    }
}

impl<C: ToolCaller + Send + Sync + 'static> McpServer<C> {
    /// An adapter forwarding to `caller`. With `adapter` (`claude-mcp`,
    /// `codex-mcp`), `initialize` reports it through `session_info`, which
    /// marks the session connected.
    pub fn new(caller: C, adapter: Option<String>) -> Self {
        McpServer { shared: Arc::new(Shared { caller, adapter }) }
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
        let running = match rmcp::serve_server(self.clone(), (input, output)).await {
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

    /// Calls the tool server off the async runtime: [`ToolCaller`] blocks on
    /// HTTP, which would otherwise stall the transport (and `ping`) meanwhile.
    /// The error is the message the agent gets to read, with the server's
    /// error code when it sent one.
    async fn call(&self, operation: String, args: Value) -> Result<Value, (String, Option<String>)> {
        let shared = Arc::clone(&self.shared);
        match tokio::task::spawn_blocking(move || shared.caller.call(&operation, args)).await {
            Ok(outcome) => outcome.map_err(|e| {
                let code = match &e {
                    ClientError::Refused { code, .. } => code.clone(),
                    _ => None,
                };
                (e.to_string(), code)
            }),
            Err(e) => Err((format!("the tool call was aborted: {e}"), None)),
        }
    }
}

impl<C: ToolCaller + Send + Sync + 'static> ServerHandler for McpServer<C> {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = PROTOCOL_VERSIONS[0].clone();
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
        // Announced before the reply, so the canvas shows the session as
        // connected by the time the agent's client sees `initialize` succeed.
        if let Some(adapter) = self.shared.adapter.clone() {
            let announced = self.call(Operation::SessionInfo.name().to_owned(), json!({ "adapter": adapter })).await;
            if let Err((e, _)) = announced {
                tracing::warn!(error = %e, "could not announce the MCP adapter to the tool server");
            }
        }
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        match &*MCP_TOOLS {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools.clone())),
            Err(message) => Err(ErrorData::internal_error(message.clone(), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.into_owned();
        // Unknown names never reach the tool server: they are a malformed
        // request, not a tool failure.
        if Operation::from_name(&name).is_none() {
            return Err(ErrorData::invalid_params(format!("Unknown tool: {}", name.escape_debug()), None));
        }
        let args = request.arguments.map_or(Value::Null, Value::Object);
        let result = match self.call(name, args).await {
            Ok(value) => tool_result(value),
            // A refusal or an unreachable server is the agent's to read, so it
            // is a tool error carrying the server's message, not a protocol error.
            // The code rides along as structured content, beside the same text.
            Err((message, code)) => {
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
/// as before, the newest protocol revision when none is named. Anything else,
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
        params.entry("protocolVersion").or_insert_with(|| json!(PROTOCOL_VERSIONS[0].to_string()));
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
            self.server.shared.caller.calls.lock().clone()
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
        assert_eq!(reply["result"]["protocolVersion"], PROTOCOL_VERSIONS[0].to_string());
        assert!(session.calls().is_empty(), "no adapter, no announcement");
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
