//! Property tests of the two pure input paths of cef-bridge that untrusted
//! text reaches without CEF running:
//!
//! * `url_policy::normalize_address` / `is_allowed_nav_url` on arbitrary
//!   strings (typed addresses, agent-supplied URLs): never panic; anything
//!   accepted is http(s) with a host or exactly `about:blank`, passes
//!   `is_allowed_nav_url`, and normalises to itself again.
//! * `DevToolsChannel::deliver` on arbitrary bytes from the guest: never
//!   panics; a pending command is resolved only by a reply carrying its id,
//!   exactly once, with that reply's `result` or `error`; events reach
//!   subscribers; raw sinks see every message.
//!
//! `PROPTEST_CASES` scales both (see `fuzz/run`).

use std::sync::Arc;
use std::time::Duration;

use cef_bridge::devtools::{DevToolsChannel, RawSender, RawSink};
use cef_bridge::url_policy::{is_allowed_nav_url, normalize_address, ABOUT_BLANK};
use parking_lot::Mutex;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};

fn cases(bounded: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(bounded)
}

fn run<S: Strategy>(bounded: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let config = Config { cases: cases(bounded), failure_persistence: None, ..Config::default() };
    if let Err(e) = TestRunner::new(config).run(&strategy, test) {
        panic!("{e}");
    }
}

/// Text shaped like addresses: a scheme-ish prefix, a host-ish middle, a path-ish tail, with
/// whitespace, controls, percent escapes, IDNA and IPv6 pieces mixed in.
fn address() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec![
        "",
        "http://",
        "https://",
        "HTTP://",
        "hTtPs://",
        "http:",
        "https:",
        "http:/",
        "http:///",
        "javascript:",
        "JavaScript:",
        "file://",
        "data:text/html,",
        "about:",
        "about:blank",
        "ABOUT:BLANK",
        "chrome://",
        "view-source:",
        "blob:",
        "ws://",
        "ftp://",
        "//",
        "\\\\",
        " ",
        "\t",
        "localhost:",
        "127.0.0.1:",
        "[::1]:",
        "a+b.c-d:",
    ]);
    let host = prop_oneof![
        prop::sample::select(vec![
            "example.com",
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.1",
            "0x7f.1",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[",
            "]",
            "münchen.de",
            "xn--mnchen-3ya.de",
            "ex%41mple.com",
            "a..b",
            ".",
            "",
            "@",
            "user:pass@host",
            "host:99999",
            "host:0",
            "host:65535",
            "1.2.3.4.5",
            "256.0.0.1",
            "exa mple.com",
            "%00",
            "\u{0}",
            "\u{85}",
            "\u{3000}",
            "\u{200b}",
            "\u{feff}",
            "ＥＸＡＭＰＬＥ.com",
        ])
        .prop_map(String::from),
        "[a-z0-9.-]{0,20}",
        ".{0,12}",
    ];
    let tail = prop_oneof![
        prop::sample::select(vec![
            "", "/", "/path", ":8080", ":8080/x", "?q=1", "#frag", "/../..", "/%2e%2e/", "\\x", " x", "\r\n"
        ])
        .prop_map(String::from),
        "[ -~]{0,16}",
    ];
    prop_oneof![
        6 => (prefix, host, tail).prop_map(|(p, h, t)| format!("{p}{h}{t}")),
        1 => ".{0,40}",
        1 => vec(any::<char>(), 0..24).prop_map(|c| c.into_iter().collect()),
    ]
}

#[test]
fn accepted_addresses_are_web_urls_that_normalise_to_themselves() {
    run(3_000, address(), |text| {
        let allowed_raw = is_allowed_nav_url(&text);
        if allowed_raw {
            let url = url::Url::parse(&text).expect("is_allowed_nav_url accepted an unparsable URL");
            prop_assert!(
                matches!(url.scheme(), "http" | "https") || url.as_str() == ABOUT_BLANK,
                "allowed {:?} with scheme {}",
                text,
                url.scheme()
            );
        }
        let Ok(normal) = normalize_address(&text) else { return Ok(()) };
        if normal != ABOUT_BLANK {
            let url = url::Url::parse(&normal).expect("normalize_address returned an unparsable URL");
            prop_assert!(matches!(url.scheme(), "http" | "https"), "{:?} -> {:?}", text, normal);
            prop_assert!(url.host_str().is_some_and(|h| !h.is_empty()), "{:?} -> {:?} has no host", text, normal);
            prop_assert_eq!(url.as_str(), normal.as_str(), "normal form is the URL's own serialisation");
        }
        prop_assert!(is_allowed_nav_url(&normal), "{:?} -> {:?} is not navigable", text, normal);
        let again = normalize_address(&normal);
        prop_assert_eq!(again.as_deref(), Ok(normal.as_str()), "not idempotent for {:?}", text);
        // A navigable URL with an unambiguous scheme (`scheme://`) is kept as the browser would parse it.
        // (`http:0` is not covered: the policy reads it as host `http`, port 0.)
        if allowed_raw && normal != ABOUT_BLANK && text.trim().contains("://") {
            let direct = url::Url::parse(&text).expect("checked above");
            prop_assert_eq!(direct.as_str(), normal.as_str(), "for {:?}", text);
        }
        Ok(())
    });
}

