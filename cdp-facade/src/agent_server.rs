//! The browser agent control server: the one state-changing entry point for
//! agents (`POST /open` opens a visible browser node), plus `GET /info` and
//! the `browser-agent.json` discovery file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, CONTENT_LENGTH};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use crate::discovery_file;
use crate::error::FacadeError;
use crate::guest::Guests;
use crate::http_access::{self, Body};
use crate::server_thread::{bind_loopback, ServerThread};
use local_guard::Token;

/// Name of the discovery file inside the data directory.
pub const DISCOVERY_FILE_NAME: &str = "browser-agent.json";
/// Largest accepted `POST /open` body; bigger ones get 413 without being read.
pub const MAX_OPEN_BODY_BYTES: usize = 256 * 1024;

/// Agent server settings.
#[derive(Clone, Debug)]
pub struct AgentServerConfig {
    /// Body cap for `POST /open`.
    pub max_body_bytes: usize,
}

impl Default for AgentServerConfig {
    fn default() -> Self {
        Self { max_body_bytes: MAX_OPEN_BODY_BYTES }
    }
}

struct State {
    token: Token,
    guests: Arc<dyn Guests>,
    port: u16,
    cdp_url: Option<String>,
    max_body_bytes: usize,
}

impl State {
    fn open_url(&self) -> String {
        format!("http://127.0.0.1:{}/open", self.port)
    }

    fn open_descriptor(&self) -> Value {
        json!({"method": "POST", "path": "/open", "url": self.open_url()})
    }
}

/// The running agent control server. Dropping it stops it and removes the discovery file.
pub struct AgentServer {
    server: ServerThread,
    file: PathBuf,
}

impl AgentServer {
    /// Binds 127.0.0.1 on a random port, writes `<data_dir>/browser-agent.json` (0600) and serves from a new thread.
    ///
    /// `cdp_url` is what `/info` and the file advertise as `cdp` (the facade's URL, or `None` when it is off).
    pub fn start(
        config: AgentServerConfig,
        token: Token,
        guests: Arc<dyn Guests>,
        data_dir: &Path,
        cdp_url: Option<String>,
    ) -> Result<Self, FacadeError> {
        let listener = bind_loopback()?;
        let port = listener.local_addr().map_err(FacadeError::Bind)?.port();
        let state = Arc::new(State { token, guests, port, cdp_url, max_body_bytes: config.max_body_bytes });
        let file = data_dir.join(DISCOVERY_FILE_NAME);
        let contents = json!({
            "port": port,
            "token": state.token.expose(),
            "cdp": state.cdp_url,
            "open": state.open_descriptor(),
        });
        discovery_file::write_private(&file, contents.to_string().as_bytes())?;
        let handler_state = state.clone();
        let handler = move |req: Request<Incoming>| {
            let state = handler_state.clone();
            async move { route(state, req).await }
        };
        let server = match ServerThread::spawn("browser-agent", listener, handler, Box::pin(async {})) {
            Ok(server) => server,
            Err(e) => {
                discovery_file::remove(&file);
                return Err(e);
            }
        };
        tracing::info!(port, "browser agent server listening on 127.0.0.1");
        Ok(Self { server, file })
    }

    /// The loopback port.
    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// Where the discovery file was written.
    pub fn discovery_file(&self) -> &Path {
        &self.file
    }

    /// Stops serving and removes the discovery file, so a stopped endpoint is never advertised.
    pub fn close(self) {}
}

impl Drop for AgentServer {
    fn drop(&mut self) {
        discovery_file::remove(&self.file);
        self.server.stop();
    }
}

async fn route(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    if !local_guard::host_allowed(req.headers(), state.port) {
        return http_access::json_error(StatusCode::FORBIDDEN, "forbidden host");
    }
    if !http_access::authorized(&state.token, req.headers(), req.uri(), false) {
        return http_access::json_error(StatusCode::UNAUTHORIZED, "unauthorized");
    }
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/info") => http_access::json(
            StatusCode::OK,
            &json!({"ok": true, "cdp": state.cdp_url, "open": state.open_descriptor()}),
        ),
        (&Method::POST, "/open") => open(&state, req).await,
        _ => http_access::json_error(StatusCode::NOT_FOUND, "not found"),
    }
}

fn too_large() -> Response<Body> {
    let mut response = http_access::json_error(StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
    // Close instead of draining the unread body.
    response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// What the body asks to open: `Ok(None)` for "nothing usable" (→ about:blank), `Err` for a present but non-string url.
fn requested_url(body: &Bytes) -> Result<Option<String>, ()> {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(body) else { return Ok(None) };
    match map.get("url") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
        Some(_) => Err(()),
    }
}

async fn open(state: &State, req: Request<Incoming>) -> Response<Body> {
    let declared = req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > state.max_body_bytes as u64) {
        return too_large();
    }
    let body = match Limited::new(req.into_body(), state.max_body_bytes).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Err(_) => return http_access::json_error(StatusCode::BAD_REQUEST, "could not read the request body"),
    };
    let raw = match requested_url(&body) {
        Ok(url) => url.unwrap_or_else(|| "about:blank".to_string()),
        Err(()) => return http_access::json_error(StatusCode::BAD_REQUEST, "denied url"),
    };
    let url = match state.guests.normalize_url(&raw) {
        Ok(url) => url,
        Err(_) => return http_access::json_error(StatusCode::BAD_REQUEST, "denied url"),
    };
    let guests = state.guests.clone();
    let target = url.clone();
    match tokio::task::spawn_blocking(move || guests.open(&target, None)).await {
        Ok(Ok(_)) => http_access::json(StatusCode::OK, &json!({"ok": true, "url": url})),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "POST /open: the app could not open a browser node");
            http_access::json_error(StatusCode::INTERNAL_SERVER_ERROR, "could not open a browser node")
        }
        Err(_) => http_access::json_error(StatusCode::INTERNAL_SERVER_ERROR, "could not open a browser node"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_url_rules() {
        let b = |s: &str| Bytes::from(s.to_string());
        assert_eq!(requested_url(&b("")), Ok(None));
        assert_eq!(requested_url(&b("{not json")), Ok(None));
        assert_eq!(requested_url(&b("[1]")), Ok(None));
        assert_eq!(requested_url(&b("{}")), Ok(None));
        assert_eq!(requested_url(&b(r#"{"url":"  "}"#)), Ok(None));
        assert_eq!(requested_url(&b(r#"{"url":" https://a.test/ "}"#)), Ok(Some("https://a.test/".into())));
        assert_eq!(requested_url(&b(r#"{"url":5}"#)), Err(()));
    }
}
