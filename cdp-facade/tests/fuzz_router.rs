//! Property test of the facade's CDP message router over a real WebSocket,
//! with the fake guests of `support`: batches of arbitrary JSON-ish client
//! messages (missing, non-integer, huge and negative ids, duplicate keys,
//! params of the wrong type, unknown and non-string sessions, unknown
//! methods, non-objects, non-JSON), optionally ended by a frame that must
//! close the connection (binary → 1003, invalid UTF-8 → 1007, over the cap → 1009).
//!
//! Per case: every message with an integer id gets exactly one reply with
//! that id, every other message exactly one id-less error, nothing answers an
//! id that was never sent, a sentinel command on the same connection is still
//! answered afterwards, and a fatal frame closes with its code while the
//! next client is served normally. `PROPTEST_CASES` scales it (see `fuzz/run`).

mod support;

use std::collections::HashMap;
use std::sync::Arc;

use cdp_facade::{Facade, FacadeConfig, Guests};
use futures_util::SinkExt;
use local_guard::Token;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use support::*;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::Message;

fn cases(bounded: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(bounded)
}

/// Incoming message cap for the facade under test: small, so the 1009 case is cheap to build.
const MAX_MESSAGE: usize = 64 * 1024;

/// Which session a message names.
#[derive(Debug, Clone)]
enum Sess {
    Root,
    /// The page session attached at the start of the case.
    Page,
    /// A browser session from `Target.attachToBrowserTarget`.
    Browser,
    Unknown(String),
    /// A `sessionId` that is not a string (treated as absent, like Chromium).
    NotString(Value),
}

/// Integer id forms; the message index keeps them unique within a case.
#[derive(Debug, Clone, Copy)]
enum IdForm {
    Small,
    Negative,
    NearMax,
    NearMin,
    /// Inside the range the facade uses for its own guest ids.
    FacadeRange,
    Beyond53Bits,
}

impl IdForm {
    fn id(self, index: usize) -> i64 {
        let i = index as i64;
        match self {
            IdForm::Small => i,
            IdForm::Negative => -(i + 1),
            IdForm::NearMax => i64::MAX - i,
            IdForm::NearMin => i64::MIN + i,
            IdForm::FacadeRange => (1 << 30) + i,
            IdForm::Beyond53Bits => (1 << 53) + i,
        }
    }
}

#[derive(Debug, Clone)]
enum Msg {
    /// A command with an integer id; params may be any JSON, including non-objects.
    Command { id: IdForm, method: String, params: Option<Value>, session: Sess },
    /// An integer id with a missing or non-string method.
    NoMethod { id: IdForm, method: Option<Value>, session: Sess },
    /// An id that is absent or not an integer CDP accepts.
    BadId { id: Option<Value>, method: String, session: Sess },
    /// The same key twice.
    DuplicateKey { id: IdForm },
    /// Valid JSON that is not an object (arrays shaped like a command included).
    NotObject(Value),
    /// Text that is not JSON.
    NotJson(String),
}

#[derive(Debug, Clone)]
enum Fatal {
    Binary(Vec<u8>),
    InvalidUtf8(Vec<u8>),
    TooBig(usize),
}

#[derive(Debug, Clone)]
struct Case {
    /// Start with Puppeteer's `page.authenticate()` flow on the page (issue 13's dropped connection).
    auth_flow: bool,
    messages: Vec<Msg>,
    fatal: Option<Fatal>,
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec![
            "Runtime.evaluate",
            "Page.navigate",
            "Page.enable",
            "Page.getFrameTree",
            "Browser.getVersion",
            "Browser.crash",
            "Browser.setDownloadBehavior",
            "Target.getTargets",
            "Target.getTargetInfo",
            "Target.getBrowserContexts",
            "Target.setDiscoverTargets",
            "Target.setAutoAttach",
            "Target.attachToTarget",
            "Target.attachToBrowserTarget",
            "Target.detachFromTarget",
            "Target.createTarget",
            "Target.closeTarget",
            "Target.activateTarget",
            "Target.createBrowserContext",
            "Storage.getCookies",
            "Storage.setCookies",
            "Storage.clearCookies",
            "Runtime.runIfWaitingForDebugger",
            "Fetch.enable",
            "Fetch.continueRequest",
            "Fetch.continueWithAuth",
            "Fetch.disable",
            "Page.captureScreenshot",
            "Test.fail",
            "Nope.method",
            "",
        ])
        .prop_map(String::from),
        1 => ".{0,16}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec!["about:blank", "https://a.test/", "javascript:alert(1)", "targetId", "sessionId"])
            .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        let keys = prop::sample::select(vec![
            "targetId",
            "sessionId",
            "url",
            "flatten",
            "autoAttach",
            "discover",
            "expression",
            "cookies",
            "behavior",
            "handleAuthRequests",
            "requestId",
            "authChallengeResponse",
            "fromSurface",
            "x",
        ]);
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn session() -> impl Strategy<Value = Sess> {
    prop_oneof![
        4 => Just(Sess::Root),
        4 => Just(Sess::Page),
        1 => Just(Sess::Browser),
        1 => ".{0,40}".prop_map(Sess::Unknown),
        1 => json_value().prop_filter("not a string", |v| !v.is_string() && !v.is_null()).prop_map(Sess::NotString),
    ]
}

