//! The HTTP transport on 127.0.0.1 with a bearer token: `POST /call`
//! (operations), `POST /hook` (an agent CLI's hook reports, see
//! [`crate::hook`]) and MCP over streamable HTTP at `/mcp` (`mcp_http`). It
//! refuses browsers (any `Origin` on `/call` and `/hook`; on `/mcp` any but
//! our own, as MCP requires), DNS rebinding (a `Host` other than our own
//! loopback authority), a query string (so a token is never taken from a
//! URL), oversized bodies and slow clients before the invoke path sees a byte
//! of the body.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::answer::success_body;
use crate::config::ServerConfig;
use crate::error::ErrorCode;
use crate::hook::HookReport;
use crate::invoke::Invoker;
use crate::mcp_http::{self, McpEndpoint, ResponseBody};
use crate::sessions::ToolSession;

/// What every connection shares.
pub(crate) struct HttpState {
    pub(crate) invoker: Arc<Invoker>,
    pub(crate) port: u16,
    pub(crate) config: ServerConfig,
    pub(crate) mcp: Arc<McpEndpoint>,
}

/// What a request is for, by path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    /// `POST /call`: one operation, `{ok, value}` back.
    Call,
    /// `POST /hook`: one hook report.
    Hook,
    /// `/mcp`: MCP over streamable HTTP (rmcp answers methods it does not serve).
    Mcp,
}

/// The operations path.
const CALL_PATH: &str = "/call";
/// The hook reports path.
const HOOK_PATH: &str = "/hook";
/// MCP over streamable HTTP.
const MCP_PATH: &str = "/mcp";
/// The 403 message, deliberately uninformative.
const UNSUPPORTED: &str = "Unsupported request";

