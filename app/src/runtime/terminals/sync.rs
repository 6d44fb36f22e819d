//! The runtime side: keeping live terminals in line with the active
//! project's nodes (start, resize, put away, detach), periodic work, and
//! what the renderer shows for terminal nodes.

use super::super::scene;
use super::super::Runtime;
use super::badges::{agent_badge, terminal_badge, time_in_state};
use super::grid::grid_view;
use super::hook::{LaunchDecision, PtyLaunch};
use super::host::NodeHost;
use super::launch::{self, LaunchEnv, LaunchSite, Prepared, Started, Wanted};
use super::naming::{session_name, valid_session_name};
use super::nodes::closed_for_good;
use super::snapshots::{screen_snapshot, SessionJob, SNAPSHOT_EVERY};
use super::status::{AgentNodeActivity, AgentNodeStatus, NotLaunched, AGENT_IDLE_AFTER};
use super::ticker::{self, TICK_EVERY};
use crate::model::{AgentKind, NodeId, NodeKind, Rect};
use crate::runtime::LaunchHook;
use canvas_render::{Badge, NodeContent};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use terminal::tmux::{Tmux, TmuxSession};
use terminal::{TermSize, TerminalHost};

/// From this many PTYs in one sync pass they start on a worker thread
/// (fewer, as when a node is opened, start at once: callers read them next).
const IN_BACKGROUND_FROM: usize = 4;

/// Cell size assumed before a renderer exists (DejaVu/Hack at 14 px).
const FALLBACK_CELL: (f32, f32) = (8.0, 17.0);

impl LaunchSite for Runtime {
    fn tmux_session(&mut self, id: &NodeId, name: &str) -> Option<TmuxSession> {
        // A node closed and brought back (undo) must not attach to the session being ended.
        if self.terminals.sessions.is_ending(name) {
            self.terminals.sessions.flush(Duration::from_secs(2));
        }
        let data = self.data_dir().to_path_buf();
        let tmux = self.tmux().cloned()?;
        match TmuxSession::new(tmux, &data, name) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(node = %id, "terminal runs without tmux: {e}");
                None
            }
        }
    }

    fn session_running(&mut self, session: &TmuxSession) -> bool {
        // One `list-sessions` per sync pass, not one `has-session` per terminal.
        let running = self.terminals.running_sessions.get_or_insert_with(|| session.sessions_on_socket());
        running.contains(session.name())
    }

    fn decide(&mut self, launch: &mut PtyLaunch) -> LaunchDecision {
        match self.launch_hook.clone() {
            Some(hook) => hook(self, launch),
            None => LaunchDecision::Launch,
        }
    }

    fn host(&self, id: &NodeId) -> Arc<dyn TerminalHost> {
        Arc::new(NodeHost { node: id.clone(), app: self.handle(), out_of_view: self.terminals.out_of_view.clone() })
    }
}

impl Runtime {
    /// Columns × rows that fill a node (the font's cell size, never the zoom).
    pub fn terminal_size_for(&self, rect: &Rect) -> TermSize {
        let (cols, rows, cw, ch) = match &self.gfx {
            Some(g) => {
                let (c, r) = g.renderer.terminal_grid_size(scene::render_rect(rect));
                let m = g.renderer.cell_metrics();
                (c, r, m.width, m.height)
            }
            None => {
                let body = canvas_render::content_rect(scene::render_rect(rect), &canvas_render::Theme::default());
                let c = (body.w / FALLBACK_CELL.0).floor().clamp(2.0, 1000.0) as u16;
                let r = (body.h / FALLBACK_CELL.1).floor().clamp(1.0, 1000.0) as u16;
                (c, r, FALLBACK_CELL.0, FALLBACK_CELL.1)
            }
        };
        TermSize { cols: cols.max(2), rows: rows.max(1), cell_width: cw as u16, cell_height: ch as u16 }
    }

    /// Test seam: PTYs start through `spawner` and never inside tmux (so a
    /// test neither needs a PTY nor leaves tmux sessions behind).
    #[cfg(test)]
    pub(crate) fn use_pty_spawner(&mut self, spawner: Arc<dyn super::spawner::PtySpawner>) {
        self.terminals.spawner = spawner;
        self.terminals.tmux = Some(None);
    }

