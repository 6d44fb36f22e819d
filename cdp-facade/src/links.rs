//! [`Links`]: one client's subscriptions to guest channels. Each carries a
//! tag, so the router knows which guest a raw message came from, and what
//! the client turned on in that guest that must be undone when it lets go.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use crate::guest::{channel_key, GuestChannel, GuestId, GuestSink, SinkEvent};

/// A subscription to one guest's channel.
struct Link {
    channel: Arc<dyn GuestChannel>,
    tag: u64,
    active: Arc<AtomicBool>,
    /// The client turned on page-level auto-attach in this guest (must be turned off on release).
    page_auto_attach: bool,
    /// The client emulates focus in this guest (the app was told; it is told again on release).
    focus_emulated: bool,
}

/// The guests one client is subscribed to.
pub(crate) struct Links {
    tx: UnboundedSender<(u64, SinkEvent)>,
    next_tag: u64,
    links: HashMap<GuestId, Link>,
    tags: HashMap<u64, GuestId>,
}

impl Links {
    /// No subscriptions yet; the guests' messages will go to `tx`, tagged.
    pub(crate) fn new(tx: UnboundedSender<(u64, SinkEvent)>) -> Self {
        Self { tx, next_tag: 1, links: HashMap::new(), tags: HashMap::new() }
    }

    /// Whether the client is subscribed to the guest.
    pub(crate) fn is_linked(&self, guest: &GuestId) -> bool {
        self.links.contains_key(guest)
    }

    /// Subscribes to the guest's channel, unless subscribed already.
    pub(crate) fn link(&mut self, guest: GuestId, channel: Arc<dyn GuestChannel>) {
        if self.links.contains_key(&guest) {
            return;
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        let active = Arc::new(AtomicBool::new(true));
        channel.subscribe(GuestSink::new(tag, self.tx.clone(), active.clone()));
        self.tags.insert(tag, guest.clone());
        self.links.insert(guest, Link { channel, tag, active, page_auto_attach: false, focus_emulated: false });
    }

    /// The channel of a subscribed guest.
    pub(crate) fn channel(&self, guest: &GuestId) -> Option<Arc<dyn GuestChannel>> {
        self.links.get(guest).map(|l| l.channel.clone())
    }

    /// The identity of the channel the client is subscribed to (to notice a replaced browser).
    pub(crate) fn channel_key(&self, guest: &GuestId) -> Option<usize> {
        self.links.get(guest).map(|l| channel_key(&l.channel))
    }

    /// The guests the client is subscribed to.
    pub(crate) fn guests(&self) -> Vec<GuestId> {
        self.links.keys().cloned().collect()
    }

    /// The guest a tagged message came from.
    pub(crate) fn guest_of(&self, tag: u64) -> Option<&GuestId> {
        self.tags.get(&tag)
    }

    /// Notes that the client turned page-level auto-attach on in the guest.
    pub(crate) fn note_page_auto_attach(&mut self, guest: &GuestId, on: bool) {
        if let Some(link) = self.links.get_mut(guest) {
            link.page_auto_attach |= on;
        }
    }

    /// Whether the client turned page-level auto-attach on in the guest.
    pub(crate) fn page_auto_attach(&self, guest: &GuestId) -> bool {
        self.links.get(guest).is_some_and(|l| l.page_auto_attach)
    }

    /// Records whether the client emulates focus in the guest; true when that changed.
    pub(crate) fn set_focus_emulated(&mut self, guest: &GuestId, on: bool) -> bool {
        let Some(link) = self.links.get_mut(guest) else { return false };
        let changed = link.focus_emulated != on;
        link.focus_emulated = on;
        changed
    }

    /// Whether the client emulates focus in the guest.
    pub(crate) fn focus_emulated(&self, guest: &GuestId) -> bool {
        self.links.get(guest).is_some_and(|l| l.focus_emulated)
    }

    /// Ends the subscription (its sink tells the app so).
    pub(crate) fn unlink(&mut self, guest: &GuestId) {
        if let Some(link) = self.links.remove(guest) {
            link.active.store(false, Ordering::Release);
            self.tags.remove(&link.tag);
        }
    }
}
