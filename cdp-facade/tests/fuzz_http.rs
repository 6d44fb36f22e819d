//! Property test of the HTTP request path of both cdp-facade servers: the
//! browser agent server (`GET /info`, `POST /open`) and the facade's
//! discovery endpoints (`/json/*`), fed hostile byte streams over raw
//! `TcpStream`s (request smuggling shapes, invalid UTF-8, deep JSON, random
//! and mutated requests).
//!
//! Per case: what comes back is a sequence of well-formed responses (or
//! nothing: closing is a correct answer), a request hidden behind ambiguous
//! framing is never acted on, and a normal authenticated request on a new
//! connection still succeeds. `PROPTEST_CASES` scales it (see `fuzz/run`).

#[path = "../../fuzz/http_wire.rs"]
mod http_wire;
mod support;

use std::sync::Arc;

use cdp_facade::{AgentServer, AgentServerConfig, Facade, FacadeConfig, Guests};
use http_wire::{cases, exchange, hostile, Template};
use local_guard::Token;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use proptest::{prop_assert, prop_assert_eq};
use serde_json::{json, Value};
use support::*;

fn open_body(marker: &str) -> String {
    json!({"url": format!("https://{}.test/", marker.to_ascii_lowercase())}).to_string()
}

fn no_body(_: &str) -> String {
    String::new()
}

fn runner(bounded: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: cases(bounded),
        max_shrink_iters: 256,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn agent_server_answers_hostile_requests_and_never_opens_a_smuggled_url() {
    let dir = tempfile::tempdir().unwrap();
    let guests = FakeGuests::new();
    let token = Token::generate().unwrap();
    let text = token.expose().to_string();
    let server =
        AgentServer::start(AgentServerConfig::default(), token, guests.clone() as Arc<dyn Guests>, dir.path(), None)
            .unwrap();
    let port = server.port();
    let template = Template {
        method: "POST".into(),
        path: "/open".into(),
        host: format!("127.0.0.1:{port}"),
        headers: format!("Authorization: Bearer {text}\r\nContent-Type: application/json\r\n"),
        body: open_body,
    };
    let counter = std::sync::atomic::AtomicU64::new(0);
    let result = runner(1_000).run(&hostile(), |input| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let (outer, smuggled) = (format!("OUTER-{n}"), format!("SMUGGLED-{n}"));
        let bytes = input.bytes(&template, &outer, &smuggled);
        let before = guests.opened.lock().unwrap().len();
        let got = exchange(port, &bytes, WAIT);
        // An open whose request was cut off by our half-close may still finish after this read
        // (the client hung up, the work goes on), so this check can miss a late smuggled open but
        // never reports one that did not happen.
        let opened: Vec<String> = guests.opened.lock().unwrap()[before..].to_vec();
        got.check_statuses(&bytes)?;
        if input.forbids_smuggled() {
            let hidden = format!("https://{}.test/", smuggled.to_ascii_lowercase());
            prop_assert!(!opened.contains(&hidden), "a request behind ambiguous framing ran: {:?}", String::from_utf8_lossy(&bytes));
        }
        // Alive: an ordinary authenticated request still works.
        let (status, body) = http(port, &format!("GET /info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {text}\r\nConnection: close\r\n\r\n"));
        prop_assert_eq!(status, 200, "server stopped serving after {:?}: {}", String::from_utf8_lossy(&bytes), body);
        // Nodes opened by the fuzzer are closed again so the registry stays small on long runs.
        for id in guests.list() {
            guests.remove(&id);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        counter.load(std::sync::atomic::Ordering::Relaxed) >= u64::from(cases(1_000)),
        "fewer cases ran than asked for"
    );
}

#[test]
fn facade_discovery_answers_hostile_requests() {
    let guests = FakeGuests::new();
    guests.add("https://one.test/", false);
    let facade =
        Facade::start(FacadeConfig::default(), Token::generate().unwrap(), guests.clone() as Arc<dyn Guests>).unwrap();
    let port = facade.port();
    let token = facade.browser_ws_url().split("token=").nth(1).unwrap().to_string();
    let path = prop::sample::select(vec![
        "/json/version",
        "/json/list",
        "/json",
        "/json/new?about:blank",
        "/json/protocol",
        "/other",
    ]);
    let method = prop::sample::select(vec!["GET", "PUT", "POST", "OPTIONS", "DELETE"]);
    let input = (path, method, hostile());
    let result = runner(1_000).run(&input, |(path, method, input)| {
        let template = Template {
            method: method.into(),
            path: path.into(),
            host: format!("127.0.0.1:{port}"),
            headers: format!("Authorization: Bearer {token}\r\n"),
            body: no_body,
        };
        let bytes = input.bytes(&template, "outer", "smuggled");
        let got = exchange(port, &bytes, WAIT);
        got.check_statuses(&bytes)?;
        for reply in &got.replies {
            if reply.status == 200 {
                prop_assert!(serde_json::from_slice::<Value>(&reply.body).is_ok(), "200 without JSON: {:?}", reply);
            }
        }
        let (status, body) = get(port, &format!("/json/version?token={token}"), "");
        prop_assert_eq!(status, 200, "facade stopped serving after {:?}", String::from_utf8_lossy(&bytes));
        prop_assert!(serde_json::from_str::<Value>(&body).is_ok());
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    facade.close();
}