    /// Installs the hook that prepares every terminal/agent PTY before it
    /// starts (the tool runtime's credential and launch integration).
    pub fn set_pty_launch_hook(&mut self, hook: LaunchHook) {
        self.launch_hook = Some(hook);
    }

    /// Forgets why agent nodes did not launch, so the next sync tries again
    /// (after the user installed the CLI or fixed preferences.json).
    pub fn retry_agent_launches(&mut self) {
        self.terminals.not_launched.clear();
        self.sync_terminals();
    }

    /// The usable tmux (detected once per run; `None` means snapshot persistence).
    pub fn tmux(&mut self) -> Option<&Tmux> {
        if self.terminals.tmux.is_none() {
            let found = match Tmux::detect() {
                Ok(t) => {
                    tracing::info!(version = %t.version(), "terminal sessions run inside tmux");
                    Some(t)
                }
                Err(e) => {
                    tracing::info!("terminal sessions persist as snapshots: {e}");
                    None
                }
            };
            self.terminals.tmux = Some(found);
        }
        self.terminals.tmux.as_ref().and_then(Option::as_ref)
    }

    /// Spawns, resizes and ends terminals so they match the active project.
    pub fn sync_terminals(&mut self) {
        self.start_terminal_ticker();
        let mut wanted = vec![];
        let mut project_id = None;
        let mut folder = PathBuf::new();
        if let Some(p) = self.project() {
            project_id = Some(p.id().clone());
            folder = p.folder().to_path_buf();
            for node in p.nodes() {
                let mut artifact = None;
                let (cwd, command, agent, session) = match &node.kind {
                    NodeKind::Terminal { cwd, command, tmux_session } => {
                        let session = tmux_session.clone().filter(|s| valid_session_name(s));
                        (cwd.clone(), command.clone(), None, session)
                    }
                    // An external agent runs outside the app: nothing to launch here.
                    NodeKind::Agent { agent: AgentKind::External, .. } => continue,
                    NodeKind::Agent { cwd, agent, .. } => (cwd.clone(), None, Some(*agent), None),
                    NodeKind::Artifact { path, view, base } => {
                        artifact = Some((path.clone(), *view, base.clone()));
                        (folder.clone(), None, None, None)
                    }
                    _ => continue,
                };
                let cwd = if cwd.as_os_str().is_empty() { folder.clone() } else { cwd };
                let session = session.unwrap_or_else(|| session_name(&folder, &node.id));
                wanted.push(Wanted { id: node.id.clone(), rect: node.rect, cwd, command, agent, artifact, session });
            }
        }
        let gone: Vec<NodeId> =
            self.terminals.map.keys().filter(|id| !wanted.iter().any(|w| &w.id == *id)).cloned().collect();
        for id in gone {
            self.put_away_terminal(&id);
        }
        self.terminals.not_launched.retain(|id, _| wanted.iter().any(|w| &w.id == id));
        self.terminals.deferred.clear();
        let Some(project_id) = project_id else { return };
        let env = LaunchEnv::of_process(self.data_dir().to_path_buf());
        let mut ready = vec![];
        self.terminals.running_sessions = None;
        for w in wanted {
            let size = self.terminal_size_for(&w.rect);
            if let Some(t) = self.terminals.map.get(&w.id) {
                let s = t.term.snapshot();
                if (s.cols, s.rows) != (size.cols as usize, size.rows as usize) {
                    if let Err(e) = t.term.resize(size) {
                        tracing::debug!(node = %w.id, error = %e, "terminal resize failed");
                    }
                }
                continue;
            }
            if self.terminals.not_launched.contains_key(&w.id) || self.terminals.starting.contains(&w.id) {
                continue;
            }
            let id = w.id.clone();
            match launch::prepare(self, w, size, &project_id, &folder, &env) {
                Prepared::Ready(r) => ready.push(*r),
                Prepared::Done(started) => self.started(id, started),
            }
        }
        self.terminals.running_sessions = None;
        // The PTYs (and tmux sessions) of a whole restore start side by side.
        let spawner = self.terminals.spawner.clone();
        if ready.len() < IN_BACKGROUND_FROM {
            for (id, started) in launch::spawn_all(ready, &*spawner) {
                self.started(id, started);
            }
            return;
        }
        // Many at once (a restore, a project switch): on a worker thread, so the
        // main thread goes on pumping the engine and pages load meanwhile; the
        // nodes read "starting" until their terminals arrive.
        let ids: Vec<NodeId> = ready.iter().map(launch::Ready::node).cloned().collect();
        self.terminals.starting.extend(ids.iter().cloned());
        self.terminals.publish_activity();
        let app = self.handle();
        let spawned = std::thread::Builder::new().name("term-start".into()).spawn(move || {
            let all = launch::spawn_all(ready, &*spawner);
            // The app stopped: dropping them hangs up (a tmux session lives on).
            let _ = app.post(move |rt| rt.take_started(all));
        });
        if let Err(e) = spawned {
            tracing::warn!("terminals not started, retried at the next sync: {e}");
            for id in &ids {
                self.terminals.starting.remove(id);
            }
        }
    }

