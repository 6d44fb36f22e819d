//! The emulated browser without a socket: fake guests, commands handed to
//! [`EmulatedBrowser`] directly, completions fed back by hand, and
//! assertions on the effects, in order. A small [`Harness`] keeps the
//! client's sessions and subscriptions as the router would.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::*;
use crate::fake_guests::FakeGuests;
use crate::guest::{DownloadBehavior, Guests, SinkEvent};
use crate::guest_call::PageInfo;
use crate::jobs::Job;
use crate::links::Links;
use crate::sessions::Sessions;

struct Harness {
    guests: Arc<FakeGuests>,
    browser: EmulatedBrowser,
    client: BrowserClient,
    sessions: Sessions,
    links: Links,
    _sinks: UnboundedReceiver<(u64, SinkEvent)>,
}

impl Harness {
    fn new() -> Self {
        let guests = Arc::new(FakeGuests::default());
        let env = Arc::new(BrowserEnv::new(guests.clone()).expect("randomness"));
        let (tx, rx) = unbounded_channel();
        Self {
            guests,
            browser: EmulatedBrowser::new(env),
            client: BrowserClient::default(),
            sessions: Sessions::default(),
            links: Links::new(tx),
            _sinks: rx,
        }
    }

    fn env(&self) -> Arc<BrowserEnv> {
        self.browser.env().clone()
    }

    /// A client command (its `sessionId`, if any, is where the reply goes).
    fn command(&mut self, message: Value) -> Vec<Effect> {
        let cmd = ClientCommand::parse(&message.to_string()).expect("a command");
        let session = cmd.session_id.clone();
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.handle(&mut self.client, view, cmd, session);
        self.settle(effects)
    }

    fn complete(&mut self, completion: Completion) -> Vec<Effect> {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.on_completion(&mut self.client, view, completion);
        self.settle(effects)
    }

    /// The guest described itself as target `target`.
    fn learned(&mut self, guest: &str, target: &str) -> Vec<Effect> {
        let channel = self.guests.channel(&GuestId::from(guest)).expect("a live guest");
        let info = PageInfo {
            target_id: target.into(),
            title: format!("Page {guest}"),
            url: format!("https://{guest}.test/"),
            engine_context: None,
        };
        let completion =
            Completion::Learned { guest: GuestId::from(guest), channel_key: channel_key(&channel), result: Ok(info) };
        self.complete(completion)
    }

    fn poll(&mut self) -> Vec<Effect> {
        let view = ClientView { sessions: &self.sessions, links: &self.links };
        let effects = self.browser.on_poll(&mut self.client, view);
        self.settle(effects)
    }

    /// Applies effects as the router does, then runs what queued; every effect, in order.
    fn settle(&mut self, effects: Vec<Effect>) -> Vec<Effect> {
        self.apply(&effects);
        let mut all = effects;
        loop {
            let view = ClientView { sessions: &self.sessions, links: &self.links };
            let Some(more) = self.browser.resume(&mut self.client, view) else { break };
            self.apply(&more);
            all.extend(more);
        }
        all
    }

    fn apply(&mut self, effects: &[Effect]) {
        for effect in effects {
            match effect {
                Effect::Link { guest, channel } => self.links.link(guest.clone(), channel.clone()),
                Effect::AddPage { session_id, guest, target_id, parent } => {
                    self.sessions.add_page(session_id.clone(), guest.clone(), target_id.clone(), parent.clone())
                }
                Effect::AddBrowserSession { session_id, parent } => {
                    self.sessions.add_browser(session_id.clone(), parent.clone())
                }
                Effect::RemoveSession(id) => {
                    self.sessions.remove(id);
                }
                Effect::AddChild { session_id, guest, target_id } => {
                    self.sessions.add_child(session_id.clone(), guest.clone(), target_id.clone(), false);
                }
                Effect::RemoveChild(id) => {
                    self.sessions.remove_child(id);
                }
                Effect::Release { guest, .. } => {
                    self.sessions.forget_children(guest);
                    self.links.unlink(guest);
                }
                _ => {}
            }
        }
    }

    /// Makes `guest` known as `target` (through `Target.getTargets`).
    fn know(&mut self, guest: &str, target: &str) {
        self.guests.add(guest);
        self.command(json!({"id": 900, "method": "Target.getTargets"}));
        self.learned(guest, target);
    }

