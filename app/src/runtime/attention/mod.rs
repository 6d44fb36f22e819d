//! Who needs the person: which nodes wait for them and why, the count on each
//! project's tab, the node Ctrl+J goes to (the one that has waited longest,
//! in any open project), and desktop notifications while the window is not
//! focused (muted per project).
//!
//! What a node reports goes through one mapping, [`needs_you`] (plus the
//! bell of a terminal). The active project's nodes are observed whenever
//! their terminals change (output going quiet is seen by the terminal
//! ticker); a node of a project in the background keeps what it last
//! reported until its project is active again (and for a few seconds more,
//! while its re-attached terminals settle). A node leaves the queue when the
//! person gives it the keyboard or its state moves on; a bell only when seen.
//!
//! Files and what each imports of this folder (checked by module-graph's
//! test); this file is the runtime's side, which tells the subsystem what
//! the nodes report:
//!
//! ```text
//! queue  → reason  (the pure state: who, why, since when)
//! state  → desktop, mutes, queue, reason  (the subsystem's own state, AttentionState)
//! leaves: desktop, mutes, reason  (the D-Bus notifier threads; muted projects,
//!         saved in the data dir; why a node needs the person, from its status)
//! ```

mod desktop;
mod mutes;
mod queue;
mod reason;
mod state;

pub use desktop::{Bus, DesktopEvent, DesktopNotifier, DesktopOff};
pub use mutes::{Mutes, MutesError, MUTES_FILE};
pub use queue::{Attention, Change, Waiting};
pub use reason::{needs_you, Reason};
pub use state::{AttentionState, Desktop, DesktopNews};

use super::Runtime;
use crate::model::{Camera, NodeId, ProjectId, Rect};
use std::path::Path;
use std::time::Instant;

/// Below this zoom a terminal's text cannot be read: a jump zooms in.
pub const READABLE_ZOOM: f64 = 0.75;

/// The camera a jump to a node at `rect` moves to: centred on it at the
/// current zoom, unless that is too small to read; then at 100 % or, for a
/// node larger than the view, the zoom that fits it (never below [`READABLE_ZOOM`]).
pub fn jump_camera(current: Camera, rect: &Rect, viewport: (f64, f64)) -> Camera {
    let zoom = if current.zoom >= READABLE_ZOOM {
        current.zoom
    } else {
        let fit = (viewport.0 / rect.w.max(1.0)).min(viewport.1 / rect.h.max(1.0));
        fit.clamp(READABLE_ZOOM, 1.0)
    };
    Camera { zoom, ..current }.centred_on(rect, viewport)
}

/// A node's notification: its title as the summary; the reason and the project as the body.
pub fn notification_text(title: &str, reason: &Reason, project: &str) -> (String, String) {
    (title.to_owned(), format!("{} — {project}", reason.text()))
}

impl Runtime {
    /// Starts desktop notifications on `bus` (the window does, headless does not).
    pub fn start_desktop_notifications(&mut self, bus: Bus) {
        let app = self.handle();
        self.attention.start_desktop(bus, move |event| {
            let _ = app.post(move |rt| rt.on_desktop_event(event));
        });
    }

    fn on_desktop_event(&mut self, event: DesktopEvent) {
        match self.attention.desktop_event(event) {
            DesktopNews::Quiet => {}
            DesktopNews::Tell(line) => self.notify(line, false),
            DesktopNews::Redraw => self.request_redraw(),
        }
    }

    /// The node whose desktop notification the person activated, once.
    pub fn take_activated_node(&mut self) -> Option<NodeId> {
        self.attention.take_activated()
    }

    /// The window gained or lost the keyboard (notifications go out only while it has not).
    pub fn set_window_focused(&mut self, focused: bool) {
        self.attention.set_window_focused(focused);
        if focused {
            // The person is back at the node they were in: it no longer calls them.
            if let Some(id) = self.focus.clone() {
                self.attention_seen(&id);
            }
        }
    }

    /// The person looked at `node` (gave it the keyboard): it leaves the queue
    /// until its state changes, its bell is answered and its notification goes.
    pub fn attention_seen(&mut self, node: &NodeId) {
        let bell = self.terminals.clear_calls(node);
        if self.attention.seen(node, bell) {
            self.request_redraw();
        }
    }

