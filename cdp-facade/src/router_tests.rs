//! The router without a socket: client text in, what it writes to the
//! client and to the fake guest's channel out.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::*;
use crate::browser_env::BrowserEnv;
use crate::client_slot::ClientSlot;
use crate::config::FacadeConfig;
use crate::downloads::DownloadNotifier;
use crate::fake_guests::{FakeChannel, FakeGuests};
use crate::guest::{channel_key, Guests};
use crate::guest_call::PageInfo;
use crate::ids::FACADE_ID_RANGE;

struct Client {
    router: Router,
    out: UnboundedReceiver<Outgoing>,
    _inputs: RouterInputs,
    guests: Arc<FakeGuests>,
}

impl Client {
    fn new() -> Self {
        let guests = Arc::new(FakeGuests::default());
        let shared = Arc::new(Shared {
            token: local_guard::Token::generate().expect("randomness"),
            port: 0,
            config: FacadeConfig::default(),
            env: Arc::new(BrowserEnv::new(guests.clone()).expect("randomness")),
            clients: ClientSlot::default(),
            guests_changed: Arc::new(tokio::sync::Notify::new()),
            downloads: DownloadNotifier::new(),
        });
        let (tx, out) = unbounded_channel();
        let (router, inputs) = Router::new(shared, tx);
        Self { router, out, _inputs: inputs, guests }
    }

    fn send(&mut self, message: Value) {
        self.router.on_client_text(&message.to_string());
    }

    /// What the router wrote to the client since last asked.
    fn written(&mut self) -> Vec<Value> {
        let mut texts = Vec::new();
        while let Ok(Outgoing::Text(text)) = self.out.try_recv() {
            texts.push(serde_json::from_str(&text).expect("JSON"));
        }
        texts
    }

    /// A page session on a new guest `g1` (target `T1`), attached by the client; its id and the guest's channel.
    fn attached_page(&mut self) -> (String, Arc<FakeChannel>) {
        let channel = self.guests.add("g1");
        self.send(json!({"id": 1, "method": "Target.attachToTarget", "params": {"targetId": "T1", "flatten": true}}));
        let key = channel_key(&self.guests.channel(&GuestId::from("g1")).expect("a channel"));
        let info = PageInfo {
            target_id: "T1".into(),
            title: "One".into(),
            url: "https://one.test/".into(),
            engine_context: None,
        };
        self.router.on_completion(Completion::Learned {
            guest: GuestId::from("g1"),
            channel_key: key,
            result: Ok(info),
        });
        let written = self.written();
        assert_eq!(written[0]["method"], "Target.attachedToTarget");
        let session = written[1]["result"]["sessionId"].as_str().expect("a session").to_string();
        (session, channel)
    }
}

#[tokio::test]
async fn a_page_sessions_browser_methods_go_to_the_browser_and_the_rest_to_its_guest() {
    let mut c = Client::new();
    let (session, channel) = c.attached_page();

    // Browser-level on any session: answered by the emulated browser, nothing reaches the page.
    c.send(json!({"id": 2, "method": "Target.getBrowserContexts", "sessionId": session}));
    let written = c.written();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["id"], 2);
    assert_eq!(written[0]["sessionId"], session.as_str());
    assert!(written[0]["result"]["defaultBrowserContextId"].is_string());
    assert!(channel.sent().iter().all(|m| m.contains("Target.getTargetInfo")), "only the browser's own probe");

    // Browser-level only on the root: a page session's goes to its page, as in Chromium.
    c.send(json!({"id": 3, "method": "Target.setDiscoverTargets", "params": {"discover": true}, "sessionId": session}));
    c.send(json!({"id": 4, "method": "Runtime.evaluate", "params": {"expression": "1+1"}, "sessionId": session}));
    let sent: Vec<Value> = channel
        .sent()
        .iter()
        .map(|m| serde_json::from_str::<Value>(m).expect("JSON"))
        .filter(|m| m["method"] != "Target.getTargetInfo") // the browser's own probe
        .collect();
    assert_eq!(
        sent.iter().map(|m| m["method"].as_str().unwrap_or_default()).collect::<Vec<_>>(),
        ["Target.setDiscoverTargets", "Runtime.evaluate"]
    );
    assert!(sent.iter().all(|m| FACADE_ID_RANGE.contains(&m["id"].as_i64().unwrap_or_default())));
    assert!(sent.iter().all(|m| m.get("sessionId").is_none()), "to the page itself");

    // The guest's reply comes back under the client's id, on its session.
    let reply = json!({"id": sent[1]["id"], "result": {"result": {"type": "number", "value": 2}}});
    c.router.on_guest(1, SinkEvent::Message(reply.to_string()));
    assert_eq!(
        c.written(),
        vec![json!({"id": 4, "result": {"result": {"type": "number", "value": 2}}, "sessionId": session})]
    );
}

#[tokio::test]
async fn a_crashed_guest_fails_what_waits_and_detaches_its_session() {
    let mut c = Client::new();
    let (session, channel) = c.attached_page();
    c.send(json!({"id": 5, "method": "Runtime.evaluate", "params": {"expression": "1"}, "sessionId": session}));
    channel.set_crashed(true);
    c.router.on_guest(1, SinkEvent::Gone);
    let methods: Vec<String> = c
        .written()
        .iter()
        .map(|m| m["method"].as_str().map_or_else(|| format!("error:{}", m["id"]), str::to_string))
        .collect();
    assert_eq!(methods, ["Inspector.targetCrashed", "error:5", "Target.detachedFromTarget"]);
    c.send(json!({"id": 6, "method": "Runtime.evaluate", "sessionId": session}));
    assert_eq!(c.written()[0]["error"]["message"], "Session with given id not found.");
}
