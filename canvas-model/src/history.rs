//! Undo/redo. Every undoable command runs inside a [`Txn`] that remembers
//! the state of each node it touches; the resulting [`Change`] (each touched
//! node before and after) is the command's inverse and its redo at once.
//! Recording node states rather than hand-written inverse commands makes
//! every command undoable the same way, including the side effects (group
//! membership, z order) that a hand-written inverse would easily miss.

use std::collections::BTreeMap;

use super::error::ModelError;
use super::ids::{NodeId, TabId};
use super::node::{Node, NodeKind};

/// Most undo steps kept per project; older ones are dropped.
pub const HISTORY_LIMIT: usize = 500;

/// Which undo steps may merge: consecutive commands with the same key
/// (a drag's moves, a resize's steps, typing in one sticky) become one step
/// until [`History::end_coalescing`] is called (mouse up, focus loss).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CoalesceKey {
    /// Moving exactly this set of nodes (sorted).
    Move(Vec<NodeId>),
    /// Resizing this node.
    Resize(NodeId),
    /// Editing this sticky's text.
    StickyText(NodeId),
    /// Editing this node's title.
    Title(NodeId),
}

/// The node states before and after one undo step (`None`: absent).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Change {
    before: BTreeMap<NodeId, Option<Node>>,
    after: BTreeMap<NodeId, Option<Node>>,
}

impl Change {
    /// Whether the step changed nothing.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty()
    }

    /// The ids of the nodes this step touches.
    pub fn ids(&self) -> impl Iterator<Item = &NodeId> {
        self.before.keys()
    }

    /// Folds a later change into this one: the earliest "before" and the
    /// latest "after" of each node.
    fn merge(&mut self, later: Change) {
        for (id, state) in later.before {
            self.before.entry(id).or_insert(state);
        }
        self.after.extend(later.after);
        let unchanged: Vec<NodeId> =
            self.before.iter().filter(|(id, b)| self.after.get(*id) == Some(b)).map(|(id, _)| id.clone()).collect();
        for id in unchanged {
            self.before.remove(&id);
            self.after.remove(&id);
        }
    }

    /// Sorts this change's ids into created / removed / changed relative to
    /// restoring `states` (the side being restored).
    pub(super) fn classify(states: &BTreeMap<NodeId, Option<Node>>, nodes: &BTreeMap<NodeId, Node>) -> Classified {
        let mut c = Classified::default();
        for (id, state) in states {
            match (nodes.contains_key(id), state.is_some()) {
                (false, true) => c.created.push(id.clone()),
                (true, false) => c.removed.push(id.clone()),
                _ => c.changed.push(id.clone()),
            }
        }
        c
    }

    /// The states an undo restores.
    pub(super) fn before(&self) -> &BTreeMap<NodeId, Option<Node>> {
        &self.before
    }

    /// The states a redo restores.
    pub(super) fn after(&self) -> &BTreeMap<NodeId, Option<Node>> {
        &self.after
    }
}

/// Node ids split by what restoring a change does to them.
#[derive(Debug, Default)]
pub(super) struct Classified {
    /// Absent now, present after the restore.
    pub created: Vec<NodeId>,
    /// Present now, absent after the restore.
    pub removed: Vec<NodeId>,
    /// Present on both sides.
    pub changed: Vec<NodeId>,
}

/// Writes `states` into `nodes`; `other` is the opposite side of the same
/// change. Live browser state is kept as it is now: each tab's URL and
/// title (the page changed those by itself, and undoing a layout edit must
/// not rewind a page the user has since navigated), and the tab on show
/// unless this change is what switched it.
pub(super) fn restore(
    nodes: &mut BTreeMap<NodeId, Node>,
    states: &BTreeMap<NodeId, Option<Node>>,
    other: &BTreeMap<NodeId, Option<Node>>,
) {
    for (id, state) in states {
        match state {
            None => {
                nodes.remove(id);
            }
            Some(target) => {
                let mut target = target.clone();
                if let Some(current) = nodes.get(id) {
                    let other = other.get(id).and_then(Option::as_ref);
                    keep_live_browser_state(current, other, &mut target);
                }
                nodes.insert(id.clone(), target);
            }
        }
    }
}

