//! Which CDP session belongs to what: facade page sessions (one guest each,
//! several per guest allowed), browser sessions, and child sessions (iframes,
//! workers) that guests announce in flatten mode.

use std::collections::HashMap;

use crate::guest::GuestId;

/// What a facade session is attached to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionKind {
    /// A guest page.
    Page {
        /// The guest.
        guest: GuestId,
        /// Its real target id.
        target_id: String,
    },
    /// The emulated browser target (`Target.attachToBrowserTarget`).
    Browser,
}

/// A session the facade made up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Session {
    /// What it is attached to.
    pub kind: SessionKind,
    /// The browser session it was attached through; `None` for the root.
    pub parent: Option<String>,
}

/// A session a guest announced (its id is the guest's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Child {
    /// The guest whose channel carries it.
    pub guest: GuestId,
    /// The child's target id.
    pub target_id: String,
}

/// The session registry of one client connection.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    sessions: HashMap<String, Session>,
    pages_by_guest: HashMap<GuestId, Vec<String>>,
    children: HashMap<String, Child>,
    /// Duplicate child announcements (same target re-attached) that are hidden from the client.
    suppressed: HashMap<String, GuestId>,
}

impl Sessions {
    /// Registers a page session; the first live one of a guest is its primary.
    pub(crate) fn add_page(&mut self, id: String, guest: GuestId, target_id: String, parent: Option<String>) {
        self.pages_by_guest.entry(guest.clone()).or_default().push(id.clone());
        self.sessions.insert(id, Session { kind: SessionKind::Page { guest, target_id }, parent });
    }

    /// Registers a browser session.
    pub(crate) fn add_browser(&mut self, id: String, parent: Option<String>) {
        self.sessions.insert(id, Session { kind: SessionKind::Browser, parent });
    }

    /// A facade session by id.
    pub(crate) fn get(&self, id: &str) -> Option<&Session> {
        self.sessions.get(id)
    }

    /// Removes a facade session.
    pub(crate) fn remove(&mut self, id: &str) -> Option<Session> {
        let session = self.sessions.remove(id)?;
        if let SessionKind::Page { guest, .. } = &session.kind {
            if let Some(list) = self.pages_by_guest.get_mut(guest) {
                list.retain(|s| s != id);
                if list.is_empty() {
                    self.pages_by_guest.remove(guest);
                }
            }
        }
        Some(session)
    }

    /// The page sessions of a guest, primary first.
    pub(crate) fn pages_of(&self, guest: &GuestId) -> &[String] {
        self.pages_by_guest.get(guest).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The page sessions attached through a browser session.
    pub(crate) fn attached_through(&self, parent: &str) -> Vec<String> {
        self.sessions.iter().filter(|(_, s)| s.parent.as_deref() == Some(parent)).map(|(id, _)| id.clone()).collect()
    }

    /// Records a child session; false if the guest already has a child for that target (a duplicate).
    pub(crate) fn add_child(&mut self, id: String, guest: GuestId, target_id: String, dedupe: bool) -> bool {
        if dedupe && self.children.values().any(|c| c.guest == guest && c.target_id == target_id) {
            self.suppressed.insert(id, guest);
            return false;
        }
        self.children.insert(id, Child { guest, target_id });
        true
    }

    /// A child session by id.
    pub(crate) fn child(&self, id: &str) -> Option<&Child> {
        self.children.get(id)
    }

    /// Forgets a child session (or a suppressed duplicate); true if it was a visible child.
    pub(crate) fn remove_child(&mut self, id: &str) -> bool {
        self.suppressed.remove(id);
        self.children.remove(id).is_some()
    }

    /// Whether `id` is a hidden duplicate.
    #[cfg(test)]
    pub(crate) fn is_suppressed(&self, id: &str) -> bool {
        self.suppressed.contains_key(id)
    }

    /// Child session ids of a guest (visible and hidden).
    pub(crate) fn children_of(&self, guest: &GuestId) -> Vec<String> {
        let visible = self.children.iter().filter(|(_, c)| &c.guest == guest).map(|(id, _)| id.clone());
        let hidden = self.suppressed.iter().filter(|(_, g)| *g == guest).map(|(id, _)| id.clone());
        visible.chain(hidden).collect()
    }

    /// Drops every child of a guest.
    pub(crate) fn forget_children(&mut self, guest: &GuestId) {
        self.children.retain(|_, c| &c.guest != guest);
        self.suppressed.retain(|_, g| g != guest);
    }
}

/// Why a guest's sessions end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropReason {
    /// `Target.closeTarget`.
    Closed,
    /// The guest left `Guests::list` (or its browser was replaced).
    Gone,
    /// The renderer crashed.
    Crashed,
}

impl DropReason {
    /// What the client is told about commands that were waiting.
    pub(crate) fn message(self) -> &'static str {
        match self {
            DropReason::Closed => "Target closed",
            DropReason::Gone => "Target closed",
            DropReason::Crashed => "Target crashed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primary_is_first_live_page_session() {
        let mut s = Sessions::default();
        let g = GuestId::from("n1::t1");
        s.add_page("A".into(), g.clone(), "T".into(), None);
        s.add_page("B".into(), g.clone(), "T".into(), Some("BR".into()));
        assert_eq!(s.pages_of(&g), ["A".to_string(), "B".to_string()]);
        assert_eq!(s.attached_through("BR"), vec!["B".to_string()]);
        assert!(matches!(s.remove("A"), Some(Session { kind: SessionKind::Page { .. }, parent: None })));
        assert_eq!(s.pages_of(&g), ["B".to_string()]);
        s.remove("B");
        assert!(s.pages_of(&g).is_empty());
        assert!(s.remove("B").is_none());
    }

    #[test]
    fn duplicate_children_are_suppressed() {
        let mut s = Sessions::default();
        let g = GuestId::from("g");
        assert!(s.add_child("C1".into(), g.clone(), "IF".into(), true));
        assert!(!s.add_child("C2".into(), g.clone(), "IF".into(), true));
        assert!(s.is_suppressed("C2"));
        assert!(s.child("C2").is_none());
        assert!(!s.remove_child("C2"));
        assert!(!s.is_suppressed("C2"));
        assert!(s.remove_child("C1"));
        assert!(s.add_child("C3".into(), g.clone(), "IF".into(), true));
        assert!(!s.add_child("C4".into(), g.clone(), "IF".into(), true));
        let mut all = s.children_of(&g);
        all.sort();
        assert_eq!(all, vec!["C3".to_string(), "C4".to_string()]);
        s.forget_children(&g);
        assert!(s.child("C3").is_none());
        assert!(!s.is_suppressed("C4"));
    }
}