    /// Takes in the terminals a worker thread started for `sync_terminals`,
    /// then syncs again: a node closed or resized meanwhile is put away or
    /// resized, a project switched away from is detached.
    fn take_started(&mut self, all: Vec<(NodeId, Started)>) {
        for (id, started) in all {
            self.terminals.starting.remove(&id);
            let focused = self.focus.as_ref() == Some(&id);
            self.started(id.clone(), started);
            if let Some(t) = self.terminals.map.get(&id).filter(|_| focused) {
                t.term.with_screen(|s| s.set_focused(true));
            }
        }
        self.sync_terminals();
        self.request_redraw();
    }

    /// Ends or detaches the live terminal of a node that is no longer shown.
    fn put_away_terminal(&mut self, id: &NodeId) {
        let Some(t) = self.terminals.map.remove(id) else { return };
        let data = self.data_dir().to_path_buf();
        let job = if closed_for_good(&self.workspace, &t.project, id) {
            SessionJob::End { data, tmux: self.tmux().cloned(), name: t.session.clone() }
        } else {
            SessionJob::Save { data, name: t.session.clone(), bytes: screen_snapshot(t.term.as_ref()) }
        };
        // Dropping hangs up: a tmux client detaches, a plain shell ends.
        drop(t);
        self.terminals.sessions.queue(job);
    }

    /// Runs an ended terminal/agent node's program again on a fresh screen: its
    /// tmux session (if any is left) and snapshot are ended first, so nothing of
    /// the last run is replayed into the new one.
    pub fn restart_terminal(&mut self, id: &NodeId) -> Result<(), String> {
        match self.terminals.map.get(id) {
            None => return Err(format!("node {id} runs no program to restart")),
            Some(t) if t.exited.is_none() => return Err(format!("node {id}'s program is still running")),
            Some(_) => {}
        }
        let Some(t) = self.terminals.map.remove(id) else { return Ok(()) };
        let job = SessionJob::End {
            data: self.data_dir().to_path_buf(),
            tmux: self.tmux().cloned(),
            name: t.session.clone(),
        };
        drop(t);
        self.terminals.sessions.queue(job);
        // The launch reads the snapshot file at once: it must be gone by then.
        self.terminals.sessions.flush(Duration::from_secs(5));
        self.sync_terminals();
        if self.focus.as_ref() == Some(id) {
            if let Some(t) = self.terminals.map.get(id) {
                t.term.with_screen(|s| s.set_focused(true));
            }
        }
        self.request_redraw();
        tracing::debug!(node = %id, "terminal restarted");
        Ok(())
    }

    /// Whether a node's terminal program has ended (it can be restarted).
    pub fn terminal_ended(&self, id: &NodeId) -> bool {
        self.terminals.map.get(id).is_some_and(|t| t.exited.is_some())
    }

    /// Records why a node's terminal was not started: its body says so, and a notice.
    fn not_launched(&mut self, id: NodeId, notice: String, why: NotLaunched) {
        self.notify(notice, true);
        self.terminals.not_launched.insert(id, why);
        self.request_redraw();
    }

