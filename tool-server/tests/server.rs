//! End-to-end tests of the tool server over raw sockets: request framing,
//! origin/host/auth checks, limits and timeouts, the invoke path, project
//! queues, revocation, and the lock/endpoint/session files.

mod common;

use std::fs;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_vocab::{AgentActivity, AgentState, StateSource};
use common::{call_request, hook_request, mode, wait_until, Conn, FakeHost, Fixture};
use serde_json::{json, Value};
use tool_server::{
    HookAgent, HookEvent, HookReport, IntegrationState, IntegrationStatus, LockError, ServerConfig, ServerError,
    SessionError, ToolIdentity, ToolServer,
};

fn sticky(text: &str) -> Value {
    json!({"operation": "sticky_open", "args": {"text": text}})
}

// ---------------------------------------------------------------- responses

#[test]
fn ok_call_returns_200_with_the_host_value() {
    let fx = Fixture::new();
    let token = fx.session("agent-1", "p1");
    let response = fx.call(&token, &json!({"operation": "canvas_move", "args": {"nodeId": "t1", "x": 10, "y": -5.5}}));
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json; charset=utf-8"));
    assert_eq!(
        response.json(),
        json!({"ok": true, "value": {"echo": "canvas_move", "args": {"nodeId": "t1", "x": 10, "y": -5.5}, "by": "agent-1"}})
    );
    let calls = fx.host.started.lock().clone();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].node_id.as_str(), calls[0].project_id.as_str()), ("agent-1", "p1"));
}

#[test]
fn invalid_requests_get_400_naming_the_problem_and_never_reach_the_host() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let cases = [
        (json!({"operation": "nope"}), "Unknown operation nope", "invalid_request"),
        (
            json!({"operation": "canvas_move", "args": {"nodeId": "n", "x": "NaN", "y": 1}}),
            "x must be a number",
            "invalid_argument",
        ),
        (
            json!({"operation": "sticky_open", "args": {"text": "a\u{0}"}}),
            "text must not contain NUL characters",
            "invalid_argument",
        ),
        (
            json!({"operation": "canvas_select", "args": {"nodeIds": []}}),
            "nodeIds must contain 1 to 100 items",
            "invalid_argument",
        ),
        (json!(["canvas_list"]), "Request must be a JSON object {operation, args}", "invalid_request"),
    ];
    for (body, message, code) in cases {
        let response = fx.call(&token, &body);
        assert_eq!(response.status, 400, "{body}");
        assert_eq!(response.json(), json!({"ok": false, "error": message, "code": code}));
    }
    // Not JSON at all: NaN and Infinity are not JSON tokens, and 1e400 does
    // not fit a double (serde_json refuses it rather than making it infinite).
    for x in ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"] {
        let mut conn = Conn::open(fx.port());
        conn.send(&call_request(
            fx.port(),
            &token,
            &format!(r#"{{"operation":"canvas_move","args":{{"nodeId":"n","x":{x},"y":1}}}}"#),
        ));
        let response = conn.response();
        assert_eq!(response.status, 400, "x = {x}");
        assert_eq!(
            response.json(),
            json!({"ok": false, "error": "Request body must be JSON", "code": "invalid_request"}),
            "x = {x}"
        );
    }
    // The largest finite double is JSON, and out of range.
    let response =
        fx.call(&token, &json!({"operation": "canvas_move", "args": {"nodeId": "n", "x": f64::MAX, "y": 1}}));
    assert_eq!(response.status, 400);
    assert!(response.json()["error"].as_str().unwrap().contains("x"), "{:?}", response.json());
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn host_errors_are_400_with_the_hosts_message() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let response = fx.call(&token, &sticky("fail"));
    assert_eq!(response.status, 400);
    assert_eq!(response.json(), json!({"ok": false, "error": "the fake host refused", "code": "refused"}));
}

// --------------------------------------------------------- method/path/origin

