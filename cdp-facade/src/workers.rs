//! Service workers and shared workers as browser-level targets, as Chromium
//! lists them: `Target.targetCreated` / `targetDestroyed` with discovery on,
//! in `Target.getTargets`, attachable with `Target.attachToTarget` (Puppeteer's
//! `waitForTarget(t => t.type() === 'service_worker')` and `target.worker()`),
//! and auto-attached with browser-level auto-attach (Playwright's
//! `context.serviceWorkers()` and `serviceworker` event). Dedicated workers
//! stay children of their page, as before.
//!
//! Such workers belong to no page, but CEF reaches DevTools only through a
//! page's channel. One live guest is the *watcher*: its channel has target
//! discovery on, filtered to worker types (CEF's DevTools session there is
//! trusted, so it sees the whole browser's workers, every context's), and
//! workers are attached through it as flat child sessions whose events go to
//! the session that asked (the root, or a browser session). When the watcher
//! goes, its workers are reported gone and the next guest takes over, which
//! reports the live ones again.
//!
//! Another `impl Router` block; imports browser, browser_state, guest, protocol and router.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::browser::Step;
use crate::browser_state::RootCommand;
use crate::guest::GuestId;
use crate::protocol::{self, SERVER_ERROR};
use crate::router::Router;

/// The target types this module serves.
const WORKER_TYPES: [&str; 2] = ["service_worker", "shared_worker"];

/// The facade's view of the browser's service and shared workers, for one client.
#[derive(Debug, Default)]
pub(crate) struct Workers {
    /// The guest whose channel reports worker targets.
    watcher: Option<GuestId>,
    /// Live worker targets by id, as the engine describes them.
    known: BTreeMap<String, Value>,
    /// Announced to the client with `Target.targetCreated`.
    announced: HashSet<String>,
    /// Auto-attached (or being attached) for browser-level auto-attach.
    auto_attached: HashSet<String>,
    /// Workers being attached, by target id.
    attaching: HashMap<String, Attaching>,
    /// Attached workers' sessions, and the session their `detachedFromTarget` goes to.
    sessions: HashMap<String, Option<String>>,
    /// Worker sessions not yet told `Inspector.workerScriptLoaded`.
    script_untold: HashSet<String>,
}

/// One worker attach in flight through the watcher.
#[derive(Debug)]
struct Attaching {
    /// The session its `attachedToTarget` goes to (`None`: the root).
    announce_on: Option<String>,
    /// The client's `Target.attachToTarget`, answered once attached (none: an auto-attach).
    client_id: Option<i64>,
    /// The facade's own message to the watcher.
    message: i64,
}

impl Workers {
    /// Whether `target` is a live worker target.
    pub(crate) fn is_worker(&self, target: &str) -> bool {
        self.known.contains_key(target)
    }

    /// Discovery was turned off: the next time, every worker is announced again.
    pub(crate) fn forget_announced(&mut self) {
        self.announced.clear();
    }
}

fn target_info(params: Option<&RawValue>) -> Option<Value> {
    let v: Value = serde_json::from_str(params?.get()).ok()?;
    let info = v.get("targetInfo")?.clone();
    WORKER_TYPES.contains(&info.get("type")?.as_str()?).then_some(info)
}

fn target_id_of(info: &Value) -> Option<String> {
    info.get("targetId")?.as_str().map(str::to_string)
}

impl Router {
    /// Keeps a watcher while the client discovers or auto-attaches: picks a
    /// live guest and turns its worker discovery on.
    pub(crate) fn watch_workers(&mut self) {
        if !self.browser.discover && !self.browser.auto_attach {
            return;
        }
        let live = self.shared.guests.list();
        if self.browser.workers.watcher.as_ref().is_some_and(|w| live.contains(w) && !self.browser.excluded(w)) {
            return;
        }
        let Some(guest) = live.into_iter().find(|g| !self.browser.excluded(g) && self.link(g)) else {
            return;
        };
        self.browser.workers.watcher = Some(guest.clone());
        let filter: Vec<Value> = WORKER_TYPES.iter().map(|t| json!({"type": t})).collect();
        self.send_internal(&guest, "Target.setDiscoverTargets", &json!({"discover": true, "filter": filter}));
    }