    /// Attaches a page session to a known target; its id.
    fn attach(&mut self, target: &str) -> String {
        let effects = self.command(json!({"id": 901, "method": "Target.attachToTarget",
                                          "params": {"targetId": target, "flatten": true}}));
        sent(&effects).last().expect("a reply")["result"]["sessionId"].as_str().expect("a session").to_string()
    }
}

/// The messages for the client, parsed.
fn sent(effects: &[Effect]) -> Vec<Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(text) => Some(serde_json::from_str(text).expect("JSON")),
            _ => None,
        })
        .collect()
}

/// Each effect in a word: an event's method, `reply:<id>` / `error:<id>`, or the effect's name.
fn trace(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .map(|e| match e {
            Effect::Send(text) => {
                let v: Value = serde_json::from_str(text).expect("JSON");
                match (v["method"].as_str(), v.get("error")) {
                    (Some(m), _) => m.to_string(),
                    (None, Some(_)) => format!("error:{}", v["id"]),
                    (None, None) => format!("reply:{}", v["id"]),
                }
            }
            Effect::Run(job) => format!("Run({})", format!("{job:?}").split('(').next().unwrap_or_default()),
            other => format!("{other:?}").split('(').next().unwrap_or_default().to_string(),
        })
        .collect()
}

#[test]
fn the_version_is_answered_at_once_and_unknown_methods_are_not_found() {
    let mut h = Harness::new();
    let out = sent(&h.command(json!({"id": 1, "method": "Browser.getVersion"})));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["result"]["product"], "Chrome/131.0.0.0");
    assert_eq!(out[0]["result"]["protocolVersion"], "1.3");
    for (id, method) in [(2, "Browser.nope"), (3, "Browser.crash")] {
        let out = sent(&h.command(json!({"id": id, "method": method})));
        assert_eq!(
            out,
            vec![json!({"id": id, "error": {"code": -32601, "message": format!("'{method}' wasn't found")}})]
        );
    }
}

#[test]
fn get_targets_waits_until_every_page_described_itself_and_later_commands_wait_their_turn() {
    let mut h = Harness::new();
    h.guests.add("g1");
    h.guests.add("g2");
    let effects = h.command(json!({"id": 1, "method": "Target.getTargets"}));
    assert_eq!(trace(&effects), ["Run(Probe)", "Run(Probe)"]);
    assert!(h.command(json!({"id": 2, "method": "Browser.getVersion"})).is_empty(), "queued behind getTargets");
    assert!(trace(&h.learned("g1", "T1")).is_empty(), "g2 is still being asked");
    let effects = h.learned("g2", "T2");
    assert_eq!(trace(&effects), ["reply:1", "reply:2"]);
    let infos = &sent(&effects)[0]["result"]["targetInfos"];
    let context = h.env().context_id.clone();
    assert_eq!(
        *infos,
        json!([
            {"targetId": "T1", "type": "page", "title": "Page g1", "url": "https://g1.test/", "attached": false,
             "canAccessOpener": false, "browserContextId": context},
            {"targetId": "T2", "type": "page", "title": "Page g2", "url": "https://g2.test/", "attached": false,
             "canAccessOpener": false, "browserContextId": context},
        ])
    );
}