#[test]
fn only_post_call_without_origin_is_served() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let port = fx.port();
    let body = r#"{"operation":"canvas_list"}"#;
    let auth = format!("Authorization: Bearer {token}\r\n");
    let requests = [
        format!("GET /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}\r\n"),
        format!("PUT /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!("OPTIONS /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://evil.com\r\n\r\n"),
        format!("POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!("POST /call/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!("POST /call?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!("POST /CALL HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!(
            "POST http://127.0.0.1:{port}/call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        format!(
            "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: null\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\norigin:\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len()),
    ];
    for request in &requests {
        let mut conn = Conn::open(port);
        conn.send(request);
        let response = conn.response();
        assert_eq!(response.status, 403, "{request}");
        assert_eq!(response.json(), json!({"ok": false, "error": "Unsupported request", "code": "unsupported"}));
    }
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn host_header_must_be_our_own_loopback_authority() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let port = fx.port();
    let body = r#"{"operation":"canvas_list"}"#;
    let with_host = |host_lines: &str| {
        format!(
            "POST /call HTTP/1.1\r\n{host_lines}Authorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let refused = [
        "Host: evil.com\r\n".to_owned(),
        format!("Host: evil.com:{port}\r\n"),
        format!("Host: 127.0.0.1.nip.io:{port}\r\n"),
        format!("Host: 0x7f.1:{port}\r\n"),
        format!("Host: 2130706433:{port}\r\n"),
        format!("Host: 0.0.0.0:{port}\r\n"),
        format!("Host: 127.0.0.2:{port}\r\n"),
        format!("Host: localhost.:{port}\r\n"),
        "Host: 127.0.0.1\r\n".to_owned(),
        format!("Host: 127.0.0.1:{}\r\n", port.wrapping_add(1)),
        format!("Host: ::1:{port}\r\n"),
        format!("Host: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}\r\n"),
        String::new(), // no Host at all
    ];
    for host in &refused {
        let mut conn = Conn::open(port);
        conn.send(&with_host(host));
        let response = conn.response();
        assert_eq!(response.status, 403, "{host:?}");
        assert_eq!(response.json()["error"], "Unsupported request");
    }
    // HTTP/1.0 without Host.
    let mut conn = Conn::open(port);
    conn.send(&format!(
        "POST /call HTTP/1.0\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ));
    assert_eq!(conn.response().status, 403);

    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")] {
        let mut conn = Conn::open(port);
        conn.send(&with_host(&format!("Host: {host}\r\n")));
        assert_eq!(conn.response().status, 200, "{host}");
    }
    assert_eq!(fx.host.started.lock().len(), 3);
}

// ---------------------------------------------------------------------- auth

#[test]
fn bearer_token_is_required_and_checked() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let port = fx.port();
    let body = r#"{"operation":"canvas_list"}"#;
    let request = |auth: &str| {
        format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let unauthorized = [
        String::new(),
        format!("Authorization: {token}\r\n"),
        format!("Authorization: Basic {token}\r\n"),
        format!("Authorization: Bearer {}\r\n", token.to_uppercase()),
        format!("Authorization: Bearer {}\r\n", &token[..63]),
        format!("Authorization: Bearer {token}0\r\n"),
        format!("Authorization: Bearer  {token}\r\n"),
        format!("Authorization: Bearer {}\r\n", "0".repeat(64)),
        format!("Authorization: Bearer {token}\r\nAuthorization: Bearer {token}\r\n"),
    ];
    for auth in &unauthorized {
        let mut conn = Conn::open(port);
        conn.send(&request(auth));
        let response = conn.response();
        assert_eq!(response.status, 401, "{auth:?}");
        assert_eq!(
            response.json(),
            json!({"ok": false, "error": "Unknown or revoked session", "code": "unauthorized"})
        );
        // A rejected token is never echoed back.
        assert!(!String::from_utf8_lossy(&response.body).contains(&token[..16]));
    }
    for auth in [format!("Authorization: Bearer {token}\r\n"), format!("authorization: bearer {token}\r\n")] {
        let mut conn = Conn::open(port);
        conn.send(&request(&auth));
        assert_eq!(conn.response().status, 200, "{auth:?}");
    }
}

#[test]
fn revoked_and_replaced_tokens_get_401() {
    let fx = Fixture::new();
    let old = fx.session("a", "p");
    let new = fx.session("a", "p"); // re-provisioned without reuse: new token
    assert_ne!(old, new);
    assert_eq!(fx.call(&old, &json!({"operation": "canvas_list"})).status, 401);
    assert_eq!(fx.call(&new, &json!({"operation": "canvas_list"})).status, 200);
    assert!(fx.server.revoke("a").unwrap());
    assert_eq!(fx.call(&new, &json!({"operation": "canvas_list"})).status, 401);
    assert!(fx.server.session("a").is_none());
}

#[test]
fn an_identity_the_host_no_longer_accepts_is_refused() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    fx.host.invalid_nodes.lock().insert("a".into());
    let response = fx.call(&token, &json!({"operation": "canvas_list"}));
    assert_eq!(response.status, 400);
    assert_eq!(response.json()["error"], "This agent session is no longer valid: its project or node is gone");
    assert!(fx.host.started.lock().is_empty());
}

// -------------------------------------------------------------- body limits

#[test]
fn a_body_of_exactly_the_limit_is_accepted() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let mut body = r#"{"operation":"canvas_list"}"#.to_owned();
    body.push_str(&" ".repeat(128 * 1024 - body.len()));
    let mut conn = Conn::open(fx.port());
    conn.send(&call_request(fx.port(), &token, &body));
    assert_eq!(conn.response().status, 200);
}

#[test]
fn oversized_content_length_is_refused_without_sending_the_body() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let port = fx.port();
    let mut conn = Conn::open(port);
    // Headers only: the answer must come without the server waiting for the body.
    conn.send(&format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n",
        128 * 1024 + 1
    ));
    let response = conn.response();
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json(),
        json!({"ok": false, "error": "Request body exceeds 131072 bytes", "code": "invalid_request"})
    );
    assert_eq!(response.header("connection"), Some("close"));
    assert!(conn.closed_by_server());

    // Same with Expect: 100-continue: refused instead of invited.
    let mut conn = Conn::open(port);
    conn.send(&format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nExpect: 100-continue\r\nContent-Length: 10000000\r\n\r\n"
    ));
    assert_eq!(conn.response().status, 400);
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn chunked_bodies_are_cut_off_at_the_limit() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let port = fx.port();
    let mut conn = Conn::open(port);
    conn.send(&format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ));
    // Exactly one byte over the cap and no terminating chunk: the server must
    // stop on its own count, not wait for the end of the body.
    let chunk = vec![b' '; 16 * 1024];
    for _ in 0..8 {
        conn.send_lossy(format!("{:x}\r\n", chunk.len()).as_bytes());
        conn.send_lossy(&chunk);
        conn.send_lossy(b"\r\n");
    }
    conn.send_lossy(b"1\r\n ");
    let response = conn.response();
    assert_eq!(response.status, 400);
    assert_eq!(response.json()["error"], "Request body exceeds 131072 bytes");
    assert!(conn.closed_by_server());
}

