//! [`Targets`]: what the emulated browser knows of the app's pages, the same
//! for every client: each live guest's real target info (learned through
//! its channel with `Target.getTargetInfo`; after a failure asked again
//! only once [`PROBE_RETRY`] has passed), and the guests closed or crashed
//! that stay out of the target list meanwhile. Also a page's `targetInfo`
//! as clients see it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::browser_env::BrowserEnv;
use crate::effect::{RootCommand, Step, Turn};
use crate::guest::{channel_key, ContextId, GuestChannel, GuestId};
use crate::guest_call::{CallError, PageInfo};
use crate::jobs::Job;
use crate::protocol::INVALID_PARAMS;

/// After a guest failed to describe itself, how long before it is asked again.
const PROBE_RETRY: Duration = Duration::from_secs(2);

#[derive(Deserialize)]
struct TargetIdParam {
    #[serde(rename = "targetId")]
    target_id: String,
}

/// A guest page whose real target info is known.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    /// Its target info.
    pub(crate) info: PageInfo,
    /// The `channel_key` of the channel it was learned through.
    pub(crate) channel_key: usize,
}

/// The emulated browser's knowledge of the app's pages.
#[derive(Debug, Default)]
pub(crate) struct Targets {
    /// Guests whose real target info is known.
    known: HashMap<GuestId, Known>,
    /// Guests being asked for their target info.
    probing: HashSet<GuestId>,
    /// When a guest last failed to describe itself.
    probe_failed: HashMap<GuestId, Instant>,
    /// Guests closed through the facade that may still linger in `Guests::list`.
    closed: HashSet<GuestId>,
    /// Guests whose renderer is dead.
    crashed: HashSet<GuestId>,
}

impl Targets {
    /// The known target info of a guest.
    pub(crate) fn known_info(&self, guest: &GuestId) -> Option<PageInfo> {
        self.known.get(guest).map(|k| k.info.clone())
    }

    /// Whether the guest's target info is known.
    pub(crate) fn is_known(&self, guest: &GuestId) -> bool {
        self.known.contains_key(guest)
    }

    /// The guests whose target info is known.
    pub(crate) fn known_guests(&self) -> impl Iterator<Item = &GuestId> {
        self.known.keys()
    }

    /// The identity of the channel a guest's info was learned through.
    pub(crate) fn known_channel_key(&self, guest: &GuestId) -> Option<usize> {
        self.known.get(guest).map(|k| k.channel_key)
    }

    /// Whether the guest is closed or crashed (kept out of the target list).
    pub(crate) fn excluded(&self, guest: &GuestId) -> bool {
        self.closed.contains(guest) || self.crashed.contains(guest)
    }

    /// Whether the guest's renderer was seen dead and has not come back.
    pub(crate) fn is_crashed(&self, guest: &GuestId) -> bool {
        self.crashed.contains(guest)
    }

    /// Keeps a guest closed through the facade out while the app still lists it.
    pub(crate) fn mark_closed(&mut self, guest: &GuestId) {
        self.closed.insert(guest.clone());
    }

    /// Keeps a crashed guest out until its renderer is back.
    pub(crate) fn mark_crashed(&mut self, guest: &GuestId) {
        self.crashed.insert(guest.clone());
    }

    /// A guest the facade just opened is neither closed nor crashed (its id may be reused).
    pub(crate) fn opened(&mut self, guest: &GuestId) {
        self.closed.remove(guest);
        self.crashed.remove(guest);
    }

    /// Whether no guest is being asked for its target info.
    pub(crate) fn probing_done(&self) -> bool {
        self.probing.is_empty()
    }

    /// Asks a guest for its target info in the background, unless it is being asked.
    pub(crate) fn probe(&mut self, turn: &mut Turn, guest: &GuestId) {
        if !self.probing.insert(guest.clone()) {
            return;
        }
        let channel = turn.env.guests.channel(guest);
        turn.run(Job::Probe { guest: guest.clone(), channel });
    }

    /// True when every live guest's target info is known (or recently failed); starts probes otherwise.
    pub(crate) fn ready(&mut self, turn: &mut Turn) -> bool {
        let now = Instant::now();
        let mut ready = true;
        for guest in turn.env.guests.list() {
            if self.excluded(&guest) || self.known.contains_key(&guest) {
                continue;
            }
            if self.probe_failed.get(&guest).is_some_and(|t| now.duration_since(*t) < PROBE_RETRY) {
                continue;
            }
            ready = false;
            self.probe(turn, &guest);
        }
        ready
    }