#[test]
fn auto_attach_attaches_each_page_before_its_reply_and_subscribes_once() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    let refused = h.command(json!({"id": 1, "method": "Target.setAutoAttach", "params": {"autoAttach": true}}));
    assert_eq!(sent(&refused)[0]["error"]["message"], "Only flatten mode is supported");
    let effects = h.command(json!({"id": 2, "method": "Target.setAutoAttach",
                                   "params": {"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}}));
    // The page is subscribed to once, though it also becomes the worker watcher.
    assert_eq!(trace(&effects), ["Link", "AddPage", "Target.attachedToTarget", "ToGuest", "reply:2"]);
    let attached = &sent(&effects)[0];
    let Effect::AddPage { session_id, parent: None, .. } = &effects[1] else { panic!("a page session on the root") };
    assert_eq!(attached["params"]["sessionId"], session_id.as_str());
    assert_eq!(attached["params"]["targetInfo"]["attached"], true);
    assert_eq!(attached["params"]["waitingForDebugger"], false);
    let Effect::ToGuest { method, params, .. } = &effects[3] else { panic!("the watcher's discovery") };
    assert_eq!(
        (*method, &params["filter"]),
        ("Target.setDiscoverTargets", &json!([{"type": "service_worker"}, {"type": "shared_worker"}]))
    );
    // Auto-attached once: the next poll attaches nothing again.
    assert!(!trace(&h.poll()).contains(&"AddPage".to_string()));
}

#[test]
fn discovery_announces_the_browser_target_then_each_page_before_the_reply() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    let effects = h.command(json!({"id": 3, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    assert_eq!(trace(&effects), ["Target.targetCreated", "Target.targetCreated", "Link", "ToGuest", "reply:3"]);
    let out = sent(&effects);
    assert_eq!(out[0]["params"]["targetInfo"]["type"], "browser");
    assert_eq!(out[0]["params"]["targetInfo"]["targetId"], h.env().target_id.as_str());
    assert_eq!(out[1]["params"]["targetInfo"]["targetId"], "T1");
    // Turned on again: nothing is announced twice.
    let again = h.command(json!({"id": 4, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    assert_eq!(trace(&again), ["reply:4"]);
}

#[test]
fn create_target_opens_through_the_app_and_replies_once_the_page_is_announced() {
    let mut h = Harness::new();
    h.command(json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    let effects = h.command(json!({"id": 5, "method": "Target.createTarget", "params": {"url": " "}}));
    let [Effect::Run(Job::Open { id: 5, url, context: None, focus: true, .. })] = effects.as_slice() else {
        panic!("an open: {effects:?}")
    };
    assert_eq!(url, "about:blank");
    assert!(h.command(json!({"id": 6, "method": "Browser.getVersion"})).is_empty(), "waits for the open");
    h.guests.add("g9");
    let effects = h.complete(Completion::Opened { id: 5, session: None, result: Ok(GuestId::from("g9")) });
    assert_eq!(trace(&effects), ["Run(Probe)"]);
    let effects = h.learned("g9", "T9");
    assert_eq!(trace(&effects), ["Target.targetCreated", "reply:5", "reply:6"]);
    assert_eq!(sent(&effects)[1]["result"], json!({"targetId": "T9"}));

    let denied = h.command(json!({"id": 7, "method": "Target.createTarget", "params": {"url": "file:///etc/passwd"}}));
    assert_eq!(sent(&denied)[0]["error"]["message"], "denied url: file URLs are not opened");
}

#[test]
fn closing_a_page_from_its_own_session_replies_before_that_session_detaches() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    let session = h.attach("T1");
    let effects = h.command(json!({"id": 7, "method": "Target.closeTarget", "params": {"targetId": "T1"},
                                   "sessionId": session}));
    assert_eq!(trace(&effects), ["Run(Close)"]);
    let closed =
        Completion::Closed { id: 7, session: Some(session.clone()), guest: GuestId::from("g1"), result: Ok(()) };
    let effects = h.complete(closed);
    assert_eq!(trace(&effects), ["reply:7", "FailPendingFor", "RemoveSession", "Target.detachedFromTarget", "Release"]);
    assert_eq!(sent(&effects)[0]["sessionId"], session.as_str());
    assert!(matches!(effects.last(), Some(Effect::Release { tidy: false, .. })), "a closed page needs no tidying");
    // Closed pages stay out of the list while the app still lists them.
    let out = sent(&h.command(json!({"id": 8, "method": "Target.getTargets"})));
    assert_eq!(out[0]["result"]["targetInfos"], json!([]));
}

#[test]
fn a_crash_ends_the_pages_sessions_and_keeps_it_out_until_it_recovers() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    let session = h.attach("T1");
    h.guests.fake_channel("g1").set_crashed(true);
    let view = ClientView { sessions: &h.sessions, links: &h.links };
    let effects = h.browser.guest_crashed(&mut h.client, view, &GuestId::from("g1"));
    h.apply(&effects);
    assert_eq!(
        trace(&effects),
        ["Inspector.targetCrashed", "FailPendingFor", "RemoveSession", "Target.detachedFromTarget", "Release"]
    );
    assert_eq!(sent(&effects)[0]["sessionId"], session.as_str());
    let out = sent(&h.command(json!({"id": 2, "method": "Target.getTargets"})));
    assert_eq!(out[0]["result"]["targetInfos"], json!([]));
    // Still dead at the next poll: still out.
    h.poll();
    let out = sent(&h.command(json!({"id": 3, "method": "Target.getTargets"})));
    assert_eq!(out[0]["result"]["targetInfos"], json!([]));
    // The renderer is back (the channel says so at the next poll): the page is asked again.
    h.guests.fake_channel("g1").set_crashed(false);
    h.poll();
    let effects = h.command(json!({"id": 4, "method": "Target.getTargets"}));
    assert_eq!(trace(&effects), ["Run(Probe)"]);
}

#[test]
fn detaching_the_last_session_releases_the_guest_and_tells_discovery() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    h.command(json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    let session = h.attach("T1");
    let effects = h.command(json!({"id": 2, "method": "Target.detachFromTarget", "params": {"sessionId": session}}));
    assert_eq!(
        trace(&effects),
        [
            "RemoveSession",
            "FailPendingOn",
            "Target.detachedFromTarget",
            "Release",
            "Target.targetInfoChanged",
            "reply:2"
        ]
    );
    assert!(matches!(effects[3], Effect::Release { tidy: true, .. }), "the next client must find a fresh page");
    assert_eq!(sent(&effects)[1]["params"]["targetInfo"]["attached"], false);
    let unknown = h.command(json!({"id": 3, "method": "Target.detachFromTarget", "params": {"sessionId": "NOPE"}}));
    assert_eq!(sent(&unknown)[0]["error"]["message"], "No session with given id");
}

#[test]
fn the_poll_drops_a_page_the_app_closed() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    h.command(json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    h.guests.remove("g1");
    let effects = h.poll();
    assert_eq!(trace(&effects), ["FailPendingFor", "Release", "Target.targetDestroyed"]);
    assert_eq!(sent(&effects)[0]["params"], json!({"targetId": "T1"}));
}

#[test]
fn a_worker_attach_that_cannot_reach_the_watcher_fails_the_clients_command() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    h.command(json!({"id": 1, "method": "Target.setDiscoverTargets", "params": {"discover": true}}));
    let created = serde_json::value::RawValue::from_string(
        json!({"targetInfo": {"targetId": "W1", "type": "service_worker", "title": "", "url": "https://g1.test/sw.js",
                              "attached": false, "canAccessOpener": false}})
        .to_string(),
    )
    .expect("JSON");
    let view = ClientView { sessions: &h.sessions, links: &h.links };
    let g1 = GuestId::from("g1");
    let effects = h.browser.on_watcher_event(&mut h.client, view, &g1, "Target.targetCreated", Some(&created));
    assert_eq!(trace(&effects.expect("a worker of the watcher")), ["Target.targetCreated"]);
    let effects = h.command(json!({"id": 4, "method": "Target.attachToTarget",
                                   "params": {"targetId": "W1", "flatten": true}}));
    let [Effect::ToGuest { id: message, method: "Target.attachToTarget", .. }] = effects.as_slice() else {
        panic!("an attach through the watcher: {effects:?}")
    };
    let view = ClientView { sessions: &h.sessions, links: &h.links };
    let failed = h.browser.internal_failed(&mut h.client, view, *message, None);
    assert_eq!(sent(&failed), vec![json!({"id": 4, "error": {"code": -32000, "message": "Target is gone"}})]);
}

#[test]
fn a_page_session_asks_for_its_own_window() {
    let mut h = Harness::new();
    h.know("g1", "T1");
    let session = h.attach("T1");
    let out = sent(&h.command(json!({"id": 5, "method": "Browser.getWindowForTarget", "sessionId": session})));
    assert_eq!(
        out,
        vec![json!({"id": 5, "sessionId": session, "result": {"windowId": 1,
                    "bounds": {"left": 10, "top": 20, "width": 800, "height": 600, "windowState": "normal"}}})]
    );
    let root = sent(&h.command(json!({"id": 6, "method": "Browser.getWindowForTarget"})));
    assert_eq!(root[0]["error"]["message"], "Browser window not found");
}

#[test]
fn browser_close_replies_then_closes_the_connection() {
    let mut h = Harness::new();
    let effects = h.command(json!({"id": 1, "method": "Browser.close"}));
    assert_eq!(trace(&effects), ["reply:1", "Close"]);
    assert!(matches!(effects[1], Effect::Close(1000, "Browser.close")));
}

#[test]
fn a_leaving_client_takes_its_download_behaviour_with_it() {
    let mut h = Harness::new();
    h.command(json!({"id": 1, "method": "Browser.setDownloadBehavior", "params": {"behavior": "deny"}}));
    let view = ClientView { sessions: &h.sessions, links: &h.links };
    let effects = h.browser.release(&mut h.client, view);
    assert!(effects.is_empty(), "nothing in the background: {effects:?}");
    assert_eq!(
        *h.guests.behaviors.lock().unwrap(),
        vec![(None, DownloadBehavior::Deny), (None, DownloadBehavior::Default)]
    );
}