    /// Takes in how a node's launch ended.
    fn started(&mut self, id: NodeId, started: Started) {
        match started {
            Started::Live(live) => {
                self.terminals.map.insert(id, *live);
                self.terminals.publish_activity();
            }
            Started::Deferred => {
                self.terminals.deferred.insert(id);
                self.terminals.publish_activity();
            }
            Started::NotLaunched { notice, why } => self.not_launched(id, notice, why),
            Started::Failed(notice) => self.notify(notice, true),
        }
    }

    /// Starts the thread that wakes the main thread every [`TICK_EVERY`] for
    /// [`Runtime::terminals_tick`]; it ends when the app stops taking jobs.
    fn start_terminal_ticker(&mut self) {
        if self.terminals.ticker {
            return;
        }
        self.terminals.ticker = true;
        if let Err(e) = ticker::spawn(self.handle(), TICK_EVERY, Runtime::terminals_tick) {
            tracing::warn!("terminal ticker not started (agent badges refresh only on output): {e}");
        }
    }

    /// Periodic terminal work: moves the quiet-time guess of agents that
    /// report nothing on (redrawing when it changed), republishes activity,
    /// saves snapshots of changed terminals every [`SNAPSHOT_EVERY`], and
    /// retries deferred launches.
    pub fn terminals_tick(&mut self) {
        self.terminals_tick_at(Instant::now(), SystemTime::now());
    }

    /// [`Runtime::terminals_tick`] as of `now` (tests pass a later time
    /// instead of waiting for an agent to go quiet).
    pub(crate) fn terminals_tick_at(&mut self, now: Instant, wall: SystemTime) {
        let mut changed = false;
        for t in self.terminals.map.values_mut() {
            if t.agent.is_some() {
                changed |= t.activity.tick(now, wall, t.term.last_output_at(), AGENT_IDLE_AFTER);
            }
        }
        // A badge's time in state moves on once a minute: redraw when one did.
        let before = self.terminals.last_tick_wall.replace(wall).unwrap_or(wall);
        let terminals = &self.terminals;
        changed |= terminals
            .map
            .keys()
            .filter_map(|id| terminals.agent_activity(id))
            .any(|a| time_in_state(a.since, before) != time_in_state(a.since, wall));
        if changed {
            self.request_redraw();
        }
        self.terminals.publish_activity();
        if self.terminals.last_snapshot.is_none_or(|at| now.duration_since(at) >= SNAPSHOT_EVERY) {
            self.terminals.last_snapshot = Some(now);
            self.save_terminal_snapshots();
        }
        if !self.terminals.deferred.is_empty() {
            self.sync_terminals();
        }
        // An agent going quiet is seen only here.
        self.refresh_attention_at(now);
    }

    /// Saves the snapshot of every live terminal whose grid changed since its
    /// last save (serialised here, written by the session worker).
    pub fn save_terminal_snapshots(&mut self) {
        let data = self.data_dir().to_path_buf();
        let mut jobs = vec![];
        for t in self.terminals.map.values_mut() {
            let generation = t.term.generation();
            if t.saved_generation == Some(generation) {
                continue;
            }
            t.saved_generation = Some(generation);
            jobs.push(SessionJob::Save {
                data: data.clone(),
                name: t.session.clone(),
                bytes: screen_snapshot(t.term.as_ref()),
            });
        }
        for job in jobs {
            self.terminals.sessions.queue(job);
        }
    }

    /// At app exit: snapshot every terminal and detach (sessions live on).
    pub fn detach_terminals(&mut self) {
        self.save_terminal_snapshots();
        // Dropping hangs up each client; tmux sessions keep running.
        self.terminals.map.clear();
        self.terminals.sessions.flush(Duration::from_secs(10));
    }

    /// An agent node's status (`None` for other nodes).
    pub fn agent_node_status(&self, id: &NodeId) -> Option<AgentNodeStatus> {
        self.agent_activity(id).map(|a| a.status)
    }

    /// An agent node's status with its time and source (`None` for other
    /// nodes, and for terminal nodes whose program reported nothing).
    pub fn agent_activity(&self, id: &NodeId) -> Option<AgentNodeActivity> {
        self.terminals.agent_activity(id)
    }

