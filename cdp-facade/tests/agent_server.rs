//! The browser agent control server over real HTTP, with fake guests.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use cdp_facade::{AgentServer, AgentServerConfig, Guests, DISCOVERY_FILE_NAME};
use local_guard::Token;
use serde_json::{json, Value};
use support::*;

struct Setup {
    server: AgentServer,
    guests: Arc<FakeGuests>,
    token: String,
    _dir: tempfile::TempDir,
}

fn setup(config: AgentServerConfig, cdp: Option<String>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let guests = FakeGuests::new();
    let token = Token::generate().unwrap();
    let text = token.expose().to_string();
    let server = AgentServer::start(config, token, guests.clone() as Arc<dyn Guests>, dir.path(), cdp).unwrap();
    Setup { server, guests, token: text, _dir: dir }
}

fn post(s: &Setup, body: &str, extra: &str) -> (u16, Value) {
    let port = s.server.port();
    let (status, body) = http(
        port,
        &format!(
            "POST /open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n{extra}Connection: close\r\n\r\n{body}",
            s.token,
            body.len()
        ),
    );
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[test]
fn discovery_file_is_private_and_removed_on_close() {
    let s = setup(AgentServerConfig::default(), Some("http://127.0.0.1:9/".into()));
    let path = s.server.discovery_file().to_path_buf();
    assert_eq!(path.file_name().unwrap(), DISCOVERY_FILE_NAME);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let port = s.server.port();
    assert_eq!(
        file,
        json!({"port": port, "token": s.token, "cdp": "http://127.0.0.1:9/",
               "open": {"method": "POST", "path": "/open", "url": format!("http://127.0.0.1:{port}/open")}})
    );
    s.server.close();
    assert!(!path.exists(), "a stopped endpoint is never advertised");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn refuses_a_symlinked_discovery_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, dir.path().join(DISCOVERY_FILE_NAME)).unwrap();
    let guests = FakeGuests::new() as Arc<dyn Guests>;
    let result = AgentServer::start(AgentServerConfig::default(), Token::generate().unwrap(), guests, dir.path(), None);
    assert!(matches!(result, Err(cdp_facade::FacadeError::SymlinkRefused(_))));
    assert!(!target.exists());
}

#[test]
fn info_needs_bearer_and_loopback_host() {
    let s = setup(AgentServerConfig::default(), None);
    let port = s.server.port();
    assert_eq!(get(port, "/info", "").0, 401);
    assert_eq!(get(port, "/info", "Authorization: Bearer wrong\r\n").0, 401);
    assert_eq!(get(port, &format!("/info?token={}", s.token), "").0, 401, "bearer only");
    let bearer = format!("Authorization: Bearer {}\r\n", s.token);
    let (status, body) = get(port, "/info", &bearer);
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v,
        json!({"ok": true, "cdp": null, "open": {"method": "POST", "path": "/open", "url": format!("http://127.0.0.1:{port}/open")}})
    );
    let (status, _) =
        http(port, &format!("GET /info HTTP/1.1\r\nHost: evil.test\r\n{bearer}Connection: close\r\n\r\n"));
    assert_eq!(status, 403);
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let (status, _) =
            http(port, &format!("GET /info HTTP/1.1\r\nHost: {host}\r\n{bearer}Connection: close\r\n\r\n"));
        assert_eq!(status, 200, "{host}");
    }
    assert_eq!(get(port, "/nope", &bearer).0, 404);
    assert_eq!(get(port, "/open", &bearer).0, 404, "GET /open is not a route");
}

#[test]
fn open_validates_urls_and_defaults_to_blank() {
    let s = setup(AgentServerConfig::default(), None);
    let (status, v) = post(&s, r#"{"url":"https://example.test/"}"#, "");
    assert_eq!((status, v), (200, json!({"ok": true, "url": "https://example.test/"})));
    assert_eq!(post(&s, "", "").1, json!({"ok": true, "url": "about:blank"}));
    assert_eq!(post(&s, "{oops", "").1, json!({"ok": true, "url": "about:blank"}));
    assert_eq!(post(&s, r#"{"url":""}"#, "").1, json!({"ok": true, "url": "about:blank"}));
    for bad in [r#"{"url":"javascript:alert(1)"}"#, r#"{"url":"file:///etc/passwd"}"#, r#"{"url":7}"#] {
        assert_eq!(post(&s, bad, ""), (400, json!({"ok": false, "error": "denied url"})), "{bad}");
    }
    assert_eq!(
        s.guests.opened.lock().unwrap().as_slice(),
        ["https://example.test/", "about:blank", "about:blank", "about:blank"]
    );
    assert_eq!(s.guests.list().len(), 4, "each accepted open made a visible node");

    let port = s.server.port();
    let unauth = http(
        port,
        &format!("POST /open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"),
    );
    assert_eq!(unauth.0, 401);
    assert_eq!(s.guests.opened.lock().unwrap().len(), 4);
}

#[test]
fn oversized_bodies_are_refused_unread() {
    let s = setup(AgentServerConfig { max_body_bytes: 1024 }, None);
    let port = s.server.port();
    // Declared too big: answered from the headers alone.
    let (status, body) = http(
        port,
        &format!("POST /open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nContent-Length: 300000\r\n\r\n", s.token),
    );
    assert_eq!(status, 413);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["ok"], false);
    // Chunked, no length: cut off at the cap.
    let chunk = "a".repeat(4096);
    let (status, _) = http(
        port,
        &format!(
            "POST /open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
            s.token,
            chunk.len()
        ),
    );
    assert_eq!(status, 413);
    assert!(s.guests.opened.lock().unwrap().is_empty());
    // At the cap is fine.
    let padded = format!(r#"{{"url":"https://a.test/","pad":"{}"}}"#, "p".repeat(1024 - 34));
    assert_eq!(padded.len(), 1024);
    assert_eq!(post(&s, &padded, "").0, 200);
}

#[test]
fn default_cap_is_256_kib() {
    let s = setup(AgentServerConfig::default(), None);
    let port = s.server.port();
    let (status, _) = http(
        port,
        &format!(
            "POST /open HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n",
            s.token,
            256 * 1024 + 1
        ),
    );
    assert_eq!(status, 413);
}
