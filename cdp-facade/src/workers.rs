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
//! Per client: the workers it sees, the watcher, and the worker sessions
//! it holds.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::effect::{Effect, RootCommand, Step, Turn};
use crate::guest::GuestId;
use crate::protocol::{self, SERVER_ERROR};
use crate::target_watch::TargetWatch;
use crate::targets::Targets;

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

    /// Keeps a watcher while the client discovers or auto-attaches: picks a
    /// live guest and turns its worker discovery on.
    pub(crate) fn watch(&mut self, turn: &mut Turn, watch: &TargetWatch, targets: &Targets) {
        if !watch.watching() {
            return;
        }
        let live = turn.env.guests.list();
        if self.watcher.as_ref().is_some_and(|w| live.contains(w) && !targets.excluded(w)) {
            return;
        }
        let Some(guest) = live.into_iter().find(|g| !targets.excluded(g) && turn.link(g)) else {
            return;
        };
        self.watcher = Some(guest.clone());
        let filter: Vec<Value> = WORKER_TYPES.iter().map(|t| json!({"type": t})).collect();
        turn.tell_guest(&guest, "Target.setDiscoverTargets", json!({"discover": true, "filter": filter}));
    }

    /// The watcher went away: its workers are gone for the client until
    /// another guest reports them (the next poll picks one: the guest being
    /// dropped is still listed now).
    pub(crate) fn lost(&mut self, turn: &mut Turn, watch: &TargetWatch, guest: &GuestId) {
        if self.watcher.as_ref() != Some(guest) {
            return;
        }
        let w = std::mem::take(self);
        for (sid, parent) in w.sessions {
            let target = turn.child(&sid).map(|c| c.target_id.clone()).unwrap_or_default();
            turn.push(Effect::RemoveChild(sid.clone()));
            turn.event("Target.detachedFromTarget", &json!({"sessionId": sid, "targetId": target}), parent.as_deref());
        }
        if watch.discover {
            for target in w.announced {
                turn.event("Target.targetDestroyed", &json!({"targetId": target}), None);
            }
        }
    }

    /// A watcher's discovery event; true when it was about a worker (and is consumed here).
    pub(crate) fn target_event(
        &mut self,
        turn: &mut Turn,
        watch: &TargetWatch,
        targets: &Targets,
        guest: &GuestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> bool {
        if self.watcher.as_ref() != Some(guest) {
            return false;
        }
        match method {
            "Target.targetCreated" | "Target.targetInfoChanged" => {
                let Some(info) = target_info(params) else { return false };
                let Some(id) = target_id_of(&info) else { return true };
                let changed = self.known.insert(id.clone(), info.clone()).is_some_and(|old| old != info);
                if changed && watch.discover && self.announced.contains(&id) {
                    let info = self.target_info(turn, targets, &info);
                    turn.event("Target.targetInfoChanged", &json!({"targetInfo": info}), None);
                }
                self.announce(turn, watch, targets);
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
                if self.known.remove(&d.target_id).is_none() {
                    return false;
                }
                self.auto_attached.remove(&d.target_id);
                if self.announced.remove(&d.target_id) && watch.discover {
                    turn.event("Target.targetDestroyed", &json!({"targetId": d.target_id}), None);
                }
                true
            }
            _ => false,
        }
    }

    /// Announces workers the client has not heard of (discovery, auto-attach).
    pub(crate) fn announce(&mut self, turn: &mut Turn, watch: &TargetWatch, targets: &Targets) {
        let known: Vec<(String, Value)> = self.known.iter().map(|(id, info)| (id.clone(), info.clone())).collect();
        for (id, info) in known {
            if watch.discover && self.announced.insert(id.clone()) {
                let info = self.target_info(turn, targets, &info);
                turn.event("Target.targetCreated", &json!({"targetInfo": info}), None);
            }
            if watch.auto_attach && self.auto_attached.insert(id.clone()) {
                self.attach(turn, &id, watch.auto_attach_owner.clone(), None);
            }
        }
    }

    /// Every live worker's target info, for `Target.getTargets`.
    pub(crate) fn target_infos(&self, turn: &Turn, targets: &Targets) -> Vec<Value> {
        self.known.values().map(|info| self.target_info(turn, targets, info)).collect()
    }

    /// A live worker's target info, for `Target.getTargetInfo`.
    pub(crate) fn target_info_of(&self, turn: &Turn, targets: &Targets, target: &str) -> Option<Value> {
        self.target_infos(turn, targets).into_iter().find(|i| i["targetId"] == target)
    }

    /// A worker's target info as the client sees it: its browser context
    /// named as the facade names it (that of a page in the same engine context).
    fn target_info(&self, turn: &Turn, targets: &Targets, info: &Value) -> Value {
        let mut info = info.clone();
        let engine_context = info.get("browserContextId").and_then(Value::as_str).map(str::to_string);
        let guest = engine_context.and_then(|c| targets.guest_in_engine_context(&c));
        info["browserContextId"] = json!(match guest {
            Some(g) => turn.env.browser_context_of(&g),
            None => turn.env.context_id.clone(),
        });
        let attached = self.has_session(turn, info.get("targetId").and_then(Value::as_str).unwrap_or_default());
        info["attached"] = json!(attached);
        info
    }

    fn has_session(&self, turn: &Turn, target: &str) -> bool {
        self.sessions.keys().any(|sid| turn.child(sid).is_some_and(|c| c.target_id == target))
    }

    /// `Target.attachToTarget` for a worker: through the watcher; its reply
    /// (the session id) answers the client, after `attachedToTarget`.
    pub(crate) fn attach_to_worker(&mut self, turn: &mut Turn, rc: &RootCommand, target: &str) -> Step {
        self.attach(turn, target, rc.session.clone(), Some(rc.cmd.id));
        Step::Done
    }

    /// Attaches a worker through the watcher; `client_id`: the client
    /// command answered once it is attached (none: an auto-attach). The
    /// answer is the facade's own, so that `Inspector.workerScriptLoaded`
    /// can follow it, as Chromium sends it (CEF 131 does not, and Puppeteer
    /// waits for it before it evaluates in a worker).
    fn attach(&mut self, turn: &mut Turn, target: &str, announce_on: Option<String>, client_id: Option<i64>) {
        let Some(watcher) = self.watcher.clone() else {
            if let Some(id) = client_id {
                turn.fail(id, announce_on.as_deref(), SERVER_ERROR, "Target is gone");
            }
            return;
        };
        let message = turn.tell_guest(&watcher, "Target.attachToTarget", json!({"targetId": target, "flatten": true}));
        self.attaching.insert(target.to_string(), Attaching { announce_on, client_id, message });
    }

    /// The watcher refused an attach (the worker ended meanwhile), or the
    /// attach could not be sent (`error` none): the client's command fails,
    /// with the watcher's words if it had any.
    pub(crate) fn attach_failed(&mut self, turn: &mut Turn, message: i64, error: Option<&str>) {
        let Some(target) = self.attaching.iter().find(|(_, a)| a.message == message).map(|(t, _)| t.clone()) else {
            return;
        };
        let Some(a) = self.attaching.remove(&target) else { return };
        if let Some(id) = a.client_id {
            let text = error
                .and_then(|e| serde_json::from_str::<Value>(e).ok())
                .and_then(|e| e.get("message").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "Target is gone".into());
            turn.fail(id, a.announce_on.as_deref(), SERVER_ERROR, &text);
        }
    }

    /// The watcher attached a worker: a child session of it, announced where it was asked for. True when handled.
    pub(crate) fn attached(
        &mut self,
        turn: &mut Turn,
        targets: &Targets,
        guest: &GuestId,
        session_id: &str,
        target: &str,
        raw: &str,
    ) -> bool {
        if self.watcher.as_ref() != Some(guest) {
            return false;
        }
        let Some(Attaching { announce_on, client_id, .. }) = self.attaching.remove(target) else {
            return false;
        };
        turn.push(Effect::AddChild {
            session_id: session_id.to_string(),
            guest: guest.clone(),
            target_id: target.to_string(),
        });
        self.sessions.insert(session_id.to_string(), announce_on.clone());
        let Ok(mut event) = serde_json::from_str::<Value>(raw) else { return true };
        if let Some(info) = event.pointer("/params/targetInfo").cloned() {
            let mut info = self.target_info(turn, targets, &info);
            info["attached"] = json!(true);
            event["params"]["targetInfo"] = info;
        }
        // Attached while running: nothing waits for a debugger.
        event["params"]["waitingForDebugger"] = json!(false);
        let text = event.to_string();
        turn.send(match &announce_on {
            Some(s) => protocol::with_session(&text, s),
            None => text,
        });
        if let Some(id) = client_id {
            turn.reply(id, announce_on.as_deref(), json!({"sessionId": session_id}));
        }
        // A running service or shared worker has loaded its script: told
        // before the session's first command is answered (see `session_used`).
        self.script_untold.insert(session_id.to_string());
        true
    }

    /// The client sends its first command on a worker session:
    /// `Inspector.workerScriptLoaded` goes first, as Chromium sends it once
    /// the client uses the session (Puppeteer listens for it only then).
    pub(crate) fn session_used(&mut self, turn: &mut Turn, session_id: &str) {
        if self.script_untold.remove(session_id) {
            turn.event("Inspector.workerScriptLoaded", &json!({}), Some(session_id));
        }
    }

    /// A worker's session ended. True when it was one.
    pub(crate) fn detached(&mut self, turn: &mut Turn, session_id: &str, raw: &str) -> bool {
        let Some(announce_on) = self.sessions.remove(session_id) else { return false };
        self.script_untold.remove(session_id);
        turn.push(Effect::RemoveChild(session_id.to_string()));
        turn.send(match announce_on {
            Some(s) => protocol::with_session(raw, &s),
            None => raw.to_string(),
        });
        true
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