    /// The watcher went away: its workers are gone for the client until
    /// another guest reports them (the next poll picks one: the guest being
    /// dropped is still listed now).
    pub(crate) fn workers_lost(&mut self, guest: &GuestId) {
        if self.browser.workers.watcher.as_ref() != Some(guest) {
            return;
        }
        let w = std::mem::take(&mut self.browser.workers);
        for (sid, parent) in w.sessions {
            let target = self.sessions.child(&sid).map(|c| c.target_id.clone()).unwrap_or_default();
            self.sessions.remove_child(&sid);
            self.emit("Target.detachedFromTarget", &json!({"sessionId": sid, "targetId": target}), parent.as_deref());
        }
        if self.browser.discover {
            for target in w.announced {
                self.emit("Target.targetDestroyed", &json!({"targetId": target}), None);
            }
        }
    }

    /// A watcher's discovery event; true when it was about a worker (and is consumed here).
    pub(crate) fn worker_target_event(&mut self, guest: &GuestId, method: &str, params: Option<&RawValue>) -> bool {
        if self.browser.workers.watcher.as_ref() != Some(guest) {
            return false;
        }
        match method {
            "Target.targetCreated" | "Target.targetInfoChanged" => {
                let Some(info) = target_info(params) else { return false };
                let Some(id) = target_id_of(&info) else { return true };
                let changed =
                    self.browser.workers.known.insert(id.clone(), info.clone()).is_some_and(|old| old != info);
                if changed && self.browser.discover && self.browser.workers.announced.contains(&id) {
                    let info = self.worker_target_info(&info);
                    self.emit("Target.targetInfoChanged", &json!({"targetInfo": info}), None);
                }
                self.announce_workers();
                true
            }
            "Target.targetDestroyed" => {
                #[derive(serde::Deserialize)]
                struct Destroyed {
                    #[serde(rename = "targetId")]
                    target_id: String,
                }
                let Some(d) = params.and_then(|p| serde_json::from_str::<Destroyed>(p.get()).ok()) else {
                    return false;
                };
                if self.browser.workers.known.remove(&d.target_id).is_none() {
                    return false;
                }
                self.browser.workers.auto_attached.remove(&d.target_id);
                if self.browser.workers.announced.remove(&d.target_id) && self.browser.discover {
                    self.emit("Target.targetDestroyed", &json!({"targetId": d.target_id}), None);
                }
                true
            }
            _ => false,
        }
    }

    /// Announces workers the client has not heard of (discovery, auto-attach).
    pub(crate) fn announce_workers(&mut self) {
        let known: Vec<(String, Value)> =
            self.browser.workers.known.iter().map(|(id, info)| (id.clone(), info.clone())).collect();
        for (id, info) in known {
            if self.browser.discover && self.browser.workers.announced.insert(id.clone()) {
                let info = self.worker_target_info(&info);
                self.emit("Target.targetCreated", &json!({"targetInfo": info}), None);
            }
            if self.browser.auto_attach && self.browser.workers.auto_attached.insert(id.clone()) {
                let owner = self.browser.auto_attach_owner.clone();
                self.attach_worker(&id, owner, None);
            }
        }
    }

    /// Every live worker's target info, for `Target.getTargets`.
    pub(crate) fn worker_target_infos(&self) -> Vec<Value> {
        self.browser.workers.known.values().map(|info| self.worker_target_info(info)).collect()
    }

    /// A worker's target info as the client sees it: its browser context
    /// named as the facade names it (that of a page in the same engine context).
    pub(crate) fn worker_target_info(&self, info: &Value) -> Value {
        let mut info = info.clone();
        let engine_context = info.get("browserContextId").and_then(Value::as_str).map(str::to_string);
        let guest = engine_context.and_then(|c| {
            self.browser
                .known
                .iter()
                .find(|(_, k)| k.info.engine_context.as_deref() == Some(c.as_str()))
                .map(|(g, _)| g.clone())
        });
        info["browserContextId"] = json!(match guest {
            Some(g) => self.browser_context_of(&g),
            None => self.shared.browser_context_id.clone(),
        });
        let attached = self.sessions_of_worker(info.get("targetId").and_then(Value::as_str).unwrap_or_default());
        info["attached"] = json!(attached);
        info
    }

    fn sessions_of_worker(&self, target: &str) -> bool {
        self.browser.workers.sessions.keys().any(|sid| self.sessions.child(sid).is_some_and(|c| c.target_id == target))
    }

    /// `Target.attachToTarget` for a worker: through the watcher; its reply
    /// (the session id) answers the client, after `attachedToTarget`.
    pub(crate) fn attach_to_worker(&mut self, rc: &RootCommand, target: &str) -> Step {
        self.attach_worker(target, rc.session.clone(), Some(rc.cmd.id));
        Step::Done
    }