    /// The node that has waited longest for the person, other than the one they are in.
    pub fn next_needing_you(&self) -> Option<Waiting> {
        self.attention.next(self.focus.as_ref())
    }

    /// How many nodes of `project` wait for the person.
    pub fn needing_you(&self, project: &ProjectId) -> usize {
        self.attention.count(project)
    }

    /// Whether `node` waits for the person.
    pub fn node_needs_you(&self, node: &NodeId) -> bool {
        self.attention.is_waiting(node)
    }

    /// The open project `node` belongs to.
    pub fn project_of(&self, node: &NodeId) -> Option<ProjectId> {
        self.workspace.projects().iter().find(|p| p.node(node).is_some()).map(|p| p.id().clone())
    }

    /// Whether the project in `folder` has its desktop notifications muted.
    pub fn notifications_muted(&self, folder: &Path) -> bool {
        self.attention.is_muted(folder)
    }

    /// Mutes or unmutes the active project's desktop notifications (saved).
    pub fn set_notifications_muted(&mut self, muted: bool) {
        let Some(p) = self.project() else { return };
        let (folder, name) = (p.folder().to_path_buf(), p.name().to_owned());
        let data = self.data_dir().to_path_buf();
        let verb = if muted { "muted" } else { "unmuted" };
        match self.attention.set_muted(&data, &folder, muted) {
            Ok(()) => self.notify(format!("desktop notifications {verb} for {name}"), false),
            Err(e) => self.notify(format!("desktop notifications {verb} for {name} for now, but not saved: {e}"), true),
        }
    }

    /// Why `node` needs the person now, if it does.
    fn reason_now(&self, node: &NodeId) -> Option<Reason> {
        let status = self.agent_node_status(node);
        status.as_ref().and_then(needs_you).or_else(|| {
            let t = self.terminals.get(node)?;
            match &t.notice {
                Some(n) => Some(Reason::Notified { title: n.title.clone(), body: n.body.clone() }),
                None => t.bell.then_some(Reason::Bell),
            }
        })
    }

    /// Observes the active project's nodes and forgets closed ones.
    pub fn refresh_attention(&mut self) {
        self.refresh_attention_at(Instant::now());
    }

    /// [`Runtime::refresh_attention`] as of `now` (tests pass a later time
    /// instead of waiting for an agent to go quiet).
    pub(crate) fn refresh_attention_at(&mut self, now: Instant) {
        let active = self.workspace.active().map(|p| {
            let observed: Vec<(NodeId, Option<Reason>)> =
                p.nodes().map(|n| (n.id.clone(), self.reason_now(&n.id))).collect();
            (p, observed)
        });
        let (entered, changed) = self.attention.observe(active, &self.workspace, self.focus.as_ref(), now);
        if !changed {
            return;
        }
        for w in &entered {
            self.notify_desktop(w);
        }
        self.request_redraw();
    }