/// Accepts connections until `shutdown` flips; connection tasks stop with it.
pub(crate) async fn serve(listener: std::net::TcpListener, state: Arc<HttpState>, mut shutdown: watch::Receiver<bool>) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => {
            tracing::error!(error = %e, "tool server cannot register its listener");
            return;
        }
    };
    let slots = conn_slots::Slots::new(state.config.max_connections);
    loop {
        let accepted = tokio::select! {
            _ = shutdown.changed() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                // Typically EMFILE; back off instead of spinning.
                tracing::warn!(error = %e, "tool server accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // At the cap, the connection idle the longest makes way: a slowloris
        // flood cannot lock real clients out, and memory stays bounded.
        let slot = match slots.admit() {
            Ok(slot) => Arc::new(slot),
            Err(e) => {
                tracing::warn!(error = %e, "tool server connection limit reached; closing new connection");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        let mut stop = shutdown.clone();
        tokio::spawn(async move {
            let timeout = state.config.request_timeout;
            // One 15 s budget covers a request's headers AND body: it starts when
            // the connection begins waiting for that request (accept, or the
            // previous response), which is also when hyper's header timer starts.
            let waiting_since = Arc::new(std::sync::Mutex::new(Instant::now()));
            let request_slot = Arc::clone(&slot);
            let service = service_fn(move |request| {
                let started = waiting_since.lock().map(|g| *g).unwrap_or_else(|e| *e.into_inner());
                handle(Arc::clone(&state), request, started, Arc::clone(&waiting_since), Arc::clone(&request_slot))
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                // Also bounds how long an idle keep-alive connection may sit.
                .header_read_timeout(timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                result = connection => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "tool server connection ended");
                    }
                }
                _ = stop.changed() => {}
                _ = slot.evicted() => tracing::debug!("idle tool server connection evicted for a new one"),
            }
        });
    }
}

async fn handle(
    state: Arc<HttpState>,
    request: Request<Incoming>,
    started: Instant,
    waiting_since: Arc<std::sync::Mutex<Instant>>,
    slot: Arc<conn_slots::Slot>,
) -> Result<Response<ResponseBody>, Infallible> {
    slot.busy();
    let response = respond(&state, request, started).await;
    slot.idle();
    tracing::debug!(status = response.status().as_u16(), "tool server response");
    // The next request on this connection gets its budget from now.
    match waiting_since.lock() {
        Ok(mut g) => *g = Instant::now(),
        Err(e) => *e.into_inner() = Instant::now(),
    }
    Ok(response)
}

async fn respond(state: &HttpState, request: Request<Incoming>, started: Instant) -> Response<ResponseBody> {
    let Some(route) = route(&request, state.port) else {
        return reply(StatusCode::FORBIDDEN, failure(ErrorCode::Unsupported, UNSUPPORTED), false);
    };
    let Some(session) = authenticate(&request, state) else {
        return reply(StatusCode::UNAUTHORIZED, failure(ErrorCode::Unauthorized, "Unknown or revoked session"), false);
    };
    // Headers and body share one budget, counted from when the request could start.
    let deadline = started + state.config.request_timeout;
    let (parts, body) = request.into_parts();
    let limit = state.config.max_body_bytes;
    let body = match (read_body(body, limit, deadline).await, route) {
        (Ok(body), _) => body,
        (Err(e), Route::Call | Route::Hook) => {
            return reply(StatusCode::BAD_REQUEST, failure(e.code(), &e.message(limit)), true)
        }
        (Err(e), Route::Mcp) => {
            let mut response = mcp_http::error_response(e.status(), &e.message(limit));
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    if route == Route::Hook {
        return hook(state, &session, &body);
    }
    if route == Route::Mcp {
        return state.mcp.handle(Request::from_parts(parts, Full::new(body)), session).await;
    }
    let raw: Value = match serde_json::from_slice(&body) {
        Ok(raw) => raw,
        Err(_) => {
            return reply(
                StatusCode::BAD_REQUEST,
                failure(ErrorCode::InvalidRequest, "Request body must be JSON"),
                false,
            )
        }
    };
    call(state, &session, &raw).await
}

async fn call(state: &HttpState, session: &Arc<ToolSession>, raw: &Value) -> Response<ResponseBody> {
    match state.invoker.invoke(session, raw).await {
        Ok(answer) => match success_body(&answer) {
            Ok(body) => reply(StatusCode::OK, Bytes::from(body), false),
            Err(e) => {
                // Unreachable for JSON values and the typed answers; never a panic.
                tracing::error!(error = %e, "could not serialize a tool answer");
                reply(StatusCode::BAD_REQUEST, failure(ErrorCode::Failed, "The answer could not be encoded"), false)
            }
        },
        Err(e) => {
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            reply(status, failure(e.code(), &e.to_string()), false)
        }
    }
}

/// A hook report: typed from the body, then handed to the host (never queued behind operations).
fn hook(state: &HttpState, session: &Arc<ToolSession>, body: &[u8]) -> Response<ResponseBody> {
    let Ok(report) = serde_json::from_slice::<HookReport>(body) else {
        let message = "A hook report is {\"agent\", \"event\"[, \"detail\", \"title\"]}";
        return reply(StatusCode::BAD_REQUEST, failure(ErrorCode::InvalidRequest, message), false);
    };
    match state.invoker.report_hook(session, report) {
        Ok(()) => reply(StatusCode::OK, Bytes::from_static(b"{\"ok\":true,\"value\":null}"), false),
        Err(e) => {
            let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            reply(status, failure(e.code(), &e.to_string()), false)
        }
    }
}

/// Method, path, `Origin` and `Host` checks: the route, or `None` for 403.
fn route(request: &Request<Incoming>, port: u16) -> Option<Route> {
    let uri = request.uri();
    if uri.scheme().is_some() || uri.authority().is_some() || uri.query().is_some() {
        return None;
    }
    let route = match uri.path() {
        CALL_PATH if request.method() == Method::POST => Route::Call,
        HOOK_PATH if request.method() == Method::POST => Route::Hook,
        MCP_PATH => Route::Mcp,
        _ => return None,
    };
    // Browsers always send Origin on cross-origin requests; agents never do,
    // though MCP clients may send ours, which the MCP spec says to accept
    // (no page is served from this origin). A rebinding page's requests carry
    // its own domain as Host.
    let headers = request.headers();
    let origin_allowed =
        !local_guard::from_browser(headers) || (route == Route::Mcp && local_guard::own_loopback_origin(headers, port));
    (origin_allowed && local_guard::host_allowed(headers, port)).then_some(route)
}

/// Finds the session for `Authorization: Bearer <token>`.
fn authenticate(request: &Request<Incoming>, state: &HttpState) -> Option<Arc<ToolSession>> {
    let mut values = request.headers().get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return None;
    };
    let value = value.as_bytes();
    let scheme = value.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    state.invoker.sessions.authenticate(&value[7..])
}

/// Why a body was not read.
#[derive(Debug, Clone, Copy)]
enum BodyError {
    /// Over the cap, by its declared length or as read.
    TooLarge,
    /// The connection failed mid-body.
    Unreadable,
    /// The deadline passed first.
    TimedOut,
}

impl BodyError {
    fn code(self) -> ErrorCode {
        match self {
            BodyError::TooLarge | BodyError::Unreadable => ErrorCode::InvalidRequest,
            BodyError::TimedOut => ErrorCode::Timeout,
        }
    }

    /// The status `/mcp` answers with (`/call` has always answered 400).
    fn status(self) -> StatusCode {
        match self {
            BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Unreadable => StatusCode::BAD_REQUEST,
            BodyError::TimedOut => StatusCode::REQUEST_TIMEOUT,
        }
    }

    fn message(self, limit: usize) -> String {
        match self {
            BodyError::TooLarge => format!("Request body exceeds {limit} bytes"),
            BodyError::Unreadable => "Could not read request body".to_owned(),
            BodyError::TimedOut => "Request timed out".to_owned(),
        }
    }
}

/// Reads the body, refusing it by its declared length before reading a byte,
/// cutting chunked bodies off at the cap, and giving up at `deadline`.
async fn read_body(mut body: Incoming, limit: usize, deadline: Instant) -> Result<Bytes, BodyError> {
    if body.size_hint().lower() > limit as u64 {
        return Err(BodyError::TooLarge);
    }
    let collect = async {
        let mut buffer = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Unreadable)?;
            if let Ok(data) = frame.into_data() {
                if buffer.len() + data.len() > limit {
                    return Err(BodyError::TooLarge);
                }
                buffer.extend_from_slice(&data);
            }
        }
        Ok(buffer.freeze())
    };
    match tokio::time::timeout_at(deadline, collect).await {
        Ok(result) => result,
        Err(_) => Err(BodyError::TimedOut),
    }
}

/// An error body: the message for the agent and its stable code.
fn failure(code: ErrorCode, message: &str) -> Bytes {
    Bytes::from(json!({"ok": false, "error": message, "code": code.as_str()}).to_string())
}

fn reply(status: StatusCode, body: Bytes, close: bool) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(body).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if close {
        // The rest of the body was not read; the connection cannot be reused.
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