    /// Attaches a worker through the watcher; `client_id`: the client
    /// command answered once it is attached (none: an auto-attach). The
    /// answer is the facade's own, so that `Inspector.workerScriptLoaded`
    /// can follow it, as Chromium sends it (CEF 131 does not, and Puppeteer
    /// waits for it before it evaluates in a worker).
    fn attach_worker(&mut self, target: &str, announce_on: Option<String>, client_id: Option<i64>) {
        let message = self.browser.workers.watcher.clone().and_then(|watcher| {
            self.send_internal(&watcher, "Target.attachToTarget", &json!({"targetId": target, "flatten": true}))
        });
        let Some(message) = message else {
            if let Some(id) = client_id {
                self.fail(id, announce_on.as_deref(), SERVER_ERROR, "Target is gone");
            }
            return;
        };
        self.browser.workers.attaching.insert(target.to_string(), Attaching { announce_on, client_id, message });
    }

    /// The watcher refused an attach (the worker ended meanwhile): the client's command fails with its words.
    pub(crate) fn worker_attach_failed(&mut self, message: i64, error: &str) {
        let Some(target) =
            self.browser.workers.attaching.iter().find(|(_, a)| a.message == message).map(|(t, _)| t.clone())
        else {
            return;
        };
        let Some(a) = self.browser.workers.attaching.remove(&target) else { return };
        if let Some(id) = a.client_id {
            let text = serde_json::from_str::<Value>(error)
                .ok()
                .and_then(|e| e.get("message").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "Target is gone".into());
            self.fail(id, a.announce_on.as_deref(), SERVER_ERROR, &text);
        }
    }

    /// The watcher attached a worker: a child session of it, announced where it was asked for. True when handled.
    pub(crate) fn worker_attached(&mut self, guest: &GuestId, session_id: &str, target: &str, raw: &str) -> bool {
        if self.browser.workers.watcher.as_ref() != Some(guest) {
            return false;
        }
        let Some(Attaching { announce_on, client_id, .. }) = self.browser.workers.attaching.remove(target) else {
            return false;
        };
        self.sessions.add_child(session_id.to_string(), guest.clone(), target.to_string(), false);
        self.browser.workers.sessions.insert(session_id.to_string(), announce_on.clone());
        let Ok(mut event) = serde_json::from_str::<Value>(raw) else { return true };
        if let Some(info) = event.pointer("/params/targetInfo").cloned() {
            let mut info = self.worker_target_info(&info);
            info["attached"] = json!(true);
            event["params"]["targetInfo"] = info;
        }
        // Attached while running: nothing waits for a debugger.
        event["params"]["waitingForDebugger"] = json!(false);
        let text = event.to_string();
        self.send(match &announce_on {
            Some(s) => protocol::with_session(&text, s),
            None => text,
        });
        if let Some(id) = client_id {
            self.reply(id, announce_on.as_deref(), json!({"sessionId": session_id}));
        }
        // A running service or shared worker has loaded its script: told
        // before the session's first command is answered (see `worker_session_used`).
        self.browser.workers.script_untold.insert(session_id.to_string());
        true
    }

    /// The client sends its first command on a worker session:
    /// `Inspector.workerScriptLoaded` goes first, as Chromium sends it once
    /// the client uses the session (Puppeteer listens for it only then).
    pub(crate) fn worker_session_used(&mut self, session_id: &str) {
        if self.browser.workers.script_untold.remove(session_id) {
            self.emit("Inspector.workerScriptLoaded", &json!({}), Some(session_id));
        }
    }

    /// A worker's session ended. True when it was one.
    pub(crate) fn worker_detached(&mut self, session_id: &str, raw: &str) -> bool {
        let Some(announce_on) = self.browser.workers.sessions.remove(session_id) else { return false };
        self.browser.workers.script_untold.remove(session_id);
        self.sessions.remove_child(session_id);
        self.send(match announce_on {
            Some(s) => protocol::with_session(raw, &s),
            None => raw.to_string(),
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_worker_targets_are_taken() {
        let raw =
            |t: &str| RawValue::from_string(json!({"targetInfo": {"targetId": "T", "type": t}}).to_string()).unwrap();
        assert!(target_info(Some(&raw("service_worker"))).is_some());
        assert!(target_info(Some(&raw("shared_worker"))).is_some());
        assert!(target_info(Some(&raw("page"))).is_none());
        assert!(target_info(Some(&raw("worker"))).is_none(), "dedicated workers stay children of their page");
        assert!(target_info(None).is_none());
    }
}