    pub(crate) fn terminal_content(&self, id: &NodeId) -> NodeContent {
        if let Some(why) = self.terminals.not_launched.get(id) {
            return NodeContent::Text(why.message());
        }
        match self.terminals.map.get(id) {
            Some(t) => NodeContent::Terminal(grid_view(&t.term.snapshot(), self.focus.as_ref() == Some(id))),
            None if self.is_external_agent(id) => NodeContent::Text(format!(
                "External agent: it runs outside this window and works on the canvas with its tool session, \
                 from any shell:\n\n  termsprawl-ctl --node {id} call canvas_list"
            )),
            None => NodeContent::Empty,
        }
    }

    /// Whether `id` is an external agent's node (its program is not the app's to run).
    fn is_external_agent(&self, id: &NodeId) -> bool {
        let node = self.project().and_then(|p| p.node(id));
        matches!(node.map(|n| &n.kind), Some(NodeKind::Agent { agent: AgentKind::External, .. }))
    }

    pub(crate) fn node_badge(&self, id: &NodeId) -> Option<Badge> {
        let t = self.terminals.map.get(id);
        if let Some(activity) = self.agent_activity(id).filter(|_| t.is_none_or(|t| t.agent.is_some())) {
            return Some(agent_badge(&activity, SystemTime::now()));
        }
        let t = t?;
        terminal_badge(t.exited.as_ref(), t.bell)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{AgentKind, NodeKind};
    use crate::runtime::test_context::TestContext;
    use canvas_render::NodeContent;

    #[test]
    fn an_external_agents_node_says_how_it_is_reached_and_other_unstarted_nodes_stay_empty() {
        let mut ctx = TestContext::new();
        let cwd = ctx.folder();
        let external = ctx.add(
            NodeKind::Agent { agent: AgentKind::External, cwd, worktree: None },
            "ci-bot",
            (0.0, 0.0, 400.0, 300.0),
        );
        match ctx.rt.terminal_content(&external) {
            NodeContent::Text(t) => {
                assert!(t.contains(&format!("termsprawl-ctl --node {external} call canvas_list")), "{t}");
            }
            other => panic!("{other:?}"),
        }
        let sticky = ctx.add(NodeKind::Sticky { text: "x".into() }, "note", (500.0, 0.0, 200.0, 200.0));
        assert!(matches!(ctx.rt.terminal_content(&sticky), NodeContent::Empty));
    }

    #[test]
    fn many_terminals_of_a_project_start_off_the_main_thread_each_once_and_a_closed_one_is_put_away() {
        let mut ctx = TestContext::with_terminals();
        let cwd = ctx.folder();
        let terminal = || NodeKind::Terminal { cwd: cwd.clone(), command: None, tmux_session: None };
        let ids: Vec<_> =
            (0..6).map(|i| ctx.add(terminal(), &format!("t{i}"), (i as f64 * 500.0, 0.0, 400.0, 300.0))).collect();
        assert!(ids.iter().all(|id| ctx.rt.terminals.map.contains_key(id)), "one at a time: started at once");
        // Away to another project and back: all six start in one pass, on a worker thread.
        let first = ctx.folder();
        let other = ctx.root().join("other");
        ctx.rt.open_project(&other);
        assert!(ctx.rt.terminals.map.is_empty(), "put away with their project");
        let before = ctx.spawner.specs().len();
        ctx.rt.open_project(&first);
        assert_eq!(ctx.rt.terminals.starting.len(), 6, "starting, not yet live");
        // One closes before its terminal arrives: it is put away when it does.
        ctx.rt.apply(crate::model::Command::RemoveNodes { ids: vec![ids[0].clone()] }).unwrap();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ctx.rt.terminals.starting.is_empty() && std::time::Instant::now() < end {
            ctx.rt.tick();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(ctx.rt.terminals.starting.is_empty(), "the worker's terminals never arrived");
        assert!(!ctx.rt.terminals.map.contains_key(&ids[0]), "the closed node's terminal stayed");
        assert!(ids[1..].iter().all(|id| ctx.rt.terminals.map.contains_key(id)));
        assert_eq!(ctx.spawner.specs().len() - before, 6, "each started once");
    }
}
