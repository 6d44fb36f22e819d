//! A small blocking client for `POST /call` and `POST /hook`, used by
//! `termsprawl-ctl` (the CLI fallback, the MCP adapter and `hook`), so the
//! wire format stays in this crate.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use thiserror::Error;

use local_guard::files::{self, FileError};
use local_guard::{InvalidToken, Token};

use crate::endpoint::{Endpoint, ENDPOINT_FILE};
use crate::hook::HookReport;
use crate::sessions::{session_file_name, valid_node_id, StoredSession, ToolIdentity, SESSIONS_DIR};

/// Largest response the client accepts (screenshots are the big ones).
const MAX_RESPONSE: u64 = 64 * 1024 * 1024;
/// How long a hook report waits to connect (a closed app refuses at once; a hung one does not).
pub const HOOK_CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// How long a hook report may take in all, per read or write.
pub const HOOK_TIMEOUT: Duration = Duration::from_millis(700);

/// A failure calling the tool server.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The endpoint URL is not `http://127.0.0.1:<port>` (or `localhost`, `[::1]`).
    #[error("invalid tool endpoint {0:?}")]
    BadEndpoint(String),
    /// endpoint.json or the session file is missing, or the node id invalid.
    #[error("{0}")]
    Setup(String),
    /// endpoint.json or the session file is not the JSON it should be.
    #[error("{file} is malformed: {source}")]
    Malformed {
        /// The file's name.
        file: String,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
    /// The session file's token is not a token.
    #[error("session file holds a malformed token")]
    BadToken(#[source] InvalidToken),
    /// Reading a state file failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// The connection failed.
    #[error("tool server unreachable: {0}")]
    Io(#[from] io::Error),
    /// The server answered with `{ok:false, error, code}`.
    #[error("{message}")]
    Refused {
        /// The HTTP status (400, 401, 403).
        status: u16,
        /// The server's error message.
        message: String,
        /// The body's stable error code (`refused`, `busy`, …), when it has one.
        code: Option<String>,
    },
    /// The response was not the expected JSON envelope.
    #[error("malformed response from tool server: {0}")]
    Protocol(String),
    /// A hook report could not be encoded as JSON (said as it always was).
    #[error("malformed response from tool server: {0}")]
    Encode(#[source] serde_json::Error),
}

/// A connection recipe for one agent session.
#[derive(Debug, Clone)]
pub struct ToolClient {
    address: SocketAddr,
    host: String,
    token: Token,
    identity: Option<ToolIdentity>,
    timeout: Duration,
}

impl ToolClient {
    /// A client for `url` (as in `endpoint.json`) with `token`.
    pub fn new(url: &str, token: Token) -> Result<ToolClient, ClientError> {
        let authority = url.strip_prefix("http://").map(|rest| rest.trim_end_matches('/'));
        let authority = authority.ok_or_else(|| ClientError::BadEndpoint(url.to_owned()))?;
        let (host, port) = authority.rsplit_once(':').ok_or_else(|| ClientError::BadEndpoint(url.to_owned()))?;
        let port: u16 = port.parse().map_err(|_| ClientError::BadEndpoint(url.to_owned()))?;
        // Loopback only: the token must never be sent anywhere else.
        let ip = match host {
            "127.0.0.1" | "localhost" => [127, 0, 0, 1].into(),
            "[::1]" => std::net::Ipv6Addr::LOCALHOST.into(),
            _ => return Err(ClientError::BadEndpoint(url.to_owned())),
        };
        Ok(ToolClient {
            address: SocketAddr::new(ip, port),
            host: authority.to_owned(),
            token,
            identity: None,
            // Queued operations wait for the ones ahead; be patient.
            timeout: Duration::from_secs(120),
        })
    }

    /// A client for `node_id` from the server's state directory
    /// (`agent-tools/`): the URL from `endpoint.json`, the token from
    /// `sessions/<nodeId>.json`.
    pub fn from_state_dir(agent_tools_dir: &Path, node_id: &str) -> Result<ToolClient, ClientError> {
        if !valid_node_id(node_id) {
            return Err(ClientError::Setup(format!("invalid node id {node_id:?}")));
        }
        let endpoint: Endpoint = read_json(agent_tools_dir, ENDPOINT_FILE, "the tool server is not running")?;
        let session: StoredSession = read_json(
            &agent_tools_dir.join(SESSIONS_DIR),
            &session_file_name(node_id),
            "no tool session for this node; launch the agent from termsprawl",
        )?;
        let token = Token::parse(&session.token).map_err(ClientError::BadToken)?;
        let mut client = ToolClient::new(&endpoint.url, token)?;
        client.identity = Some(session.identity);
        Ok(client)
    }

    /// The identity from the session file, when built by [`ToolClient::from_state_dir`].
    pub fn identity(&self) -> Option<&ToolIdentity> {
        self.identity.as_ref()
    }

    /// Overrides the overall I/O timeout (default 120 s).
    pub fn with_timeout(mut self, timeout: Duration) -> ToolClient {
        self.timeout = timeout;
        self
    }

    /// Calls `operation` with `args` (an object, or null for none) and returns
    /// its value, or the server's error message.
    pub fn call(&self, operation: &str, args: Value) -> Result<Value, ClientError> {
        let body = if args.is_null() {
            json!({"operation": operation}).to_string()
        } else {
            json!({"operation": operation, "args": args}).to_string()
        };
        self.post("/call", &body, self.timeout, self.timeout)
    }

    /// Sends one hook report (`POST /hook`). It gives up quickly — within
    /// [`HOOK_CONNECT_TIMEOUT`] when nothing listens, [`HOOK_TIMEOUT`] in all —
    /// because the agent's turn waits for its hook.
    pub fn report_hook(&self, report: &HookReport) -> Result<(), ClientError> {
        let body = serde_json::to_string(report).map_err(ClientError::Encode)?;
        self.post("/hook", &body, HOOK_CONNECT_TIMEOUT, HOOK_TIMEOUT).map(|_| ())
    }

    fn post(&self, path: &str, body: &str, connect: Duration, io: Duration) -> Result<Value, ClientError> {
        let mut stream = TcpStream::connect_timeout(&self.address, connect)?;
        stream.set_read_timeout(Some(io))?;
        stream.set_write_timeout(Some(io))?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.host,
            self.token.expose(),
            body.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_bytes())?;
        let mut response = Vec::new();
        stream.take(MAX_RESPONSE).read_to_end(&mut response)?;
        parse_response(&response)
    }
}

fn read_json<T: serde::de::DeserializeOwned>(dir: &Path, name: &str, missing: &str) -> Result<T, ClientError> {
    let bytes = files::read_private(dir, name, 1024 * 1024)?.ok_or_else(|| ClientError::Setup(missing.to_owned()))?;
    serde_json::from_slice(&bytes).map_err(|source| ClientError::Malformed { file: name.to_owned(), source })
}

fn parse_response(response: &[u8]) -> Result<Value, ClientError> {
    let protocol = |what: &str| ClientError::Protocol(what.to_owned());
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| protocol("no header end"))?;
    let head = std::str::from_utf8(&response[..split]).map_err(|_| protocol("non-UTF-8 headers"))?;
    let status: u16 =
        head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| protocol("no status line"))?;
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok());
    let body = &response[split + 4..];
    let body = match length {
        Some(n) if n <= body.len() => &body[..n],
        Some(_) => return Err(protocol("truncated body")),
        None => body,
    };
    let envelope: Value = serde_json::from_slice(body).map_err(|_| protocol("body is not JSON"))?;
    match (envelope.get("ok").and_then(Value::as_bool), status) {
        (Some(true), 200) => Ok(envelope.get("value").cloned().unwrap_or(Value::Null)),
        (Some(false), _) => Err(ClientError::Refused {
            status,
            message: envelope.get("error").and_then(Value::as_str).unwrap_or("request refused").to_owned(),
            code: envelope.get("code").and_then(Value::as_str).map(str::to_owned),
        }),
        _ => Err(protocol("unexpected envelope")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> Token {
        Token::parse(&"ab".repeat(32)).unwrap()
    }

    #[test]
    fn accepts_only_loopback_endpoints() {
        for ok in ["http://127.0.0.1:4000", "http://localhost:1/", "http://[::1]:80"] {
            assert!(ToolClient::new(ok, token()).is_ok(), "{ok}");
        }
        for bad in ["https://127.0.0.1:1", "http://evil.com:80", "http://127.0.0.1", "http://10.0.0.1:5", "127.0.0.1:5"]
        {
            assert!(matches!(ToolClient::new(bad, token()), Err(ClientError::BadEndpoint(_))), "{bad}");
        }
    }

    #[test]
    fn parses_envelopes() {
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 22\r\n\r\n{\"ok\":true,\"value\":[1]}";
        assert!(matches!(parse_response(ok), Err(ClientError::Protocol(_))), "length mismatch is caught");
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 23\r\n\r\n{\"ok\":true,\"value\":[1]}";
        assert_eq!(parse_response(ok).unwrap(), json!([1]));
        let refused = b"HTTP/1.1 401 Unauthorized\r\n\r\n{\"ok\":false,\"error\":\"Unknown or revoked session\"}";
        match parse_response(refused) {
            Err(ClientError::Refused { status, message, code }) => {
                assert_eq!((status, message.as_str(), code), (401, "Unknown or revoked session", None))
            }
            other => panic!("{other:?}"),
        }
        let coded = b"HTTP/1.1 400 Bad Request\r\n\r\n{\"ok\":false,\"error\":\"try again\",\"code\":\"busy\"}";
        match parse_response(coded) {
            Err(ClientError::Refused { status, message, code }) => {
                assert_eq!((status, message.as_str(), code.as_deref()), (400, "try again", Some("busy")))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_response(b"garbage"), Err(ClientError::Protocol(_))));
    }
}
