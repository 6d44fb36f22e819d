//! [`TargetWatch`]: what one client asked to hear of the pages — target
//! discovery (`Target.setDiscoverTargets`: `targetCreated`,
//! `targetInfoChanged`, `targetDestroyed`) and browser-level auto-attach
//! (`Target.setAutoAttach`) — and how a page session is attached and
//! detached as that client sees it: each event before the reply it
//! belongs to, as Puppeteer and Playwright need.

use std::collections::HashSet;

use serde_json::json;

use crate::effect::{Effect, Turn};
use crate::guest::GuestId;
use crate::guest_call::PageInfo;
use crate::sessions::SessionKind;
use crate::targets::{Known, Targets};

/// One client's discovery and browser-level auto-attach.
#[derive(Debug, Default)]
pub(crate) struct TargetWatch {
    /// `Target.setDiscoverTargets` is on.
    pub(crate) discover: bool,
    /// `Target.setAutoAttach` is on for the browser.
    pub(crate) auto_attach: bool,
    /// Browser session that turned auto-attach on (`None`: the root).
    pub(crate) auto_attach_owner: Option<String>,
    /// Guests the client was told about with `targetCreated`.
    announced: HashSet<GuestId>,
    /// Guests auto-attached once (not re-attached if the client detaches them).
    auto_attached: HashSet<GuestId>,
}

impl TargetWatch {
    /// Whether the client discovers targets and knows this guest.
    pub(crate) fn discovers(&self, guest: &GuestId) -> bool {
        self.discover && self.announced.contains(guest)
    }

    /// Whether the client discovers or auto-attaches targets.
    pub(crate) fn watching(&self) -> bool {
        self.discover || self.auto_attach
    }

    /// The guests announced with `targetCreated`.
    pub(crate) fn announced(&self) -> impl Iterator<Item = &GuestId> {
        self.announced.iter()
    }

    /// Discovery turned off: the next time, every page is announced again.
    pub(crate) fn stop_discovery(&mut self) {
        self.discover = false;
        self.announced.clear();
    }

    /// Discovery turned on: the browser target is announced first.
    pub(crate) fn start_discovery(&mut self, turn: &mut Turn) {
        if !self.discover {
            self.discover = true;
            // Puppeteer takes the attached browser target as browser.target().
            let info = turn.env.browser_target_info();
            turn.event("Target.targetCreated", &json!({"targetInfo": info}), None);
        }
    }

    /// Tells the client about live pages it has not heard of (targetCreated / auto-attach).
    pub(crate) fn announce_live(&mut self, turn: &mut Turn, targets: &Targets) {
        if !self.watching() {
            return;
        }
        for (guest, info) in targets.live_known(&turn.env) {
            self.announce_one(turn, targets, &guest, &info);
        }
    }

    /// Tells the client about one page, as it asked to hear of pages.
    pub(crate) fn announce_one(&mut self, turn: &mut Turn, targets: &Targets, guest: &GuestId, info: &PageInfo) {
        if self.discover && self.announced.insert(guest.clone()) {
            let target_info = targets.page_target_info(&turn.env, guest, info, turn.has_sessions(guest));
            turn.event("Target.targetCreated", &json!({"targetInfo": target_info}), None);
        }
        if self.auto_attach && self.auto_attached.insert(guest.clone()) {
            let owner = self.auto_attach_owner.clone();
            if self.attach(turn, targets, guest, info, owner).is_none() {
                self.auto_attached.remove(guest);
            }
        }
    }

    /// Forgets a guest that went (targetDestroyed if the client discovered it).
    pub(crate) fn forget(&mut self, turn: &mut Turn, guest: &GuestId, known: Option<Known>) {
        if self.announced.remove(guest) && self.discover {
            if let Some(k) = known {
                turn.event("Target.targetDestroyed", &json!({"targetId": k.info.target_id}), None);
            }
        }
        self.auto_attached.remove(guest);
    }

    /// Attaches a new facade session to a guest page and announces it on
    /// `parent`; `None` if the guest has no channel.
    pub(crate) fn attach(
        &self,
        turn: &mut Turn,
        targets: &Targets,
        guest: &GuestId,
        info: &PageInfo,
        parent: Option<String>,
    ) -> Option<String> {
        if !turn.link(guest) {
            return None;
        }
        let first = !turn.has_sessions(guest);
        let session_id = turn.env.session_ids.next();
        turn.add_page(session_id.clone(), guest.clone(), info.target_id.clone(), parent.clone());
        let target_info = targets.page_target_info(&turn.env, guest, info, true);
        turn.event(
            "Target.attachedToTarget",
            &json!({"sessionId": session_id, "targetInfo": target_info, "waitingForDebugger": false}),
            parent.as_deref(),
        );
        if first && self.discovers(guest) {
            turn.event("Target.targetInfoChanged", &json!({"targetInfo": target_info}), None);
        }
        Some(session_id)
    }

    /// Detaches one facade session (announcing it on its parent); releases
    /// the guest when it was its last. False if there is no such session.
    pub(crate) fn detach_session(&self, turn: &mut Turn, targets: &Targets, session_id: &str) -> bool {
        let Some(session) = turn.session(session_id) else { return false };
        turn.remove_session(session_id);
        match &session.kind {
            SessionKind::Page { guest, target_id } => {
                turn.push(Effect::FailPendingOn { session_id: session_id.to_string(), message: "Target detached" });
                turn.event(
                    "Target.detachedFromTarget",
                    &json!({"sessionId": session_id, "targetId": target_id}),
                    session.parent.as_deref(),
                );
                if !turn.has_sessions(guest) {
                    turn.push(Effect::Release { guest: guest.clone(), tidy: true });
                    if let Some(info) = targets.known_info(guest) {
                        if self.discovers(guest) {
                            let target_info = targets.page_target_info(&turn.env, guest, &info, false);
                            turn.event("Target.targetInfoChanged", &json!({"targetInfo": target_info}), None);
                        }
                    }
                }
            }
            SessionKind::Browser => {
                for page in turn.attached_through(session_id) {
                    self.detach_session(turn, targets, &page);
                }
                let target_id = turn.env.target_id.clone();
                turn.event(
                    "Target.detachedFromTarget",
                    &json!({"sessionId": session_id, "targetId": target_id}),
                    session.parent.as_deref(),
                );
            }
        }
        true
    }
}