// ------------------------------------------------------------------ timeouts

fn short_timeout() -> ServerConfig {
    ServerConfig { request_timeout: Duration::from_secs(2), ..ServerConfig::default() }
}

#[test]
fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let fx = Fixture::with_config(short_timeout());
    let mut conn = Conn::open(fx.port());
    conn.send(&format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", fx.port()));
    assert!(conn.closed_by_server());
}

#[test]
fn a_client_that_never_finishes_its_body_is_cut_off() {
    let fx = Fixture::with_config(short_timeout());
    let token = fx.session("a", "p");
    let port = fx.port();
    let mut conn = Conn::open(port);
    conn.send(&format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Length: 40\r\n\r\n{{\"oper"
    ));
    let response = conn.response();
    assert_eq!(response.status, 400);
    assert_eq!(response.json(), json!({"ok": false, "error": "Request timed out", "code": "timeout"}));
    assert!(conn.closed_by_server());
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn one_budget_covers_headers_and_body_together() {
    // Headers take 1.2 s and the body 1.2 s more: each alone fits the 2 s budget,
    // together they do not, so the request must be refused as timed out.
    let fx = Fixture::with_config(short_timeout());
    let token = fx.session("a", "p");
    let port = fx.port();
    let body = r#"{"operation":"canvas_list"}"#;
    let mut conn = Conn::open(port);
    conn.send(&format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"));
    std::thread::sleep(Duration::from_millis(1200));
    conn.send(&format!("Authorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n", body.len()));
    std::thread::sleep(Duration::from_millis(1200));
    conn.send(body);
    let response = conn.response();
    assert_eq!(response.status, 400);
    assert_eq!(response.json(), json!({"ok": false, "error": "Request timed out", "code": "timeout"}));
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn an_idle_keep_alive_connection_is_closed() {
    let fx = Fixture::with_config(short_timeout());
    let token = fx.session("a", "p");
    let mut conn = Conn::open(fx.port());
    conn.send(&call_request(fx.port(), &token, r#"{"operation":"canvas_list"}"#));
    assert_eq!(conn.response().status, 200);
    assert!(conn.closed_by_server());
}

// ------------------------------------------------------ keep-alive/pipelining

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let mut conn = Conn::open(fx.port());
    for text in ["one", "two", "three"] {
        conn.send(&call_request(fx.port(), &token, &sticky(text).to_string()));
        let response = conn.response();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("connection"), None);
        assert_eq!(response.json()["value"]["args"]["text"], text);
    }
    // Even after a 401 the connection stays usable.
    conn.send(&call_request(fx.port(), &"f".repeat(64), r#"{"operation":"canvas_list"}"#));
    assert_eq!(conn.response().status, 401);
    conn.send(&call_request(fx.port(), &token, r#"{"operation":"canvas_list"}"#));
    assert_eq!(conn.response().status, 200);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let mut conn = Conn::open(fx.port());
    let both = format!(
        "{}{}",
        call_request(fx.port(), &token, &sticky("first").to_string()),
        call_request(fx.port(), &token, r#"{"operation":"guide_read","args":{"topic":"terminal"}}"#)
    );
    conn.send(&both);
    let first = conn.response();
    let second = conn.response();
    assert_eq!(first.json()["value"]["args"]["text"], "first");
    assert_eq!(second.json()["value"]["topic"], "terminal");
}

// --------------------------------------------------------- direct operations

#[test]
fn session_info_describes_the_session_and_marks_mcp_adapters_connected() {
    let fx = Fixture::new();
    let token = fx.session("agent-7", "proj");
    fx.host.statuses.lock().clear();

    let value = fx.call(&token, &json!({"operation": "session_info"})).json()["value"].clone();
    assert_eq!(value["identity"], json!({"nodeId": "agent-7", "projectId": "proj"}));
    assert_eq!(value["status"], json!({"state": "ready"}));
    assert_eq!(value["endpoint"]["url"], fx.server.url());
    assert_eq!(value["browserControl"], false);
    assert_eq!(value["operations"].as_array().unwrap().len(), 28);
    assert!(fx.host.statuses.lock().is_empty(), "a plain session_info changes nothing");

    let value = fx.call(&token, &json!({"operation": "session_info", "args": {"adapter": "codex-mcp"}})).json()
        ["value"]
        .clone();
    assert_eq!(value["status"], json!({"state": "connected", "adapter": "codex-mcp"}));
    let statuses = fx.host.statuses.lock().clone();
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].0, "agent-7");
    assert_eq!(statuses[0].1.state, IntegrationState::Connected);
    assert_eq!(fx.server.session("agent-7").unwrap().status.state, IntegrationState::Connected);
    let on_disk = fs::read_to_string(fx.server.directory().join("sessions/agent-7.json")).unwrap();
    assert!(on_disk.contains("connected"));

    // Other adapters are described but not marked.
    fx.call(&token, &json!({"operation": "session_info", "args": {"adapter": "cli"}}));
    assert_eq!(fx.host.statuses.lock().len(), 1);
    // None of this went through the host's execute.
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn guide_read_and_agent_status_are_answered_directly() {
    let fx = Fixture::new();
    let token = fx.session("a1", "p");
    fx.session("a2", "p");
    fx.session("b1", "other");
    fx.host.hold.store(true, Ordering::SeqCst);

    let guide = fx.call(&token, &json!({"operation": "guide_read", "args": {"topic": "overview"}})).json();
    assert!(guide["value"]["text"].as_str().unwrap().contains(r#""$TERMSPRAWL_CTL" call OPERATION"#));

    let status = fx.call(&token, &json!({"operation": "agent_status"})).json();
    let nodes: Vec<&str> =
        status["value"]["agents"].as_array().unwrap().iter().map(|a| a["nodeId"].as_str().unwrap()).collect();
    assert_eq!(nodes, ["a1", "a2"], "only this project's agents");
    let one = fx.call(&token, &json!({"operation": "agent_status", "args": {"nodeId": "a2"}})).json();
    assert_eq!(one["value"]["agents"][0]["status"]["state"], "ready");
    let missing = fx.call(&token, &json!({"operation": "agent_status", "args": {"nodeId": "b1"}}));
    assert_eq!(missing.status, 400);
    assert!(fx.host.started.lock().is_empty());
}

#[test]
fn hook_reports_reach_the_host_and_agent_status_reports_activity() {
    let fx = Fixture::new();
    let token = fx.session("a1", "p");
    fx.host.hold.store(true, Ordering::SeqCst);
    let send = |token: &str, body: &str, origin: bool| {
        let mut conn = Conn::open(fx.port());
        let mut request = hook_request(fx.port(), token, body);
        if origin {
            request = request.replacen("\r\n", "\r\nOrigin: http://evil.test\r\n", 1);
        }
        conn.send(&request);
        conn.response()
    };
    let report = json!({"agent": "claude", "event": "permission-requested", "detail": "Bash"}).to_string();
    let ok = send(&token, &report, false);
    assert_eq!((ok.status, ok.json()), (200, json!({"ok": true, "value": null})));
    assert_eq!(
        fx.host.hooks.lock().clone(),
        vec![(
            "a1".to_owned(),
            HookReport {
                agent: HookAgent::Claude,
                event: HookEvent::PermissionRequested,
                detail: Some("Bash".into()),
                title: None,
                message: None
            }
        )]
    );
    // Hooks are not operations: nothing was queued behind the held ones.
    assert!(fx.host.started.lock().is_empty());
    assert_eq!(send(&"ab".repeat(32), &report, false).status, 401, "unknown token");
    assert_eq!(send(&token, &report, true).status, 403, "a browser's Origin");
    let bad = send(&token, r#"{"agent":"claude","event":"teleported"}"#, false);
    assert_eq!((bad.status, bad.json()["code"].as_str()), (400, Some("invalid_request")));
    assert_eq!(send(&token, &"x".repeat(200 * 1024), false).status, 400, "over the body limit");
    fx.host.invalid_nodes.lock().insert("a1".into());
    assert_eq!(send(&token, &report, false).status, 400, "a node gone from its canvas");
    fx.host.invalid_nodes.lock().clear();
    assert_eq!(fx.host.hooks.lock().len(), 1);

    fx.host.activities.lock().insert(
        "a1".into(),
        AgentActivity {
            state: AgentState::NeedsPermission,
            state_since: 1234,
            source: StateSource::Hooks,
            exit_code: None,
            detail: Some("Bash".into()),
        },
    );
    let status = fx.call(&token, &json!({"operation": "agent_status"})).json();
    assert_eq!(
        status["value"]["agents"][0],
        json!({"nodeId": "a1", "status": {"state": "ready"}, "state": "needs-permission", "stateSince": 1234,
               "source": "hooks", "detail": "Bash"})
    );
}

#[test]
fn browser_operations_need_browser_control() {
    let fx = Fixture::new();
    let token = fx.session("a", "p");
    let open = json!({"operation": "browser_open", "args": {"url": "https://example.com"}});
    let response = fx.call(&token, &open);
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json(),
        json!({"ok": false, "error": "Enable agent browser control", "code": "browser_disabled"})
    );
    assert!(fx.host.started.lock().is_empty());
    // Non-browser operations are unaffected.
    assert_eq!(fx.call(&token, &json!({"operation": "terminal_open"})).status, 200);
    fx.host.browser.store(true, Ordering::SeqCst);
    assert_eq!(fx.call(&token, &open).status, 200);
}

// ------------------------------------------------------------------- queues

/// Sends `body` on its own connection from a background thread.
fn send_async(port: u16, token: &str, body: Value) -> std::thread::JoinHandle<common::Response> {
    let token = token.to_owned();
    std::thread::spawn(move || {
        let mut conn = Conn::open(port);
        conn.send(&call_request(port, &token, &body.to_string()));
        conn.response()
    })
}

#[test]
fn a_project_runs_one_operation_at_a_time_in_arrival_order() {
    let fx = Fixture::new();
    let a = fx.session("a", "p");
    let b = fx.session("b", "p");
    fx.host.hold.store(true, Ordering::SeqCst);
    let port = fx.port();

    let first = send_async(port, &a, sticky("A"));
    wait_until("A to start", || fx.host.started_labels() == ["A"]);
    let second = send_async(port, &b, sticky("B"));
    wait_until("B to queue", || fx.server.pending_operations("p") == 2);
    let third = send_async(port, &a, sticky("C"));
    wait_until("C to queue", || fx.server.pending_operations("p") == 3);
    // Discovery calls bypass the busy queue.
    assert_eq!(fx.call(&a, &json!({"operation": "guide_read", "args": {"topic": "canvas"}})).status, 200);
    assert_eq!(fx.host.started_labels(), ["A"], "B and C must wait for A");

    fx.host.release_oldest();
    wait_until("B to start", || fx.host.started_labels() == ["A", "B"]);
    fx.host.release_oldest();
    wait_until("C to start", || fx.host.started_labels() == ["A", "B", "C"]);
    fx.host.release_oldest();
    for (handle, text) in [(first, "A"), (second, "B"), (third, "C")] {
        let response = handle.join().unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.json()["value"]["args"]["text"], text);
    }
    assert_eq!(fx.host.finished_labels(), ["A", "B", "C"]);
    wait_until("the queue to empty", || fx.server.pending_operations("p") == 0);
}

#[test]
fn different_projects_run_in_parallel() {
    let fx = Fixture::new();
    let a = fx.session("a", "p1");
    let b = fx.session("b", "p2");
    fx.host.hold.store(true, Ordering::SeqCst);
    let first = send_async(fx.port(), &a, sticky("P1"));
    wait_until("P1 to start", || fx.host.started_labels() == ["P1"]);
    let second = send_async(fx.port(), &b, sticky("P2"));
    // P2 starts while P1 is still held.
    wait_until("P2 to start beside P1", || fx.host.started_labels() == ["P1", "P2"]);
    assert_eq!(fx.host.held_count(), 2);
    fx.host.release_oldest();
    fx.host.release_oldest();
    assert_eq!(first.join().unwrap().status, 200);
    assert_eq!(second.join().unwrap().status, 200);
}

#[test]
fn revoking_a_node_fails_its_queued_operations() {
    let fx = Fixture::new();
    let a = fx.session("a", "p");
    let b = fx.session("b", "p");
    fx.host.hold.store(true, Ordering::SeqCst);
    let first = send_async(fx.port(), &a, sticky("A"));
    wait_until("A to start", || fx.host.started_labels() == ["A"]);
    let queued = send_async(fx.port(), &b, sticky("B"));
    wait_until("B to queue", || fx.server.pending_operations("p") == 2);
    let replaced = send_async(fx.port(), &a, sticky("A2"));
    wait_until("A2 to queue", || fx.server.pending_operations("p") == 3);

    assert!(fx.server.revoke("b").unwrap());
    // Re-provisioning `a` without reuse invalidates the token A2 was queued with.
    let fresh = fx.session("a", "p");
    assert!(!fx.dir.path().join("agent-tools/sessions/b.json").exists());

    fx.host.release_oldest();
    let revoked = queued.join().unwrap();
    assert_eq!(revoked.status, 401);
    assert_eq!(revoked.json(), json!({"ok": false, "error": "Unknown or revoked session", "code": "unauthorized"}));
    assert_eq!(replaced.join().unwrap().status, 401);
    assert_eq!(first.join().unwrap().status, 200);
    assert_eq!(fx.host.started_labels(), ["A"], "revoked work never reaches the host");
    wait_until("the queue to empty", || fx.server.pending_operations("p") == 0);
    fx.host.hold.store(false, Ordering::SeqCst);
    assert_eq!(fx.call(&fresh, &sticky("after")).status, 200);
}

#[test]
fn a_client_that_hangs_up_neither_cancels_its_operation_nor_stalls_the_queue() {
    let fx = Fixture::new();
    let a = fx.session("a", "p");
    fx.host.hold.store(true, Ordering::SeqCst);
    let port = fx.port();

    let mut gone = Conn::open(port);
    gone.send(&call_request(port, &a, &sticky("A").to_string()));
    wait_until("A to start", || fx.host.started_labels() == ["A"]);
    let mut also_gone = Conn::open(port);
    also_gone.send(&call_request(port, &a, &sticky("B").to_string()));
    wait_until("B to queue", || fx.server.pending_operations("p") == 2);
    drop(gone);
    drop(also_gone); // hangs up while still queued

    let waiting = send_async(port, &a, sticky("C"));
    wait_until("C to queue", || fx.server.pending_operations("p") == 3);
    fx.host.release_oldest();
    wait_until("B to start", || fx.host.started_labels() == ["A", "B"]);
    fx.host.release_oldest();
    wait_until("C to start", || fx.host.started_labels().len() == 3);
    fx.host.release_oldest();
    assert_eq!(waiting.join().unwrap().status, 200);
    assert_eq!(fx.host.finished_labels(), ["A", "B", "C"], "abandoned operations still ran to completion");
    wait_until("the queue to empty", || fx.server.pending_operations("p") == 0);
}

#[test]
fn an_operation_the_host_never_finishes_is_abandoned_and_the_queue_moves_on() {
    let config = ServerConfig { operation_timeout: Duration::from_millis(500), ..ServerConfig::default() };
    let fx = Fixture::with_config(config);
    let a = fx.session("a", "p");
    fx.host.hold.store(true, Ordering::SeqCst);
    let stuck = send_async(fx.port(), &a, sticky("stuck"));
    wait_until("stuck to start", || fx.host.started_labels() == ["stuck"]);
    let next = send_async(fx.port(), &a, sticky("next"));
    let response = stuck.join().unwrap();
    assert_eq!(response.status, 400);
    assert_eq!(response.json(), json!({"ok": false, "error": "sticky_open timed out", "code": "timeout"}));
    wait_until("next to start", || fx.host.started_labels() == ["stuck", "next"]);
    fx.host.release_oldest(); // the abandoned one: nobody listens any more
    fx.host.release_oldest();
    assert_eq!(next.join().unwrap().status, 200);
}

// ------------------------------------------------------------ files & locks

#[test]
fn start_writes_private_endpoint_and_lock_files_and_close_removes_them() {
    let dir = tempfile::tempdir().unwrap();
    let host = FakeHost::new();
    let mut server = ToolServer::start(dir.path(), host.clone()).unwrap();
    let tools = dir.path().join("agent-tools");
    assert_eq!(server.directory(), tools);
    assert_eq!(mode(&tools), 0o700);
    assert_eq!(mode(&tools.join("sessions")), 0o700);
    assert_eq!(mode(&tools.join("endpoint.json")), 0o600);
    assert_eq!(mode(&tools.join("server.lock")), 0o600);
    let endpoint: Value = serde_json::from_slice(&fs::read(tools.join("endpoint.json")).unwrap()).unwrap();
    assert_eq!(
        endpoint,
        json!({"url": format!("http://127.0.0.1:{}", server.port()), "instanceId": server.instance_id()})
    );
    let lock: Value = serde_json::from_slice(&fs::read(tools.join("server.lock")).unwrap()).unwrap();
    assert_eq!(lock, json!({"pid": std::process::id(), "instanceId": server.instance_id()}));
    assert_eq!(server.instance_id().len(), 32);

    let port = server.port();
    server.close().unwrap();
    assert!(!tools.join("endpoint.json").exists());
    assert!(!tools.join("server.lock").exists());
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "listener must be closed");
    server.close().unwrap(); // idempotent
}

#[test]
fn a_second_instance_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    match ToolServer::start(dir.path(), FakeHost::new()) {
        Err(ServerError::Lock(LockError::AlreadyRunning { pid, .. })) => {
            assert_eq!(pid, Some(std::process::id()))
        }
        other => panic!("expected AlreadyRunning, got {other:?}"),
    }
    // The refused start touched nothing of the first instance's.
    let endpoint: Value =
        serde_json::from_slice(&fs::read(dir.path().join("agent-tools/endpoint.json")).unwrap()).unwrap();
    assert_eq!(endpoint["instanceId"], first.instance_id());
    first.close().unwrap();
    let second = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    assert_ne!(second.instance_id(), first.instance_id());
}

#[test]
fn a_stale_lock_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("agent-tools");
    fs::create_dir_all(&tools).unwrap();
    fs::write(tools.join("server.lock"), br#"{"pid":999999,"instanceId":"dead"}"#).unwrap();
    fs::write(tools.join("endpoint.json"), br#"{"url":"http://127.0.0.1:1","instanceId":"dead"}"#).unwrap();
    let server = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    let lock: Value = serde_json::from_slice(&fs::read(tools.join("server.lock")).unwrap()).unwrap();
    assert_eq!(lock["instanceId"], server.instance_id());
    let endpoint: Value = serde_json::from_slice(&fs::read(tools.join("endpoint.json")).unwrap()).unwrap();
    assert_eq!(endpoint["instanceId"], server.instance_id());
}

#[test]
fn close_leaves_an_endpoint_file_that_is_not_ours() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    let path = dir.path().join("agent-tools/endpoint.json");
    fs::write(&path, br#"{"url":"http://127.0.0.1:2","instanceId":"someone-else"}"#).unwrap();
    server.close().unwrap();
    assert!(path.exists());
}

#[test]
fn sessions_persist_across_restarts_when_reused() {
    let dir = tempfile::tempdir().unwrap();
    let identity = ToolIdentity::new("agent-1", "p");
    let ready = IntegrationStatus::new(IntegrationState::Ready);
    let mut first = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    let token = first.provision(identity.clone(), ready.clone(), false).unwrap().token;
    assert_eq!(mode(&dir.path().join("agent-tools/sessions/agent-1.json")), 0o600);
    first.close().unwrap();

    let host = FakeHost::new();
    let second = ToolServer::start(dir.path(), host.clone()).unwrap();
    let reused = second.provision(identity, ready, true).unwrap();
    assert_eq!(reused.token, token);
    assert_eq!(host.statuses.lock().len(), 1, "provision reports the status");
    let mut conn = Conn::open(second.port());
    conn.send(&call_request(second.port(), token.expose(), r#"{"operation":"canvas_list"}"#));
    assert_eq!(conn.response().status, 200);
}

#[test]
fn a_planted_symlink_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let server = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    let victim = dir.path().join("victim.txt");
    fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, server.directory().join("sessions/agent-1.json")).unwrap();
    let result =
        server.provision(ToolIdentity::new("agent-1", "p"), IntegrationStatus::new(IntegrationState::Ready), true);
    assert!(matches!(result, Err(SessionError::File(local_guard::FileError::Symlink(_)))), "{result:?}");
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    assert!(server.session("agent-1").is_none());
}

#[test]
fn a_symlinked_state_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("agent-tools")).unwrap();
    assert!(matches!(
        ToolServer::start(dir.path(), FakeHost::new()),
        Err(ServerError::File(local_guard::FileError::Symlink(_)))
    ));
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("agent-tools")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("agent-tools/sessions")).unwrap();
    assert!(matches!(
        ToolServer::start(dir.path(), FakeHost::new()),
        Err(ServerError::Session(SessionError::File(local_guard::FileError::Symlink(_))))
    ));
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

// ------------------------------------------------------------ client & MCP

#[test]
fn the_client_finds_its_session_from_the_state_directory() {
    let fx = Fixture::new();
    fx.session("agent-1", "p");
    let client = tool_server::ToolClient::from_state_dir(fx.server.directory(), "agent-1").unwrap();
    assert_eq!(client.identity(), Some(&ToolIdentity::new("agent-1", "p")));
    let value = client.call("canvas_select", json!({"nodeIds": ["n1", "n2"]})).unwrap();
    assert_eq!(value["args"]["nodeIds"], json!(["n1", "n2"]));
    assert_eq!(client.call("canvas_list", Value::Null).unwrap()["echo"], "canvas_list");
    match client.call("canvas_move", json!({"nodeId": "n"})) {
        Err(tool_server::ClientError::Refused { status: 400, message, code }) => {
            assert_eq!(message, "canvas_move requires argument x");
            assert_eq!(code.as_deref(), Some("invalid_argument"));
        }
        other => panic!("{other:?}"),
    }
    fx.server.revoke("agent-1").unwrap();
    assert!(matches!(
        client.call("canvas_list", Value::Null),
        Err(tool_server::ClientError::Refused { status: 401, .. })
    ));
    assert!(matches!(
        tool_server::ToolClient::from_state_dir(fx.server.directory(), "agent-1"),
        Err(tool_server::ClientError::Setup(_))
    ));
}

#[test]
fn the_mcp_adapter_connects_lists_and_calls_through_the_real_server() {
    let fx = Fixture::new();
    fx.session("agent-1", "p");
    fx.host.statuses.lock().clear();
    let client = tool_server::ToolClient::from_state_dir(fx.server.directory(), "agent-1").unwrap();
    let mcp = tool_server::McpServer::new(client, Some("claude-mcp".into()));
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "sticky_open", "arguments": {"text": "hi"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "browser_list", "arguments": {}}}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let mut output = Vec::new();
    mcp.serve(input.as_bytes(), &mut output).unwrap();
    let replies: Vec<Value> =
        String::from_utf8(output).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(replies.len(), 4);
    assert_eq!(replies[0]["result"]["serverInfo"]["name"], "termsprawl");
    assert_eq!(replies[1]["result"]["tools"].as_array().unwrap().len(), 28);
    assert_eq!(replies[2]["result"]["isError"], false);
    let text: Value = serde_json::from_str(replies[2]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["args"]["text"], "hi");
    assert_eq!(replies[3]["result"]["isError"], true);
    assert_eq!(replies[3]["result"]["content"][0]["text"], "Enable agent browser control");

    let statuses = fx.host.statuses.lock().clone();
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].1.state, IntegrationState::Connected);
    assert_eq!(statuses[0].1.adapter.as_deref(), Some("claude-mcp"));
}