fn active_tab_of(node: &Node) -> Option<&TabId> {
    match &node.kind {
        NodeKind::Browser { active_tab, .. } => Some(active_tab),
        _ => None,
    }
}

fn keep_live_browser_state(current: &Node, other: Option<&Node>, target: &mut Node) {
    let change_switched_tab = other.and_then(active_tab_of) != active_tab_of(target);
    let (NodeKind::Browser { tabs: now, active_tab: now_active, .. }, NodeKind::Browser { tabs, active_tab, .. }) =
        (&current.kind, &mut target.kind)
    else {
        return;
    };
    for tab in tabs.iter_mut() {
        if let Some(live) = now.iter().find(|t| t.id == tab.id) {
            tab.url.clone_from(&live.url);
            tab.title.clone_from(&live.title);
        }
    }
    if !change_switched_tab && tabs.iter().any(|t| &t.id == now_active) {
        active_tab.clone_from(now_active);
    }
}

/// A set of node edits in progress. Dropping it without [`Txn::commit`]
/// (an error part-way) puts every touched node back, so a refused command
/// changes nothing.
pub(super) struct Txn<'a> {
    nodes: &'a mut BTreeMap<NodeId, Node>,
    before: BTreeMap<NodeId, Option<Node>>,
    committed: bool,
}

impl<'a> Txn<'a> {
    /// Starts a transaction over a canvas's nodes.
    pub fn new(nodes: &'a mut BTreeMap<NodeId, Node>) -> Self {
        Self { nodes, before: BTreeMap::new(), committed: false }
    }

    /// Read access to the canvas as it is mid-transaction.
    pub fn nodes(&self) -> &BTreeMap<NodeId, Node> {
        self.nodes
    }

    /// The node, or `UnknownNode`.
    pub fn get(&self, id: &NodeId) -> Result<&Node, ModelError> {
        self.nodes.get(id).ok_or_else(|| ModelError::UnknownNode(id.clone()))
    }

    fn remember(&mut self, id: &NodeId) {
        if !self.before.contains_key(id) {
            self.before.insert(id.clone(), self.nodes.get(id).cloned());
        }
    }

    /// Mutable access to a node, remembering its prior state.
    pub fn get_mut(&mut self, id: &NodeId) -> Result<&mut Node, ModelError> {
        if !self.nodes.contains_key(id) {
            return Err(ModelError::UnknownNode(id.clone()));
        }
        self.remember(id);
        self.nodes.get_mut(id).ok_or_else(|| ModelError::UnknownNode(id.clone()))
    }

    /// Inserts a node that must not exist yet.
    pub fn insert_new(&mut self, node: Node) -> Result<(), ModelError> {
        if self.nodes.contains_key(&node.id) {
            return Err(ModelError::DuplicateNode(node.id));
        }
        self.remember(&node.id);
        self.nodes.insert(node.id.clone(), node);
        Ok(())
    }

    /// Removes a node, returning it.
    pub fn remove(&mut self, id: &NodeId) -> Result<Node, ModelError> {
        if !self.nodes.contains_key(id) {
            return Err(ModelError::UnknownNode(id.clone()));
        }
        self.remember(id);
        self.nodes.remove(id).ok_or_else(|| ModelError::UnknownNode(id.clone()))
    }

    /// Finishes the transaction, returning what changed.
    pub fn commit(mut self) -> Change {
        self.committed = true;
        let before = std::mem::take(&mut self.before);
        let mut change = Change::default();
        for (id, old) in before {
            let new = self.nodes.get(&id).cloned();
            if new != old {
                change.after.insert(id.clone(), new);
                change.before.insert(id, old);
            }
        }
        change
    }
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        if !self.committed {
            let before = std::mem::take(&mut self.before);
            for (id, old) in before {
                match old {
                    Some(node) => {
                        self.nodes.insert(id, node);
                    }
                    None => {
                        self.nodes.remove(&id);
                    }
                }
            }
        }
    }
}