fn id_form() -> impl Strategy<Value = IdForm> {
    prop::sample::select(vec![
        IdForm::Small,
        IdForm::Negative,
        IdForm::NearMax,
        IdForm::NearMin,
        IdForm::FacadeRange,
        IdForm::Beyond53Bits,
    ])
}

fn message() -> impl Strategy<Value = Msg> {
    let bad_id = prop_oneof![
        Just(None),
        Just(Some(json!(9_223_372_036_854_775_808u64))),
        Just(Some(json!(u64::MAX))),
        Just(Some(json!(1.5))),
        Just(Some(json!(1.0))),
        Just(Some(json!("1"))),
        Just(Some(Value::Null)),
        Just(Some(json!([1]))),
        Just(Some(json!({"id": 1}))),
        Just(Some(json!(true))),
    ];
    prop_oneof![
        8 => (id_form(), method(), prop::option::weighted(0.7, json_value()), session())
            .prop_map(|(id, method, params, session)| Msg::Command { id, method, params, session }),
        1 => (id_form(), prop::option::of(json_value().prop_filter("not a string", |v| !v.is_string())), session())
            .prop_map(|(id, method, session)| Msg::NoMethod { id, method, session }),
        2 => (bad_id, method(), session()).prop_map(|(id, method, session)| Msg::BadId { id, method, session }),
        1 => id_form().prop_map(|id| Msg::DuplicateKey { id }),
        1 => prop_oneof![
            json_value().prop_filter("not an object", |v| !v.is_object()),
            (any::<i32>(), method()).prop_map(|(id, m)| json!([id, m, null, null])),
        ]
        .prop_map(Msg::NotObject),
        1 => ".{0,24}".prop_filter("not JSON", |s| serde_json::from_str::<Value>(s).is_err()).prop_map(Msg::NotJson),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let fatal = prop_oneof![
        vec(any::<u8>(), 0..64).prop_map(Fatal::Binary),
        prop_oneof![
            Just(vec![0xff]),
            Just(vec![b'{', 0xc0, 0xaf, b'}']),
            Just(vec![0xed, 0xa0, 0x80]),
            vec(128u8.., 1..16)
        ]
        .prop_filter("invalid UTF-8", |b| std::str::from_utf8(b).is_err())
        .prop_map(Fatal::InvalidUtf8),
        (MAX_MESSAGE + 1..MAX_MESSAGE + 4096).prop_map(Fatal::TooBig),
    ];
    (prop::bool::weighted(0.25), vec(message(), 1..16), prop::option::weighted(0.1, fatal))
        .prop_map(|(auth_flow, messages, fatal)| Case { auth_flow, messages, fatal })
}

/// What a message must be answered with.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Expect {
    Id(i64),
    IdLess,
}

struct Ids {
    page: String,
    browser: String,
}

fn session_value(s: &Sess, ids: &Ids) -> Option<Value> {
    match s {
        Sess::Root => None,
        Sess::Page => Some(json!(ids.page)),
        Sess::Browser => Some(json!(ids.browser)),
        Sess::Unknown(text) => Some(json!(text)),
        Sess::NotString(v) => Some(v.clone()),
    }
}