    /// Sends `w`'s desktop notification unless the window has the keyboard or its project is muted.
    fn notify_desktop(&self, w: &Waiting) {
        let Some(p) = self.workspace.project(&w.project) else { return };
        if !self.attention.wants_desktop(p.folder()) {
            return;
        }
        // The title the window shows for it (its program's, a name the person gave…).
        let title = p.node(&w.node).map_or_else(|| w.node.to_string(), |n| self.node_title(n));
        let (summary, body) = notification_text(&title, &w.reason, p.name());
        self.attention.show_desktop(w.node.clone(), summary, body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeKind;
    use crate::runtime::test_context::TestContext;
    use std::time::Duration;

    fn terminal_node(ctx: &mut TestContext, title: &str) -> NodeId {
        let cwd = ctx.folder();
        ctx.add(NodeKind::Terminal { cwd, command: None, tmux_session: None }, title, (0.0, 0.0, 400.0, 300.0))
    }

    /// A context with terminals whose canvas starts empty (its own agent node,
    /// un-launched for want of a custom agent, would need the person too).
    fn empty_canvas() -> TestContext {
        let mut ctx = TestContext::with_terminals();
        let agent = NodeId::new(ctx.agent.node_id.as_str()).unwrap();
        ctx.rt.apply(crate::model::Command::RemoveNodes { ids: vec![agent] }).unwrap();
        let project = ctx.rt.project_id().unwrap();
        assert_eq!(ctx.rt.needing_you(&project), 0);
        ctx
    }

    /// Runs the main loop's queued jobs (what terminal callbacks post).
    fn settle(ctx: &mut TestContext) {
        for _ in 0..5 {
            ctx.rt.tick();
        }
    }

    #[test]
    fn a_jump_centres_the_node_and_zooms_in_only_when_it_is_unreadable() {
        let r = Rect::new(1000.0, 500.0, 400.0, 200.0);
        let view = (1280.0, 800.0);
        let kept = jump_camera(Camera { x: 0.0, y: 0.0, zoom: 1.5 }, &r, view);
        assert_eq!(kept.zoom, 1.5, "a readable zoom is kept");
        let mid = kept.screen_to_world(640.0, 400.0);
        assert_eq!((mid.x, mid.y), (1200.0, 600.0), "centred");
        assert_eq!(jump_camera(Camera { x: 0.0, y: 0.0, zoom: 0.2 }, &r, view).zoom, 1.0, "too small: 100 %");
        let huge = Rect::new(0.0, 0.0, 2000.0, 1000.0);
        assert_eq!(
            jump_camera(Camera { x: 0.0, y: 0.0, zoom: 0.2 }, &huge, view).zoom,
            0.75,
            "fits, but stays readable"
        );
        let big = Rect::new(0.0, 0.0, 1600.0, 800.0);
        assert_eq!(jump_camera(Camera { x: 0.0, y: 0.0, zoom: 0.2 }, &big, view).zoom, 0.8, "the zoom that fits it");
    }

    #[test]
    fn a_notification_names_the_node_the_reason_and_the_project() {
        let (summary, body) = notification_text("Build", &Reason::WaitingForInput, "site");
        assert_eq!((summary.as_str(), body.as_str()), ("Build", "waiting for input — site"));
    }

    #[test]
    fn muting_a_project_is_saved_by_folder_and_read_back_at_start() {
        let mut ctx = TestContext::new();
        let folder = ctx.rt.project().unwrap().folder().to_path_buf();
        assert!(!ctx.rt.notifications_muted(&folder));
        ctx.rt.set_notifications_muted(true);
        assert!(ctx.rt.notifications_muted(&folder));
        let (again, error) = AttentionState::load(ctx.rt.data_dir());
        assert!(error.is_none());
        assert!(again.is_muted(&folder), "saved");
        ctx.rt.set_notifications_muted(false);
        assert!(!AttentionState::load(ctx.rt.data_dir()).0.is_muted(&folder), "unmute saved too");
        assert!(ctx.rt.notices.iter().any(|n| n.text.starts_with("desktop notifications unmuted for")));
    }

    #[test]
    fn a_bell_makes_a_terminal_need_you_until_you_give_it_the_keyboard() {
        let mut ctx = empty_canvas();
        let id = terminal_node(&mut ctx, "Build");
        let project = ctx.rt.project_id().unwrap();
        let fake = ctx.spawner.terminal(id.as_str()).expect("the terminal started");
        assert_eq!(ctx.rt.needing_you(&project), 0);
        fake.show("done\x07");
        settle(&mut ctx);
        ctx.rt.refresh_attention();
        assert_eq!(ctx.rt.needing_you(&project), 1, "the bell calls the person");
        let next = ctx.rt.next_needing_you().expect("someone waits");
        assert_eq!((next.node.clone(), next.reason), (id.clone(), Reason::Bell));
        ctx.rt.focus = Some(id.clone());
        ctx.rt.attention_seen(&id);
        ctx.rt.refresh_attention();
        assert_eq!(ctx.rt.needing_you(&project), 0, "seen");
        assert!(!ctx.rt.terminals.get(&id).unwrap().bell, "the bell is answered");
        assert_eq!(ctx.rt.next_needing_you(), None);
    }

    #[test]
    fn a_programs_notification_calls_the_person_with_its_text_until_seen() {
        let mut ctx = empty_canvas();
        let id = terminal_node(&mut ctx, "Build");
        let project = ctx.rt.project_id().unwrap();
        let fake = ctx.spawner.terminal(id.as_str()).expect("the terminal started");
        fake.show("\x1b]777;notify;make;all 212 tests passed\x1b\\");
        settle(&mut ctx);
        assert_eq!(ctx.rt.needing_you(&project), 1, "a notification calls the person at once");
        let next = ctx.rt.next_needing_you().expect("someone waits");
        assert_eq!(next.reason.text(), "make: all 212 tests passed");
        fake.show("\x1b]9;second\x07");
        settle(&mut ctx);
        assert_eq!(ctx.rt.next_needing_you().map(|w| w.reason.text()).as_deref(), Some("second"), "the latest one");
        ctx.rt.focus = Some(id.clone());
        ctx.rt.attention_seen(&id);
        ctx.rt.refresh_attention();
        assert_eq!(ctx.rt.needing_you(&project), 0, "seen");
        assert!(ctx.rt.terminals.get(&id).unwrap().notice.is_none(), "answered");
    }

    #[test]
    fn a_missing_agent_cli_needs_you_and_a_closed_node_leaves_the_queue() {
        let mut ctx = empty_canvas();
        let project = ctx.rt.project_id().unwrap();
        let prefs = crate::paths::agent_tools(ctx.rt.data_dir()).join("preferences.json");
        std::fs::write(&prefs, r#"{"custom": {"executable": "termsprawl-no-such-agent-cli"}}"#).unwrap();
        let cwd = ctx.folder();
        let kind = NodeKind::Agent { cwd, agent: crate::model::AgentKind::Custom, worktree: None };
        let id = ctx.add(kind, "Missing", (0.0, 0.0, 400.0, 300.0));
        ctx.rt.refresh_attention();
        let status = ctx.rt.agent_node_status(&id);
        let Some(AgentNodeStatus::NotLaunched(why)) = status else { panic!("the CLI is missing: {status:?}") };
        assert_eq!(ctx.rt.next_needing_you().map(|w| (w.node, w.reason)), Some((id.clone(), Reason::NotLaunched(why))));
        assert_eq!(ctx.rt.needing_you(&project), 1);
        ctx.rt.apply(crate::model::Command::RemoveNodes { ids: vec![id.clone()] }).unwrap();
        assert_eq!(ctx.rt.needing_you(&project), 0, "a closed node needs nobody");
    }

    #[test]
    fn a_quiet_agent_waits_for_input_from_when_it_went_quiet() {
        let mut ctx = empty_canvas();
        let project = ctx.rt.project_id().unwrap();
        let id = custom_agent(&mut ctx);
        let fake = ctx.spawner.terminal(id.as_str()).expect("the agent started");
        fake.show("What next?");
        settle(&mut ctx);
        ctx.rt.refresh_attention();
        assert_eq!(ctx.rt.needing_you(&project), 0, "it just printed: it works");
        let quiet = Instant::now() + crate::runtime::terminals::AGENT_IDLE_AFTER + Duration::from_secs(1);
        let wall = std::time::SystemTime::now() + crate::runtime::terminals::AGENT_IDLE_AFTER + Duration::from_secs(1);
        ctx.rt.terminals_tick_at(quiet, wall);
        let w = ctx.rt.next_needing_you().expect("the agent waits");
        assert_eq!((w.node.clone(), w.reason.clone(), w.since), (id.clone(), Reason::WaitingForInput, quiet));
        fake.exit(terminal::ExitStatus { code: 4, signal: None });
        settle(&mut ctx);
        let w = ctx.rt.next_needing_you().expect("the exit is seen at once");
        assert_eq!(w.reason, Reason::Failed(terminal::ExitStatus { code: 4, signal: None }));
    }

    /// A `custom` agent node (a script that does nothing) started as a fake
    /// terminal: the tool server is off, so the launch does not wait for it.
    fn custom_agent(ctx: &mut TestContext) -> NodeId {
        use std::os::unix::fs::PermissionsExt;
        let exe = ctx.root().join("quiet-agent");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let prefs = crate::paths::agent_tools(ctx.rt.data_dir()).join("preferences.json");
        std::fs::write(&prefs, serde_json::json!({"custom": {"executable": exe}}).to_string()).unwrap();
        ctx.rt.tools.phase = crate::runtime::tools::ToolPhase::Off;
        let cwd = ctx.folder();
        let kind = NodeKind::Agent { cwd, agent: crate::model::AgentKind::Custom, worktree: None };
        ctx.add(kind, "Custom", (0.0, 0.0, 400.0, 300.0))
    }

    use crate::runtime::terminals::AgentNodeStatus;
}
