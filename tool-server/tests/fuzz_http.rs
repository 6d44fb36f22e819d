//! Property test of the tool server's HTTP request path: hostile byte streams
//! (request smuggling shapes, invalid UTF-8, deep JSON, random and mutated
//! requests) written to a real `ToolServer` over raw `TcpStream`s.
//!
//! Per case: whatever comes back is a sequence of well-formed responses (or
//! nothing: closing is a correct answer), a request hidden behind ambiguous
//! framing never reaches the host, and a normal authenticated call on a new
//! connection still succeeds. `PROPTEST_CASES` scales it (see `fuzz/run`).

mod common;
#[path = "../../fuzz/http_wire.rs"]
mod http_wire;

use std::time::Duration;

use common::{call_request, Conn, Fixture, PATIENCE};
use http_wire::{cases, exchange, hostile, Template};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use proptest::{prop_assert, prop_assert_eq};
use serde_json::{json, Value};
use tool_server::ServerConfig;

fn sticky(marker: &str) -> String {
    json!({"operation": "sticky_open", "args": {"text": marker}}).to_string()
}

#[test]
fn hostile_requests_get_well_formed_answers_and_never_smuggle() {
    // A short body deadline bounds cases whose declared length is never
    // delivered; the half-close below normally ends them at once.
    let fixture =
        Fixture::with_config(ServerConfig { request_timeout: Duration::from_secs(3), ..ServerConfig::default() });
    let token = fixture.session("agent-1", "proj-1");
    let port = fixture.port();
    let template = Template {
        method: "POST".into(),
        path: "/call".into(),
        host: format!("127.0.0.1:{port}"),
        headers: format!("Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"),
        body: sticky,
    };

    let wanted = cases(1_000);
    let config = Config { cases: wanted, max_shrink_iters: 256, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let counter = std::sync::atomic::AtomicU64::new(0);
    let result = runner.run(&hostile(), |input| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let (outer, smuggled) = (format!("OUTER-{n}"), format!("SMUGGLED-{n}"));
        let bytes = input.bytes(&template, &outer, &smuggled);
        let got = exchange(port, &bytes, PATIENCE);

        // The connection is closed, so nothing more from it can be queued; let queued work finish.
        common::wait_until("the project queue to drain", || fixture.server.pending_operations("proj-1") == 0);
        let executed: Vec<String> =
            fixture.host.started_labels().into_iter().filter(|l| l.ends_with(&format!("-{n}"))).collect();

        got.check_statuses(&bytes)?;
        for reply in &got.replies {
            if reply.status == 200 {
                let body: Value =
                    serde_json::from_slice(&reply.body).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&body["ok"], &json!(true));
            }
        }
        if input.forbids_smuggled() {
            prop_assert!(
                !executed.contains(&smuggled),
                "a request behind ambiguous framing ran: {:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
        // Each marker is sent at most once, so the host can have run each at most once.
        prop_assert!(executed.iter().filter(|l| **l == outer).count() <= 1);
        prop_assert!(executed.iter().filter(|l| **l == smuggled).count() <= 1);
        // The server is still up and serves a normal call.
        let mut conn = Conn::open(port);
        conn.send(&call_request(port, &token, &sticky(&format!("ALIVE-{n}"))));
        let alive = conn.response();
        prop_assert_eq!(alive.status, 200, "server stopped serving after {:?}", String::from_utf8_lossy(&bytes));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(counter.load(std::sync::atomic::Ordering::Relaxed) >= u64::from(wanted), "fewer cases ran than asked for");
}

/// Fixed smuggling shapes checked by exact outcome (the property test above
/// only bounds them): each is refused outright or, for CL+TE, answered once
/// with the connection closed, and the hidden request never runs.
#[test]
fn classic_smuggling_shapes_are_refused() {
    let fixture = Fixture::new();
    let token = fixture.session("agent-1", "proj-1");
    let port = fixture.port();
    let head = format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n");
    let body = sticky("VISIBLE");
    let hidden = call_request(port, &token, &sticky("HIDDEN"));
    let shapes = [
        format!(
            "{head}Content-Length: {}\r\nContent-Length: {}\r\n\r\n{body}{hidden}",
            body.len(),
            body.len() + hidden.len()
        ),
        format!("{head}Content-Length: +{}\r\n\r\n{body}{hidden}", body.len()),
        format!("{head}Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n{body}\r\n0\r\n\r\n{hidden}"),
        format!("{head}Transfer-Encoding: chunked\r\n\r\n-1\r\n{body}\r\n0\r\n\r\n{hidden}"),
    ];
    for shape in &shapes {
        let got = exchange(port, shape.as_bytes(), PATIENCE);
        assert!(got.replies.iter().all(|r| r.status == 400), "{shape:?}: {:?}", got.replies);
    }
    let chunks = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let cl_te = format!(
        "{head}Content-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n{chunks}{hidden}",
        chunks.len() + hidden.len()
    );
    let got = exchange(port, cl_te.as_bytes(), PATIENCE);
    assert!(got.replies.len() <= 1, "{:?}", got.replies);
    common::wait_until("the queue to drain", || fixture.server.pending_operations("proj-1") == 0);
    assert!(!fixture.host.started_labels().contains(&"HIDDEN".to_owned()));
    assert_eq!(fixture.call(&token, &json!({"operation": "canvas_list"})).status, 200);
}