/// The frame text and the reply it must get.
fn render(msg: &Msg, index: usize, ids: &Ids) -> (String, Expect) {
    let mut object = Map::new();
    let expect = match msg {
        Msg::Command { id, method, params, session } => {
            object.insert("id".into(), json!(id.id(index)));
            object.insert("method".into(), json!(method));
            if let Some(p) = params {
                object.insert("params".into(), p.clone());
            }
            if let Some(s) = session_value(session, ids) {
                object.insert("sessionId".into(), s);
            }
            Expect::Id(id.id(index))
        }
        Msg::NoMethod { id, method, session } => {
            object.insert("id".into(), json!(id.id(index)));
            if let Some(m) = method {
                object.insert("method".into(), m.clone());
            }
            if let Some(s) = session_value(session, ids) {
                object.insert("sessionId".into(), s);
            }
            Expect::Id(id.id(index))
        }
        Msg::BadId { id, method, session } => {
            if let Some(id) = id {
                object.insert("id".into(), id.clone());
            }
            object.insert("method".into(), json!(method));
            if let Some(s) = session_value(session, ids) {
                object.insert("sessionId".into(), s);
            }
            Expect::IdLess
        }
        Msg::DuplicateKey { id } => {
            let id = id.id(index);
            return (format!(r#"{{"id":{id},"method":"Browser.getVersion","id":{id}}}"#), Expect::IdLess);
        }
        Msg::NotObject(v) => return (v.to_string(), Expect::IdLess),
        Msg::NotJson(text) => return (text.clone(), Expect::IdLess),
    };
    (Value::Object(object).to_string(), expect)
}

/// A reply answers a command: it has an id, or it is an error that is not an event.
fn classify(msg: &Value) -> Option<Expect> {
    if let Some(id) = msg.get("id") {
        return Some(Expect::Id(id.as_i64().expect("reply ids are integers")));
    }
    (msg.get("error").is_some() && msg.get("method").is_none()).then_some(Expect::IdLess)
}

async fn run_case(
    facade: &Facade,
    guests: &Arc<FakeGuests>,
    page_target: &str,
    case: &Case,
    n: u64,
) -> Result<(), TestCaseError> {
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (attached, _) =
        cdp.call("Target.attachToTarget", Some(json!({"targetId": page_target, "flatten": true})), None).await;
    let page = attached["result"]["sessionId"].as_str().expect("attach to the page").to_string();
    let (attached, _) = cdp.call("Target.attachToBrowserTarget", None, None).await;
    let browser = attached["result"]["sessionId"].as_str().expect("attach to the browser").to_string();
    let ids = Ids { page, browser };
    if case.auth_flow {
        auth_flow(&mut cdp, &ids.page).await?;
    }

    let mut expected: HashMap<Expect, usize> = HashMap::new();
    let mut sent = Vec::new();
    for (index, msg) in case.messages.iter().enumerate() {
        let (text, expect) = render(msg, index, &ids);
        *expected.entry(expect).or_default() += 1;
        cdp.ws.send(Message::Text(text.clone().into())).await.unwrap();
        sent.push(text);
    }
    // The sentinel is a root command: the root queue is FIFO and guest replies are routed before
    // the next client frame, so its reply comes after the reply to everything sent before it.
    let sentinel = 7_000_000_000_000 + n as i64;
    cdp.ws
        .send(Message::Text(json!({"id": sentinel, "method": "Browser.getVersion"}).to_string().into()))
        .await
        .unwrap();
    let mut got: HashMap<Expect, usize> = HashMap::new();
    loop {
        let msg = cdp.next().await;
        match classify(&msg) {
            Some(Expect::Id(id)) if id == sentinel => {
                prop_assert!(msg["result"]["product"].is_string(), "sentinel failed: {}", msg);
                break;
            }
            Some(expect) => *got.entry(expect).or_default() += 1,
            None => {}
        }
    }
    prop_assert_eq!(got, expected, "replies do not match the messages sent: {:#?}", sent);
    if case.auth_flow {
        // What issue 13 saw fail with "Target closed" after the auth flow.
        let (reply, _) = cdp.call("Target.createTarget", Some(json!({"url": "about:blank"})), None).await;
        prop_assert!(reply["result"]["targetId"].is_string(), "createTarget after the auth flow: {}", reply);
    }

    if let Some(fatal) = &case.fatal {
        let code = match fatal {
            Fatal::Binary(bytes) => {
                cdp.ws.send(Message::Binary(bytes.clone().into())).await.unwrap();
                1003
            }
            Fatal::InvalidUtf8(bytes) => {
                cdp.ws
                    .send(Message::Frame(Frame::message(bytes.clone(), OpCode::Data(Data::Text), true)))
                    .await
                    .unwrap();
                1007
            }
            Fatal::TooBig(len) => {
                cdp.ws.send(Message::Text("x".repeat(*len).into())).await.unwrap();
                1009
            }
        };
        prop_assert_eq!(cdp.close_code().await, Some(code));
    } else {
        let (reply, _) = cdp.call("Target.detachFromTarget", Some(json!({"sessionId": ids.page})), None).await;
        prop_assert!(reply.get("id").is_some());
    }
    drop(cdp);
    // Targets the fuzzer created (Target.createTarget with a valid url) are closed again.
    for id in guests.list().into_iter().skip(2) {
        guests.remove(&id);
    }
    Ok(())
}

/// Puppeteer's `page.authenticate()` then a challenged load: `Fetch.enable` with
/// `handleAuthRequests`, the paused request continued, the challenge answered.
async fn auth_flow(cdp: &mut Cdp, page: &str) -> Result<(), TestCaseError> {
    let enable = json!({"handleAuthRequests": true, "patterns": [{"urlPattern": "*"}]});
    let (reply, _) = cdp.call("Fetch.enable", Some(enable), Some(page)).await;
    prop_assert_eq!(&reply["result"], &json!({}), "Fetch.enable: {}", reply);
    let (challenge, _) = cdp.event("Fetch.authRequired").await;
    let request_id = challenge["params"]["requestId"].clone();
    let (reply, _) = cdp.call("Fetch.continueRequest", Some(json!({"requestId": request_id})), Some(page)).await;
    prop_assert_eq!(&reply["result"], &json!({}), "Fetch.continueRequest: {}", reply);
    let answer = json!({"requestId": request_id, "authChallengeResponse":
        {"response": "ProvideCredentials", "username": "user", "password": "pass"}});
    let (reply, _) = cdp.call("Fetch.continueWithAuth", Some(answer), Some(page)).await;
    prop_assert_eq!(&reply["result"], &json!({}), "Fetch.continueWithAuth: {}", reply);
    Ok(())
}

#[test]
fn every_message_gets_exactly_one_reply_and_the_socket_survives() {
    let guests = FakeGuests::new();
    let (_, page) = guests.add("https://one.test/", true);
    guests.add("https://two.test/", false);
    let facade = Facade::start(
        FacadeConfig { max_message_bytes: MAX_MESSAGE, ..FacadeConfig::default() },
        Token::generate().unwrap(),
        guests.clone() as Arc<dyn Guests>,
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let counter = std::sync::atomic::AtomicU64::new(0);
    let wanted = cases(500);
    let config = Config { cases: wanted, max_shrink_iters: 128, failure_persistence: None, ..Config::default() };
    let result = TestRunner::new(config).run(&case(), |case| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        runtime.block_on(run_case(&facade, &guests, &page.target_id, &case, n))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(counter.load(std::sync::atomic::Ordering::Relaxed) >= u64::from(wanted), "fewer cases ran than asked for");
    // After everything, a fresh client is served normally.
    runtime.block_on(async {
        let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
        let (reply, _) = cdp.call("Target.getTargets", None, None).await;
        assert_eq!(reply["result"]["targetInfos"].as_array().map(Vec::len), Some(2));
    });
    facade.close();
}

/// Regression (found by the property above): serde's derived struct also
/// accepted a JSON array of the fields in order, so `[1,"Runtime.evaluate",null,null]`
/// ran as a command. CDP messages are objects; anything else is a parse error.
#[tokio::test]
async fn a_command_shaped_array_is_a_parse_error() {
    let guests = FakeGuests::new();
    let facade =
        Facade::start(FacadeConfig::default(), Token::generate().unwrap(), guests.clone() as Arc<dyn Guests>).unwrap();
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    for text in [r#"[1,"Browser.getVersion",null,null]"#, r#" [2,"Browser.getVersion"]"#] {
        cdp.ws.send(Message::Text(text.into())).await.unwrap();
        let reply = cdp.next().await;
        assert_eq!(
            reply,
            json!({"error": {"code": -32700, "message": "Message must be a valid JSON object"}}),
            "{text}"
        );
    }
    let (reply, _) = cdp.call("Browser.getVersion", None, None).await;
    assert!(reply["result"]["product"].is_string());
    facade.close();
}