    /// A probe finished; the guest's new info when it changed a known one.
    pub(crate) fn learned(
        &mut self,
        env: &BrowserEnv,
        guest: &GuestId,
        key: usize,
        result: Result<PageInfo, CallError>,
    ) -> Option<PageInfo> {
        self.probing.remove(guest);
        let still_live = env.guests.channel(guest).is_some_and(|c| channel_key(&c) == key);
        match result {
            Ok(info) if still_live => {
                self.probe_failed.remove(guest);
                let previous = self.known.insert(guest.clone(), Known { info: info.clone(), channel_key: key });
                previous.is_some_and(|p| p.info != info).then_some(info)
            }
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(guest = %guest, error = %e, "guest did not describe itself");
                self.probe_failed.insert(guest.clone(), Instant::now());
                None
            }
        }
    }

    /// Forgets a guest that went; what was known of it.
    pub(crate) fn forget(&mut self, guest: &GuestId) -> Option<Known> {
        self.probe_failed.remove(guest);
        self.known.remove(guest)
    }

    /// Drops what is kept of guests no longer live (and crashes that recovered).
    pub(crate) fn keep_live(&mut self, env: &BrowserEnv, live: &HashSet<&GuestId>) {
        self.closed.retain(|g| live.contains(g));
        self.crashed.retain(|g| live.contains(g) && env.guests.channel(g).is_some_and(|c| c.crashed()));
        self.probe_failed.retain(|g, _| live.contains(g));
    }

    /// Live guests with known target info, in the app's order.
    pub(crate) fn live_known(&self, env: &BrowserEnv) -> Vec<(GuestId, PageInfo)> {
        env.guests
            .list()
            .into_iter()
            .filter(|g| !self.excluded(g))
            .filter_map(|g| self.known_info(&g).map(|info| (g, info)))
            .collect()
    }

    /// The `targetInfo` of a guest page as clients see it.
    pub(crate) fn page_target_info(&self, env: &BrowserEnv, guest: &GuestId, info: &PageInfo, attached: bool) -> Value {
        let opener = env.guests.opener(guest);
        let opener_id = opener.as_ref().and_then(|o| self.known_info(&o.guest)).map(|i| i.target_id);
        let mut target = json!({
            "targetId": info.target_id,
            "type": "page",
            "title": info.title,
            "url": info.url,
            "attached": attached,
            "canAccessOpener": opener_id.is_some() && opener.is_some_and(|o| o.can_access),
            "browserContextId": env.browser_context_of(guest),
        });
        if let Some(id) = opener_id {
            target["openerId"] = json!(id);
        }
        target
    }

    /// Resolves `params.targetId` to a live guest. `Ok(None)`: an error was already sent.
    pub(crate) fn guest_by_target_param(&mut self, turn: &mut Turn, rc: &RootCommand) -> Result<Option<GuestId>, Step> {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let target_id = match rc.cmd.params_as::<TargetIdParam>() {
            Ok(p) => p.target_id,
            Err(e) => {
                turn.fail(id, session, INVALID_PARAMS, &e.to_string());
                return Ok(None);
            }
        };
        if !self.ready(turn) {
            return Err(Step::NeedTargets);
        }
        match self.live_known(&turn.env).into_iter().find(|(_, info)| info.target_id == target_id) {
            Some((guest, _)) => Ok(Some(guest)),
            None => {
                turn.fail(id, session, INVALID_PARAMS, "No target with given id found");
                Ok(None)
            }
        }
    }

    /// The DevTools channel of a live page of `context` (`None`: the person's profile).
    pub(crate) fn page_of_context(
        &self,
        env: &BrowserEnv,
        context: Option<&ContextId>,
    ) -> Option<Arc<dyn GuestChannel>> {
        let guests = &env.guests;
        guests.list().into_iter().filter(|g| !self.excluded(g) && guests.context_of(g).as_ref() == context).find_map(
            |g| {
                let ch = guests.channel(&g)?;
                (!ch.crashed()).then_some(ch)
            },
        )
    }

    /// A known guest whose page lives in the engine's browser context `engine_context`.
    pub(crate) fn guest_in_engine_context(&self, engine_context: &str) -> Option<GuestId> {
        self.known
            .iter()
            .find(|(_, k)| k.info.engine_context.as_deref() == Some(engine_context))
            .map(|(g, _)| g.clone())
    }
}
