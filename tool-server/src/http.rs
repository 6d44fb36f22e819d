//! The HTTP transport: `POST /call` on 127.0.0.1 with a bearer token. It
//! refuses browsers (any `Origin`), DNS rebinding (a `Host` other than our
//! own loopback authority), oversized bodies and slow clients before the
//! invoke path sees a byte of the body.

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
use crate::invoke::Invoker;
use crate::sessions::ToolSession;

/// What every connection shares.
pub(crate) struct HttpState {
    pub(crate) invoker: Arc<Invoker>,
    pub(crate) port: u16,
    pub(crate) config: ServerConfig,
}

/// The only path served.
const CALL_PATH: &str = "/call";
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
) -> Result<Response<Full<Bytes>>, Infallible> {
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

async fn respond(state: &HttpState, request: Request<Incoming>, started: Instant) -> Response<Full<Bytes>> {
    if !supported(&request, state.port) {
        return reply(StatusCode::FORBIDDEN, failure(ErrorCode::Unsupported, UNSUPPORTED), false);
    }
    let Some(session) = authenticate(&request, state) else {
        return reply(StatusCode::UNAUTHORIZED, failure(ErrorCode::Unauthorized, "Unknown or revoked session"), false);
    };
    // Headers and body share one budget, counted from when the request could start.
    let deadline = started + state.config.request_timeout;
    let body = match read_body(request.into_body(), state.config.max_body_bytes, deadline).await {
        Ok(body) => body,
        Err((code, message)) => return reply(StatusCode::BAD_REQUEST, failure(code, &message), true),
    };
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

async fn call(state: &HttpState, session: &Arc<ToolSession>, raw: &Value) -> Response<Full<Bytes>> {
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

/// Method, path, `Origin` and `Host` checks.
fn supported(request: &Request<Incoming>, port: u16) -> bool {
    let uri = request.uri();
    if request.method() != Method::POST
        || uri.scheme().is_some()
        || uri.authority().is_some()
        || uri.path() != CALL_PATH
        || uri.query().is_some()
    {
        return false;
    }
    // Browsers always send Origin on cross-origin POSTs; agents never do. A
    // rebinding page's requests carry its own domain as Host.
    !local_guard::from_browser(request.headers()) && local_guard::host_allowed(request.headers(), port)
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

/// Reads the body, refusing it by its declared length before reading a byte,
/// cutting chunked bodies off at the cap, and giving up at `deadline`.
async fn read_body(mut body: Incoming, limit: usize, deadline: Instant) -> Result<Bytes, (ErrorCode, String)> {
    let too_large = || (ErrorCode::InvalidRequest, format!("Request body exceeds {limit} bytes"));
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let collect = async {
        let mut buffer = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| (ErrorCode::InvalidRequest, "Could not read request body".to_owned()))?;
            if let Ok(data) = frame.into_data() {
                if buffer.len() + data.len() > limit {
                    return Err(too_large());
                }
                buffer.extend_from_slice(&data);
            }
        }
        Ok(buffer.freeze())
    };
    match tokio::time::timeout_at(deadline, collect).await {
        Ok(result) => result,
        Err(_) => Err((ErrorCode::Timeout, "Request timed out".to_owned())),
    }
}

/// An error body: the message for the agent and its stable code.
fn failure(code: ErrorCode, message: &str) -> Bytes {
    Bytes::from(json!({"ok": false, "error": message, "code": code.as_str()}).to_string())
}

fn reply(status: StatusCode, body: Bytes, close: bool) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
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
