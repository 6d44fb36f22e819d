//! MCP over streamable HTTP at `/mcp`: rmcp's `StreamableHttpService` serving
//! the shared [`McpHandler`], behind every rule of the HTTP layer (`http`
//! checks Host and Origin, the bearer token, the body cap and the deadline
//! before a request gets here). Tool calls go through the same
//! [`Invoker::invoke`] as `POST /call`: one path, the same validation and
//! project queue.
//!
//! What rmcp cannot know, and this module adds, is whose a session is.
//! Revisions before 2026-07-28 get an `Mcp-Session-Id` at `initialize`; it is
//! bound to the bearer token that created it. Any other token naming it gets
//! 404, like an unknown session, and once that token is revoked or replaced
//! the session is closed (its requests already fail 401 at the HTTP layer).
//! 2026-07-28 has no sessions: rmcp serves each of its requests on its own.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use parking_lot::Mutex;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};

use crate::error::ErrorCode;
use crate::invoke::Invoker;
use crate::mcp::{McpBackend, McpHandler, ToolFailure};
use crate::operation::Operation;
use crate::sessions::ToolSession;

/// A response body: rmcp's (JSON or an SSE stream), or one of ours.
pub(crate) type ResponseBody = BoxBody<Bytes, Infallible>;

/// The header naming a session (pre-2026-07-28 revisions).
const SESSION_HEADER: &str = "mcp-session-id";
/// How long a session may sit unused before rmcp closes it. Agents idle for
/// long stretches while they think; a closed session costs them a new
/// `initialize` (clients re-initialize on 404), never a lost call.
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// The `/mcp` endpoint: rmcp's service plus the session→token bindings.
pub(crate) struct McpEndpoint {
    service: StreamableHttpService<McpHandler<InvokeBackend>, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    invoker: Arc<Invoker>,
    /// Each live session id and the tool session (token) that created it.
    owners: Mutex<HashMap<SessionId, Arc<ToolSession>>>,
}

impl McpEndpoint {
    /// An endpoint whose tool calls run through `invoker`.
    pub(crate) fn new(invoker: Arc<Invoker>, max_body_bytes: usize) -> McpEndpoint {
        let handler = McpHandler { backend: Arc::new(InvokeBackend { invoker: Arc::clone(&invoker) }) };
        let mut manager = LocalSessionManager::default();
        manager.session_config = {
            let mut config = SessionConfig::default();
            config.keep_alive = Some(SESSION_IDLE);
            config
        };
        let manager = Arc::new(manager);
        // rmcp's own Host check (loopback names) stays on beneath ours, which
        // also pins the port; the body was already read under the same cap.
        let config = StreamableHttpServerConfig::default().with_max_request_body_bytes(max_body_bytes);
        let service = StreamableHttpService::new(move || Ok(handler.clone()), Arc::clone(&manager), config);
        McpEndpoint { service, manager, invoker, owners: Mutex::new(HashMap::new()) }
    }

    /// Serves one request for the authenticated `session`.
    pub(crate) async fn handle(
        &self,
        mut request: Request<Full<Bytes>>,
        session: Arc<ToolSession>,
    ) -> Response<ResponseBody> {
        self.close_orphans().await;
        let claimed =
            request.headers().get(SESSION_HEADER).map(|v| SessionId::from(String::from_utf8_lossy(v.as_bytes())));
        if let Some(id) = &claimed {
            let owned = self.owners.lock().get(id).is_some_and(|owner| owner.token == session.token);
            if !owned {
                // Unknown, closed, or another token's: all look the same.
                return error_response(StatusCode::NOT_FOUND, "Session not found");
            }
        }
        let deleting = request.method() == Method::DELETE;
        // The handler finds the caller here (rmcp hands each request's parts to it).
        request.extensions_mut().insert(Arc::clone(&session));
        let mut response = self.service.handle(request).await;
        if deleting && response.status() == StatusCode::ACCEPTED {
            // rmcp answers a session's DELETE 202; clients (the Python SDK)
            // take only 200 or 204 as "terminated". Delete once rmcp does.
            *response.status_mut() = StatusCode::OK;
        }
        if claimed.is_none() {
            if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
                self.owners.lock().insert(SessionId::from(id), session);
            }
        }
        response
    }

    /// Closes every session whose token is no longer its node's live token
    /// (revoked or replaced), and forgets sessions rmcp has already closed.
    pub(crate) async fn close_orphans(&self) {
        let orphans: Vec<SessionId> = {
            let mut owners = self.owners.lock();
            let sessions = &self.invoker.sessions;
            let orphans = owners
                .iter()
                .filter(|(_, owner)| !sessions.is_current(&owner.identity.node_id, &owner.token))
                .map(|(id, _)| SessionId::clone(id))
                .collect();
            for id in &orphans {
                owners.remove(id);
            }
            orphans
        };
        for id in orphans {
            tracing::debug!("closing an MCP session whose token was revoked");
            if let Err(e) = self.manager.close_session(&id).await {
                tracing::debug!(error = %e, "MCP session already gone");
            }
        }
        // Only ids recorded before rmcp's list is read can be judged by it: an
        // id is recorded after rmcp created its session, so one missing from
        // the list was closed. One recorded meanwhile waits for the next sweep.
        let known: Vec<SessionId> = self.owners.lock().keys().cloned().collect();
        let live = self.manager.sessions.read().await;
        let closed: Vec<&SessionId> = known.iter().filter(|id| !live.contains_key(*id)).collect();
        let mut owners = self.owners.lock();
        for id in closed {
            owners.remove(id);
        }
    }
}

/// A JSON-RPC error body (no id: it answers no particular message) for the
/// refusals this layer and `http` make before rmcp sees a request.
pub(crate) fn error_response(status: StatusCode, message: &str) -> Response<ResponseBody> {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": message}});
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Tool calls for `/mcp`: straight into the invoke path as the session the
/// HTTP layer authenticated.
struct InvokeBackend {
    invoker: Arc<Invoker>,
}

impl McpBackend for InvokeBackend {
    async fn call(
        &self,
        operation: Operation,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ToolFailure> {
        let session = context.extensions.get::<Parts>().and_then(|parts| parts.extensions.get::<Arc<ToolSession>>());
        let Some(session) = session.cloned() else {
            // Only reachable if rmcp stopped passing the request's parts on.
            tracing::error!("an MCP request reached the handler without its session");
            return Err(ToolFailure {
                message: "Unknown or revoked session".to_owned(),
                code: Some(code(ErrorCode::Unauthorized)),
            });
        };
        let mut request = json!({ "operation": operation.name() });
        if !args.is_null() {
            request["args"] = args;
        }
        match self.invoker.invoke(&session, &request).await {
            Ok(answer) => serde_json::to_value(&answer).map_err(|e| ToolFailure {
                message: format!("The answer could not be encoded: {e}"),
                code: Some(code(ErrorCode::Failed)),
            }),
            Err(e) => Err(ToolFailure { message: e.to_string(), code: Some(code(e.code())) }),
        }
    }
}

fn code(code: ErrorCode) -> String {
    code.as_str().to_owned()
}
