//! Who needs the person: per node the reason and since when, per project the
//! count, and the order in which Ctrl+J visits them (longest waiting first).
//! Pure state: the runtime feeds it what each node reports and when the
//! person looks at a node.

use super::reason::Reason;
use crate::model::{NodeId, ProjectId};
use std::collections::HashMap;
use std::time::Instant;

/// What one node last reported.
#[derive(Debug, Clone)]
struct Tracked {
    project: ProjectId,
    reason: Reason,
    since: Instant,
    /// The person looked at the node since it started needing them.
    seen: bool,
}

/// A node that needs the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The node.
    pub node: NodeId,
    /// Its project.
    pub project: ProjectId,
    /// Why.
    pub reason: Reason,
    /// Since when.
    pub since: Instant,
}

/// How an observation changed who needs the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The node started needing the person (or needs them for another reason now).
    Entered(Waiting),
    /// The node no longer needs the person (it moved on, was seen, or is gone).
    Left(NodeId),
}

/// The nodes that need the person.
#[derive(Debug, Default)]
pub struct Attention {
    nodes: HashMap<NodeId, Tracked>,
}

impl Attention {
    /// Records what `node` reports at `now`; `seen` says the person is
    /// looking at it (it has the keyboard in a focused window), so a reason
    /// that starts then is not a call for them.
    pub fn observe(
        &mut self,
        node: &NodeId,
        project: &ProjectId,
        reason: Option<Reason>,
        seen: bool,
        now: Instant,
    ) -> Option<Change> {
        let was_waiting = self.is_waiting(node);
        let Some(reason) = reason else {
            // A bell is an event, not a state: it waits until the person looks
            // (its terminal may have been put away and started again since).
            if was_waiting
                && self.nodes.get(node).is_some_and(|t| matches!(t.reason, Reason::Bell | Reason::Notified { .. }))
            {
                return None;
            }
            self.nodes.remove(node);
            return was_waiting.then(|| Change::Left(node.clone()));
        };
        match self.nodes.get_mut(node) {
            Some(t) if t.reason == reason => {
                if seen && !t.seen {
                    t.seen = true;
                    return Some(Change::Left(node.clone()));
                }
                None
            }
            _ => {
                let t = Tracked { project: project.clone(), reason, since: now, seen };
                self.nodes.insert(node.clone(), t);
                match (seen, was_waiting) {
                    (false, _) => self.waiting_of(node).map(Change::Entered),
                    (true, true) => Some(Change::Left(node.clone())),
                    (true, false) => None,
                }
            }
        }
    }

    /// The person looked at `node`: it no longer waits for them (until its
    /// reason changes). True when it was waiting.
    pub fn acknowledge(&mut self, node: &NodeId) -> bool {
        match self.nodes.get_mut(node) {
            Some(t) if !t.seen => {
                t.seen = true;
                true
            }
            _ => false,
        }
    }

    /// Forgets every node `keep` refuses (closed nodes and projects); returns
    /// those of them that were waiting.
    pub fn retain(&mut self, mut keep: impl FnMut(&NodeId, &ProjectId) -> bool) -> Vec<NodeId> {
        let mut left = vec![];
        self.nodes.retain(|id, t| {
            let kept = keep(id, &t.project);
            if !kept && !t.seen {
                left.push(id.clone());
            }
            kept
        });
        left.sort();
        left
    }

    /// Whether `node` waits for the person.
    pub fn is_waiting(&self, node: &NodeId) -> bool {
        self.nodes.get(node).is_some_and(|t| !t.seen)
    }

    fn waiting_of(&self, node: &NodeId) -> Option<Waiting> {
        let t = self.nodes.get(node).filter(|t| !t.seen)?;
        Some(Waiting { node: node.clone(), project: t.project.clone(), reason: t.reason.clone(), since: t.since })
    }

    /// Every node waiting for the person, longest waiting first (ties by id, so the order is stable).
    pub fn queue(&self) -> Vec<Waiting> {
        let mut all: Vec<Waiting> = self.nodes.keys().filter_map(|id| self.waiting_of(id)).collect();
        all.sort_by(|a, b| a.since.cmp(&b.since).then_with(|| a.node.cmp(&b.node)));
        all
    }

    /// The node that has waited longest, other than `except` (the one the person is in).
    pub fn next(&self, except: Option<&NodeId>) -> Option<Waiting> {
        self.queue().into_iter().find(|w| Some(&w.node) != except)
    }