/// What recording a change did to the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryEffect {
    /// The command is not undoable, or changed nothing.
    #[default]
    None,
    /// A new undo step was pushed.
    Recorded,
    /// The change was merged into the previous undo step.
    Coalesced,
}

#[derive(Debug, Clone)]
struct Entry {
    change: Change,
    key: Option<CoalesceKey>,
}

/// One project's undo and redo stacks.
#[derive(Debug, Clone, Default)]
pub struct History {
    undo: Vec<Entry>,
    redo: Vec<Entry>,
    /// Whether the top undo step may still absorb a command with its key.
    open: bool,
}

impl History {
    /// Whether there is something to undo.
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Whether there is something to redo.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Number of undo steps.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// Number of redo steps.
    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }

    /// Ends the current gesture: the next command starts a new undo step
    /// even if it has the same coalesce key.
    pub fn end_coalescing(&mut self) {
        self.open = false;
    }

    /// Records a new change; a new command always clears the redo stack.
    pub(super) fn record(&mut self, change: Change, key: Option<CoalesceKey>) -> HistoryEffect {
        if change.is_empty() {
            return HistoryEffect::None;
        }
        self.redo.clear();
        if let (true, Some(k), Some(top)) = (self.open, key.as_ref(), self.undo.last_mut()) {
            if top.key.as_ref() == Some(k) {
                top.change.merge(change);
                if top.change.is_empty() {
                    // The gesture returned everything to where it started.
                    self.undo.pop();
                    self.open = false;
                }
                return HistoryEffect::Coalesced;
            }
        }
        self.open = key.is_some();
        self.undo.push(Entry { change, key });
        if self.undo.len() > HISTORY_LIMIT {
            self.undo.remove(0);
        }
        HistoryEffect::Recorded
    }

    /// Takes the newest undo step, moving it onto the redo stack.
    pub(super) fn pop_undo(&mut self) -> Option<&Change> {
        self.open = false;
        let entry = self.undo.pop()?;
        self.redo.push(entry);
        self.redo.last().map(|e| &e.change)
    }

    /// Takes the newest redo step, moving it back onto the undo stack.
    pub(super) fn pop_redo(&mut self) -> Option<&Change> {
        self.open = false;
        let entry = self.redo.pop()?;
        self.undo.push(entry);
        self.undo.last().map(|e| &e.change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;

    fn sticky(id: &str, x: f64) -> Node {
        Node {
            id: NodeId::new(id).unwrap(),
            kind: NodeKind::Sticky { text: String::new() },
            title: String::new(),
            rect: Rect::new(x, 0.0, 100.0, 100.0),
            z: 0,
            colour: None,
            name: None,
            links: Default::default(),
        }
    }

    #[test]
    fn dropped_txn_rolls_back_everything() {
        let mut nodes = BTreeMap::new();
        nodes.insert(NodeId::new("a").unwrap(), sticky("a", 0.0));
        let snapshot = nodes.clone();
        {
            let mut t = Txn::new(&mut nodes);
            t.get_mut(&NodeId::new("a").unwrap()).unwrap().rect.x = 50.0;
            t.insert_new(sticky("b", 1.0)).unwrap();
            t.remove(&NodeId::new("a").unwrap()).unwrap();
            assert!(t.insert_new(sticky("b", 2.0)).is_err());
        }
        assert_eq!(nodes, snapshot);
    }

    #[test]
    fn commit_records_only_real_changes_and_restores_both_ways() {
        let mut nodes = BTreeMap::new();
        nodes.insert(NodeId::new("a").unwrap(), sticky("a", 0.0));
        let start = nodes.clone();
        let mut t = Txn::new(&mut nodes);
        t.get_mut(&NodeId::new("a").unwrap()).unwrap();
        t.insert_new(sticky("b", 1.0)).unwrap();
        let change = t.commit();
        assert_eq!(change.ids().map(|i| i.as_str()).collect::<Vec<_>>(), ["b"]);
        let end = nodes.clone();
        restore(&mut nodes, change.before(), change.after());
        assert_eq!(nodes, start);
        restore(&mut nodes, change.after(), change.before());
        assert_eq!(nodes, end);
    }

    fn change_moving(id: &str, from: f64, to: f64) -> Change {
        let mut nodes = BTreeMap::new();
        nodes.insert(NodeId::new(id).unwrap(), sticky(id, from));
        let mut t = Txn::new(&mut nodes);
        t.get_mut(&NodeId::new(id).unwrap()).unwrap().rect.x = to;
        t.commit()
    }

    #[test]
    fn same_key_coalesces_until_ended_and_new_commands_clear_redo() {
        let key = Some(CoalesceKey::Move(vec![NodeId::new("a").unwrap()]));
        let mut h = History::default();
        assert_eq!(h.record(change_moving("a", 0.0, 1.0), key.clone()), HistoryEffect::Recorded);
        assert_eq!(h.record(change_moving("a", 1.0, 2.0), key.clone()), HistoryEffect::Coalesced);
        assert_eq!(h.undo_len(), 1);
        assert_eq!(h.undo[0].change.after()[&NodeId::new("a").unwrap()].as_ref().unwrap().rect.x, 2.0);
        assert_eq!(h.undo[0].change.before()[&NodeId::new("a").unwrap()].as_ref().unwrap().rect.x, 0.0);
        h.end_coalescing();
        assert_eq!(h.record(change_moving("a", 2.0, 3.0), key.clone()), HistoryEffect::Recorded);
        assert_eq!(h.record(change_moving("a", 3.0, 4.0), None), HistoryEffect::Recorded);
        assert_eq!(h.undo_len(), 3);
        assert!(h.pop_undo().is_some());
        assert!(h.can_redo());
        h.record(change_moving("a", 0.0, 9.0), None);
        assert!(!h.can_redo());
        assert_eq!(h.record(Change::default(), None), HistoryEffect::None);
    }

    #[test]
    fn a_gesture_that_returns_to_start_leaves_no_step() {
        let key = Some(CoalesceKey::Move(vec![NodeId::new("a").unwrap()]));
        let mut h = History::default();
        h.record(change_moving("a", 0.0, 5.0), key.clone());
        h.record(change_moving("a", 5.0, 0.0), key);
        assert!(!h.can_undo());
    }

    #[test]
    fn history_is_bounded() {
        let mut h = History::default();
        for i in 0..(HISTORY_LIMIT + 10) {
            h.record(change_moving("a", i as f64, i as f64 + 1.0), None);
        }
        assert_eq!(h.undo_len(), HISTORY_LIMIT);
    }

    #[test]
    fn restore_keeps_live_browser_state() {
        use crate::node::BrowserTab;
        let t1 = TabId::new("t1").unwrap();
        let t2 = TabId::new("t2").unwrap();
        let tab = |id: &TabId, url: &str| BrowserTab { id: id.clone(), url: url.into(), title: url.into() };
        let mut old = sticky("b", 0.0);
        old.kind = NodeKind::Browser {
            tabs: vec![tab(&t1, "about:blank"), tab(&t2, "about:blank")],
            active_tab: t1.clone(),
            context: None,
        };
        let mut now = old.clone();
        now.title = "renamed".into();
        now.kind = NodeKind::Browser {
            tabs: vec![tab(&t1, "https://a.test/"), tab(&t2, "about:blank")],
            active_tab: t2.clone(),
            context: None,
        };
        let mut nodes = BTreeMap::new();
        nodes.insert(now.id.clone(), now);
        let mut states = BTreeMap::new();
        states.insert(old.id.clone(), Some(old.clone()));
        // The other side of the change (a rename) had the same tab on show.
        let mut other = old.clone();
        other.title = "renamed".into();
        let mut others = BTreeMap::new();
        others.insert(old.id.clone(), Some(other));
        restore(&mut nodes, &states, &others);
        let got = &nodes[&old.id];
        assert_eq!(got.title, old.title);
        assert_eq!(got.tab(&t1).unwrap().url, "https://a.test/");
        assert!(matches!(&got.kind, NodeKind::Browser { active_tab, .. } if *active_tab == t2));
    }
}
