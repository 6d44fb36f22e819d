//! The attention subsystem's own state: who needs the person (the queue),
//! muted projects, the desktop notifier and where it stands, whether the
//! window has the keyboard, and the project being observed.

use super::desktop::{Bus, DesktopEvent, DesktopNotifier, DesktopOff};
use super::mutes::{Mutes, MutesError};
use super::queue::{Attention, Change, Waiting};
use super::reason::Reason;
use crate::model::{NodeId, Project, ProjectId, Workspace};
use crate::runtime::terminals::AGENT_IDLE_AFTER;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a project's re-attached terminals take to read as quiet again.
const SETTLE: Duration = AGENT_IDLE_AFTER.saturating_add(Duration::from_secs(1));

/// Where desktop notifications stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Desktop {
    /// Not asked for (headless, tests).
    NotStarted,
    /// Connecting to the bus.
    Starting,
    /// Going out through this server.
    On(String),
    /// Off, and why (said once).
    Off(DesktopOff),
}

/// The runtime's attention state.
pub struct AttentionState {
    /// Who needs the person.
    queue: Attention,
    mutes: Mutes,
    notifier: Option<DesktopNotifier>,
    desktop: Desktop,
    window_focused: bool,
    activated: Option<NodeId>,
    /// The project observed last, and since when: its terminals settle first.
    observing: Option<(ProjectId, Instant)>,
}

impl AttentionState {
    /// The state with the mutes saved in `data` (and why they could not be read).
    pub fn load(data: &Path) -> (AttentionState, Option<MutesError>) {
        let (mutes, error) = match Mutes::load(data) {
            Ok(m) => (m, None),
            Err(e) => (Mutes::default(), Some(e)),
        };
        let state = AttentionState {
            queue: Attention::default(),
            mutes,
            notifier: None,
            desktop: Desktop::NotStarted,
            window_focused: false,
            activated: None,
            observing: None,
        };
        (state, error)
    }

    /// Where desktop notifications stand.
    pub fn desktop(&self) -> &Desktop {
        &self.desktop
    }
}

impl AttentionState {
    /// Desktop notifications start on `bus`; `on_event` hears the notifier's news.
    pub(crate) fn start_desktop(&mut self, bus: Bus, on_event: impl Fn(DesktopEvent) + Send + Sync + 'static) {
        self.desktop = Desktop::Starting;
        self.notifier = Some(DesktopNotifier::spawn(bus, on_event));
    }

    /// What the notifier said; the line to tell the person, if any.
    pub(crate) fn desktop_event(&mut self, event: DesktopEvent) -> DesktopNews {
        match event {
            DesktopEvent::Ready { server } => {
                tracing::info!(%server, "desktop notifications go out through the session bus");
                self.desktop = Desktop::On(server);
                DesktopNews::Quiet
            }
            DesktopEvent::Off(why) => {
                if matches!(self.desktop, Desktop::Off(_)) {
                    return DesktopNews::Quiet;
                }
                let line =
                    format!("desktop notifications are off: {why}; the tabs and Ctrl+J still show who needs you");
                self.desktop = Desktop::Off(why);
                self.notifier = None;
                DesktopNews::Tell(line)
            }
            DesktopEvent::Activated(node) => {
                self.activated = Some(node);
                DesktopNews::Redraw
            }
        }
    }

    /// The node whose desktop notification the person activated, once.
    pub(crate) fn take_activated(&mut self) -> Option<NodeId> {
        self.activated.take()
    }

    /// The window gained or lost the keyboard.
    pub(crate) fn set_window_focused(&mut self, focused: bool) {
        self.window_focused = focused;
    }

    /// The person looked at `node`; `bell` says a bell or notice of its was
    /// answered. True when anything changed (its notification goes too).
    pub(crate) fn seen(&mut self, node: &NodeId, bell: bool) -> bool {
        if !(self.queue.acknowledge(node) || bell) {
            return false;
        }
        if let Some(n) = &self.notifier {
            n.close(node);
        }
        true
    }

    /// The node that has waited longest, other than `focus`.
    pub(crate) fn next(&self, focus: Option<&NodeId>) -> Option<Waiting> {
        self.queue.next(focus)
    }

    /// How many nodes of `project` wait.
    pub(crate) fn count(&self, project: &ProjectId) -> usize {
        self.queue.count(project)
    }

    /// Whether `node` waits.
    pub(crate) fn is_waiting(&self, node: &NodeId) -> bool {
        self.queue.is_waiting(node)
    }

    /// Whether the project in `folder` is muted.
    pub(crate) fn is_muted(&self, folder: &Path) -> bool {
        self.mutes.is_muted(folder)
    }

    /// Mutes or unmutes the project in `folder`, saved in `data`.
    pub(crate) fn set_muted(&mut self, data: &Path, folder: &Path, muted: bool) -> Result<(), MutesError> {
        self.mutes.set(data, folder, muted)
    }

    /// Observes `project`'s nodes with why each needs the person now (a node
    /// `focus`ed in a focused window is seen), then forgets nodes no longer in
    /// `workspace`. Returns who entered the queue (to be notified) and whether
    /// anything changed at all.
    pub(crate) fn observe(
        &mut self,
        project: Option<Observed<'_>>,
        workspace: &Workspace,
        focus: Option<&NodeId>,
        now: Instant,
    ) -> (Vec<Waiting>, bool) {
        let mut changes = vec![];
        if let Some((p, observed)) = project {
            let project = p.id().clone();
            if self.observing.as_ref().is_none_or(|(id, _)| *id != project) {
                self.observing = Some((project.clone(), now));
            }
            // A project just brought back re-attaches its terminals, whose
            // output reads as work until they are quiet again: until then a
            // node that waited keeps waiting (and keeps its place in the queue).
            let settling = self.observing.as_ref().is_some_and(|(_, at)| now < *at + SETTLE);
            for (id, reason) in observed {
                if settling && reason.is_none() {
                    continue;
                }
                let seen = self.window_focused && focus == Some(&id);
                changes.extend(self.queue.observe(&id, &project, reason, seen, now));
            }
        }
        let gone = self.queue.retain(|n, p| workspace.project(p).is_some_and(|p| p.node(n).is_some()));
        changes.extend(gone.into_iter().map(Change::Left));
        let changed = !changes.is_empty();
        let mut entered = vec![];
        for change in changes {
            match change {
                Change::Entered(w) => entered.push(w),
                Change::Left(node) => {
                    if let Some(n) = &self.notifier {
                        n.close(&node);
                    }
                }
            }
        }
        (entered, changed)
    }

    /// Whether `w`'s desktop notification should go out: a notifier is up,
    /// the window lacks the keyboard and the project in `folder` is not muted.
    pub(crate) fn wants_desktop(&self, folder: &Path) -> bool {
        self.notifier.is_some() && !self.window_focused && !self.mutes.is_muted(folder)
    }

    /// Shows a desktop notification for `node`.
    pub(crate) fn show_desktop(&self, node: NodeId, summary: String, body: String) {
        if let Some(n) = &self.notifier {
            n.show(node, summary, body);
        }
    }
}

/// A project's nodes with why each needs the person now (`None`: it does not).
pub(crate) type Observed<'p> = (&'p Project, Vec<(NodeId, Option<Reason>)>);

/// What a desktop notifier's news asks of the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesktopNews {
    /// Nothing.
    Quiet,
    /// Tell the person this line.
    Tell(String),
    /// Draw again.
    Redraw,
}