/// The channel's browser side: records what was sent; replies come only from the test.
#[derive(Default)]
struct Recorder {
    sent: Mutex<Vec<Value>>,
}

impl RawSender for Recorder {
    fn send_raw(&self, message: &[u8]) {
        self.sent.lock().push(serde_json::from_slice(message).expect("the channel sends JSON"));
    }
}

#[derive(Default)]
struct Sink {
    seen: Mutex<Vec<String>>,
}

impl RawSink for Sink {
    fn message(&self, text: &str) -> bool {
        self.seen.lock().push(text.to_owned());
        true
    }
    fn renderer_gone(&self) -> bool {
        true
    }
}

#[derive(Debug, Clone)]
enum Incoming {
    /// A reply to the n-th pending command (by its real id), with a result or error of any shape.
    Reply { to: usize, body: Value, error: bool },
    /// A reply whose id is some other value (unknown, string, float, huge).
    StrayReply(Value),
    /// An event, possibly on a session.
    Event { method: Value, params: Option<Value>, session: Option<Value> },
    /// Not JSON, or JSON that is not a message.
    Junk(Vec<u8>),
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(vec!["code", "message", "data", "id", "x"]), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn incoming() -> impl Strategy<Value = Incoming> {
    prop_oneof![
        4 => (0usize..8, json_value(), any::<bool>()).prop_map(|(to, body, error)| Incoming::Reply { to, body, error }),
        2 => prop_oneof![
            any::<i64>().prop_map(Value::from),
            Just(json!(u64::MAX)),
            Just(json!(1.0)),
            Just(json!("1")),
            Just(json!(null)),
            Just(json!(1 << 30)),
        ]
        .prop_map(Incoming::StrayReply),
        2 => (
            prop_oneof![".{0,12}".prop_map(Value::String), json_value()],
            prop::option::of(json_value()),
            prop::option::of(prop_oneof![".{0,8}".prop_map(Value::String), json_value()]),
        )
            .prop_map(|(method, params, session)| Incoming::Event { method, params, session }),
        1 => vec(any::<u8>(), 0..48).prop_map(Incoming::Junk),
    ]
}

fn render(msg: &Incoming, ids: &[i64]) -> Vec<u8> {
    match msg {
        Incoming::Reply { to, body, error } => {
            let key = if *error { "error" } else { "result" };
            json!({"id": ids[to % ids.len()], key: body}).to_string().into_bytes()
        }
        Incoming::StrayReply(id) => json!({"id": id, "result": {}}).to_string().into_bytes(),
        Incoming::Event { method, params, session } => {
            let mut v = json!({"method": method});
            if let Some(p) = params {
                v["params"] = p.clone();
            }
            if let Some(s) = session {
                v["sessionId"] = s.clone();
            }
            v.to_string().into_bytes()
        }
        Incoming::Junk(bytes) => bytes.clone(),
    }
}

#[test]
fn deliver_resolves_pending_commands_only_by_their_id() {
    run(1_000, (1usize..8, vec(incoming(), 0..24)), |(pending, messages)| {
        let channel = Arc::new(DevToolsChannel::new());
        let browser = Arc::new(Recorder::default());
        channel.attach(browser.clone());
        let sink = Arc::new(Sink::default());
        channel.subscribe_raw(sink.clone());
        let events = channel.subscribe();
        let replies: Vec<_> =
            (0..pending).map(|i| channel.request(&format!("Test.m{i}"), json!({}), None).unwrap()).collect();
        let ids: Vec<i64> = browser.sent.lock().iter().map(|m| m["id"].as_i64().expect("integer ids")).collect();
        prop_assert_eq!(ids.len(), pending);

        // The oracle: the first message per pending id (as JSON with an integer id) resolves it.
        let mut first: Vec<Option<Value>> = vec![None; pending];
        let mut expected_events = 0;
        for msg in &messages {
            let bytes = render(msg, &ids);
            channel.deliver(&bytes);
            let Ok(v) = serde_json::from_slice::<Value>(&bytes) else { continue };
            match v.get("id").and_then(Value::as_i64) {
                Some(id) => {
                    if let Some(i) = ids.iter().position(|&p| p == id) {
                        first[i].get_or_insert(v);
                    }
                }
                None => expected_events += usize::from(v.get("method").is_some_and(Value::is_string)),
            }
        }

        prop_assert_eq!(sink.seen.lock().len(), messages.len(), "raw sinks see every message");
        prop_assert_eq!(events.try_iter().count(), expected_events);
        prop_assert_eq!(channel.pending_count(), first.iter().filter(|f| f.is_none()).count());
        for (reply, first) in replies.into_iter().zip(first) {
            let Some(message) = first else {
                prop_assert!(reply.receiver().try_recv().is_err(), "resolved without a reply carrying its id");
                continue;
            };
            let got = reply.wait(Duration::ZERO).expect("a resolved reply is ready");
            match (got, message.get("error")) {
                (Err(e), Some(error)) => {
                    prop_assert_eq!(Some(e.code), error.get("code").and_then(Value::as_i64).or(Some(-32000)));
                }
                (Ok(result), None) => prop_assert_eq!(result, message.get("result").cloned().unwrap_or(json!({}))),
                (got, _) => prop_assert!(false, "{:?} does not match {}", got, message),
            }
        }
        Ok(())
    });
}