    /// How many nodes of `project` wait for the person.
    pub fn count(&self, project: &ProjectId) -> usize {
        self.nodes.values().filter(|t| !t.seen && &t.project == project).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use terminal::ExitStatus;

    fn node(s: &str) -> NodeId {
        NodeId::new(s).unwrap()
    }

    fn project(s: &str) -> ProjectId {
        ProjectId::new(s).unwrap()
    }

    fn failed(code: u32) -> Reason {
        Reason::Failed(ExitStatus { code, signal: None })
    }

    #[test]
    fn a_reason_enters_once_and_leaves_when_the_state_moves_on() {
        let (mut a, t0, p) = (Attention::default(), Instant::now(), project("p"));
        let w = a.observe(&node("a"), &p, Some(Reason::WaitingForInput), false, t0);
        let Some(Change::Entered(w)) = w else { panic!("entered: {w:?}") };
        assert_eq!((w.node.as_str(), w.reason, w.since), ("a", Reason::WaitingForInput, t0));
        let later = t0 + Duration::from_secs(5);
        assert_eq!(a.observe(&node("a"), &p, Some(Reason::WaitingForInput), false, later), None, "no second entry");
        assert_eq!(a.queue()[0].since, t0, "it waits since it started waiting");
        assert_eq!(a.count(&p), 1);
        assert_eq!(a.observe(&node("a"), &p, None, false, later), Some(Change::Left(node("a"))));
        assert_eq!((a.count(&p), a.queue()), (0, vec![]));
        assert_eq!(a.observe(&node("a"), &p, None, false, later), None, "nothing left to leave");
    }

    #[test]
    fn a_new_reason_while_waiting_enters_again_with_a_new_time() {
        let (mut a, t0, p) = (Attention::default(), Instant::now(), project("p"));
        a.observe(&node("a"), &p, Some(Reason::WaitingForInput), false, t0);
        let t1 = t0 + Duration::from_secs(1);
        let c = a.observe(&node("a"), &p, Some(failed(2)), false, t1);
        assert!(
            matches!(c, Some(Change::Entered(Waiting { ref reason, since, .. })) if *reason == failed(2) && since == t1)
        );
        assert_eq!(a.count(&p), 1);
    }

    #[test]
    fn a_bell_waits_until_it_is_seen_or_another_reason_comes() {
        let (mut a, t0, p) = (Attention::default(), Instant::now(), project("p"));
        a.observe(&node("a"), &p, Some(Reason::Bell), false, t0);
        assert_eq!(a.observe(&node("a"), &p, None, false, t0), None, "nothing reported: the bell still waits");
        assert_eq!(a.count(&p), 1);
        assert!(matches!(a.observe(&node("a"), &p, Some(failed(1)), false, t0), Some(Change::Entered(_))));
        assert_eq!(a.observe(&node("a"), &p, None, false, t0), Some(Change::Left(node("a"))), "a state moves on");
        a.observe(&node("b"), &p, Some(Reason::Bell), false, t0);
        a.acknowledge(&node("b"));
        assert_eq!(a.observe(&node("b"), &p, None, false, t0), None);
        assert_eq!(a.count(&p), 0, "a seen bell goes");
    }

    #[test]
    fn seeing_a_node_clears_it_until_its_reason_changes() {
        let (mut a, t0, p) = (Attention::default(), Instant::now(), project("p"));
        a.observe(&node("a"), &p, Some(Reason::Bell), false, t0);
        assert!(a.acknowledge(&node("a")));
        assert!(!a.acknowledge(&node("a")), "already seen");
        assert_eq!(a.count(&p), 0);
        assert_eq!(a.observe(&node("a"), &p, Some(Reason::Bell), false, t0), None, "the same bell is not new");
        let c = a.observe(&node("a"), &p, Some(Reason::WaitingForInput), false, t0);
        assert!(matches!(c, Some(Change::Entered(_))), "a new reason calls again: {c:?}");
        // Looking at it while it reports the reason it had clears it too.
        assert_eq!(a.observe(&node("a"), &p, Some(Reason::WaitingForInput), true, t0), Some(Change::Left(node("a"))));
        // A reason that starts while the person is in the node never calls them.
        assert_eq!(a.observe(&node("b"), &p, Some(Reason::WaitingForInput), true, t0), None);
        assert_eq!(a.count(&p), 0);
        assert!(!a.acknowledge(&node("zzz")), "an unknown node");
    }

    #[test]
    fn the_queue_is_longest_waiting_first_across_projects_and_counts_per_project() {
        let (mut a, t0) = (Attention::default(), Instant::now());
        let (p, q) = (project("p"), project("q"));
        a.observe(&node("late"), &p, Some(Reason::WaitingForInput), false, t0 + Duration::from_secs(9));
        a.observe(&node("first"), &q, Some(Reason::Bell), false, t0);
        a.observe(&node("mid-b"), &p, Some(failed(1)), false, t0 + Duration::from_secs(3));
        a.observe(&node("mid-a"), &p, Some(failed(1)), false, t0 + Duration::from_secs(3));
        let order: Vec<String> = a.queue().into_iter().map(|w| w.node.to_string()).collect();
        assert_eq!(order, ["first", "mid-a", "mid-b", "late"]);
        assert_eq!((a.count(&p), a.count(&q), a.count(&project("none"))), (3, 1, 0));
        assert_eq!(a.next(None).map(|w| w.project), Some(q.clone()));
        assert_eq!(a.next(Some(&node("first"))).map(|w| w.node), Some(node("mid-a")), "not the node the person is in");
        // Walking the queue: each node seen leaves it, so the next is the one after.
        a.acknowledge(&node("first"));
        assert_eq!(a.next(None).map(|w| w.node), Some(node("mid-a")));
        let left = a.retain(|n, _| n.as_str() != "mid-a" && n.as_str() != "first");
        assert_eq!(left, vec![node("mid-a")], "a seen node leaving is not news");
        assert_eq!(a.count(&p), 2);
    }
}
