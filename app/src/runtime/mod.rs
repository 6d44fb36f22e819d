//! The live app on the main thread: the workspace model, the browser engine,
//! the renderer and everything that turns model changes into live state.
//!
//! [`Runtime`] is only touched on the main thread. Other threads (tool server,
//! CDP facade, PTY readers) reach it through an [`AppHandle`]. The window loop
//! and the headless loop both drive the same `Runtime` through
//! [`Runtime::tick`]; they differ only in how they wait and present frames.
//! The browser engine is reached only through [`engine::BrowserEngine`], so
//! tests run the runtime with a fake engine (`test_context`).

pub mod agent_catalog;
pub mod agent_nodes;
pub mod agent_settings;
pub mod attention;
pub mod browser_contexts;
mod browser_events;
pub mod browsers;
pub mod downloads;
pub mod engine;
pub mod facade;
mod facade_channel;
mod focus;
mod gfx;
pub mod handle;
pub mod headless;
pub mod on_screen;
pub mod page_commands;
pub mod page_menus;
pub mod page_nav;
pub mod page_tabs;
pub mod scene;
pub mod services;
pub mod stop_signals;
pub mod terminals;
#[cfg(test)]
mod test_context;
pub mod tools;
mod view;

pub use handle::{AppError, Waker};

/// The app's handle to the main thread: jobs run on the [`Runtime`].
pub type AppHandle = handle::MainHandle<Runtime>;
/// Work for the main thread.
pub type Job = handle::Job<Runtime>;
/// The launch hook: sees, changes, postpones or refuses every terminal/agent
/// PTY before it starts (the tool runtime's, see `tools/launch.rs`).
pub type LaunchHook = Arc<dyn Fn(&mut Runtime, &mut terminals::PtyLaunch) -> terminals::LaunchDecision + Send + Sync>;

use crate::model::{
    self, placement, Applied, Autosaver, Command, DebouncePolicy, ModelError, Node, NodeId, NodeKind, Point, Project,
    ProjectId, Rect, Selection, Workspace,
};
use browsers::BrowserNodes;
use cef_bridge::{BrowserEvent, EngineHost};
use crossbeam_channel::{Receiver, Sender};
use engine::BrowserEngine;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Deadline for a cross-thread call into the main thread: how long an agent's
/// operation waits for the canvas to acknowledge it before it is told the app
/// is busy (and the change is never applied later).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Forwards CEF's callbacks into the main loop.
pub struct LoopHost {
    events: Sender<BrowserEvent>,
    waker: Arc<Waker>,
}

impl LoopHost {
    /// A host feeding `events` and waking `waker`.
    pub fn new(events: Sender<BrowserEvent>, waker: Arc<Waker>) -> Arc<Self> {
        Arc::new(Self { events, waker })
    }
}

impl EngineHost for LoopHost {
    fn schedule_pump(&self, delay: Duration) {
        // The loop waits at most MAX_PUMP_INTERVAL anyway; only wake early for urgent work.
        if delay < cef_bridge::MAX_PUMP_INTERVAL {
            self.waker.wake();
        }
    }
    fn browser_event(&self, event: BrowserEvent) {
        let _ = self.events.send(event);
    }
}

/// The view size assumed while no window reports one (headless): what
/// centring a node on the canvas aims at.
pub const HEADLESS_VIEWPORT: (f64, f64) = (1280.0, 800.0);

/// Start-up choices that the runtime keeps.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// The data directory.
    pub data_dir: PathBuf,
    /// A project folder to open (and activate) at start.
    pub project: Option<PathBuf>,
    /// Whether agents may drive browsers ("Enable agent browser control").
    pub browser_control: bool,
    /// Whether browser views follow the camera zoom (window) or keep their own size (headless).
    pub views_follow_zoom: bool,
}

/// A message for the person at the app (a toast in the window, a log line headless).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Text.
    pub text: String,
    /// True for problems.
    pub warning: bool,
}

/// What a canvas gesture reads and changes at once (see [`Runtime::canvas_parts`]).
pub struct CanvasParts<'a> {
    /// The active project.
    pub project: Option<&'a Project>,
    /// The focused node.
    pub focus: Option<&'a NodeId>,
    /// The selection.
    pub selection: &'a mut Selection,
}

/// The main-thread state of the app.
pub struct Runtime {
    /// The workspace model (every mutation goes through [`Runtime::apply`]).
    workspace: Workspace,
    /// Selected nodes of the active project.
    selection: Selection,
    /// The node with keyboard focus (None: the canvas).
    focus: Option<NodeId>,
    /// Live browsers of browser nodes.
    browsers: BrowserNodes,
    /// Live terminals of terminal and agent nodes.
    terminals: terminals::TerminalNodes,
    /// Downloads of browser nodes (their strips, and who else hears of them).
    downloads: downloads::Downloads,
    /// Text for the system clipboard (a terminal program's OSC 52, a page menu's
    /// copied address), not yet handed to it.
    clipboard: Option<String>,
    /// Messages not yet shown.
    notices: Vec<Notice>,
    /// GPU and renderer (the window's, or an off-screen one made on demand).
    gfx: Option<gfx::Gfx>,
    /// The view's size in logical pixels: the window's, or [`HEADLESS_VIEWPORT`] without one.
    viewport: (f64, f64),
    /// Window pixels per logical pixel (a HiDPI screen's scale; 1 headless):
    /// browser views paint at the zoom times this.
    ui_scale: f64,
    /// The agent tool runtime's main-thread state (sessions, ownership, agent launches).
    tools: tools::ToolLink,
    /// Who needs the person (tab counts, Ctrl+J, desktop notifications).
    attention: attention::AttentionState,
    config: RuntimeConfig,
    engine: Box<dyn BrowserEngine>,
    handle: AppHandle,
    jobs: Receiver<Job>,
    events: Receiver<BrowserEvent>,
    autosaver: Option<Autosaver>,
    /// Changes not yet encoded for autosave (encoded when the debounce fires).
    unsaved: model::autosave::Unsaved,
    home: Option<PathBuf>,
    redraw: bool,
    /// What the window shows and when pages were last paced.
    pacing: on_screen::Pacing,
    /// What prepares every terminal/agent PTY before it starts.
    launch_hook: Option<LaunchHook>,
    quit: bool,
    last_pump: Instant,
}

impl Runtime {
    /// Builds the runtime around a started engine (cef-bridge's, or a test's
    /// fake) and restores the last workspace.
    pub fn new(
        config: RuntimeConfig,
        engine: Box<dyn BrowserEngine>,
        handle: AppHandle,
        jobs: Receiver<Job>,
        events: Receiver<BrowserEvent>,
    ) -> Runtime {
        let home = model::persist::home_dir();
        let mut notices = Vec::new();
        let workspace = match model::persist::load_workspace(&config.data_dir, home.as_deref()) {
            Ok(loaded) => {
                for r in loaded.recoveries {
                    notices.push(Notice {
                        text: format!("{} (kept as {})", r.message, r.kept_as.display()),
                        warning: true,
                    });
                }
                for f in loaded.failed {
                    notices.push(Notice {
                        text: format!("project {} not opened: {}", f.folder.display(), f.error),
                        warning: true,
                    });
                }
                for r in loaded.repairs {
                    notices.push(Notice { text: r, warning: false });
                }
                loaded.workspace
            }
            Err(e) => {
                notices.push(Notice { text: format!("workspace not restored: {e}"), warning: true });
                Workspace::new()
            }
        };
        let autosaver = match Autosaver::spawn(DebouncePolicy::default()) {
            Ok(a) => Some(a),
            Err(e) => {
                notices.push(Notice { text: format!("autosave unavailable: {e}"), warning: true });
                None
            }
        };
        let (attention, mutes_error) = attention::AttentionState::load(&config.data_dir);
        if let Some(e) = mutes_error {
            notices.push(Notice { text: format!("notification mutes not restored: {e}"), warning: true });
        }
        let mut rt = Runtime {
            workspace,
            selection: Selection::new(),
            focus: None,
            browsers: BrowserNodes::default(),
            terminals: terminals::TerminalNodes::default(),
            downloads: downloads::Downloads::default(),
            clipboard: None,
            notices,
            gfx: None,
            viewport: HEADLESS_VIEWPORT,
            ui_scale: 1.0,
            tools: tools::ToolLink::new(config.browser_control),
            attention,
            config,
            engine,
            handle,
            jobs,
            events,
            autosaver,
            unsaved: model::autosave::Unsaved::default(),
            home,
            redraw: true,
            pacing: on_screen::Pacing::default(),
            launch_hook: None,
            quit: false,
            last_pump: Instant::now(),
        };
        // agent_status reads the agents' activity where the terminals publish it.
        rt.terminals.use_activity_board(rt.tools.shared.activity.clone());
        // Agent PTYs wait for the tool server (services::start_services) so they
        // start with credentials. Installed before any project opens: opening
        // one starts its terminals.
        rt.install_tool_launch_hook();
        let wanted = rt.config.project.clone();
        match wanted {
            Some(folder) => rt.open_project(&folder),
            None if rt.workspace.active().is_none() => {
                let folder = rt.config.data_dir.join("projects").join("default");
                rt.open_project(&folder);
            }
            None => {}
        }
        for n in &rt.notices {
            if n.warning {
                tracing::warn!("{}", n.text);
            } else {
                tracing::info!("{}", n.text);
            }
        }
        rt.sync_browsers();
        rt.sync_terminals();
        rt
    }

    /// Opens (or activates) the project in `folder`, creating the folder when needed.
    pub fn open_project(&mut self, folder: &Path) {
        let folder = model::persist::normalise(folder);
        if let Some(p) = self.workspace.projects().iter().find(|p| p.folder() == folder.as_path()) {
            let id = p.id().clone();
            self.apply_logged(Command::ActivateProject { id });
            return;
        }
        if let Err(e) = std::fs::create_dir_all(&folder) {
            self.notify(format!("cannot create project folder {}: {e}", folder.display()), true);
            return;
        }
        let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "project".into());
        let loaded = model::persist::load_project(
            ProjectId::generate(),
            &name,
            &folder,
            model::Camera::default(),
            self.home.as_deref(),
        );
        match loaded {
            Ok(l) => {
                if let Some(r) = l.recovery {
                    self.notify(format!("{} (kept as {})", r.message, r.kept_as.display()), true);
                }
                self.apply_logged(Command::AddProject { project: Box::new(l.project), activate: true });
            }
            Err(e) => self.notify(format!("project {} not opened: {e}", folder.display()), true),
        }
    }

    /// The workspace model (read only: every change goes through [`Runtime::apply`]).
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Ends the current gesture in every project: the next command starts a new undo step.
    pub fn end_coalescing(&mut self) {
        self.workspace.end_coalescing();
    }

    /// Selected nodes of the active project.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// The selection, to change (the window's gestures and the palette do).
    pub fn selection_mut(&mut self) -> &mut Selection {
        &mut self.selection
    }

    /// Drops from the selection the nodes no longer on the active canvas.
    pub fn prune_selection(&mut self) {
        if let Some(p) = self.workspace.active() {
            self.selection.retain_existing(p);
        }
    }

    /// What a canvas gesture reads and changes at once: the active project,
    /// the focused node and the selection.
    pub fn canvas_parts(&mut self) -> CanvasParts<'_> {
        CanvasParts { project: self.workspace.active(), focus: self.focus.as_ref(), selection: &mut self.selection }
    }

    /// The node with keyboard focus (`None`: the canvas).
    pub fn focus(&self) -> Option<&NodeId> {
        self.focus.as_ref()
    }

    /// Live browsers of browser nodes.
    pub fn browsers(&self) -> &BrowserNodes {
        &self.browsers
    }

    /// Live terminals of terminal and agent nodes.
    pub fn terminals(&self) -> &terminals::TerminalNodes {
        &self.terminals
    }

    /// Downloads of browser nodes (their strips).
    pub fn downloads(&self) -> &downloads::Downloads {
        &self.downloads
    }

    /// Puts a finished download of `node` away; true when there was one.
    pub fn dismiss_download(&mut self, node: &NodeId, guid: &str) -> bool {
        self.downloads.dismiss(node, guid)
    }

    /// Text for the system clipboard not yet handed to it, once.
    pub fn take_clipboard(&mut self) -> Option<String> {
        self.clipboard.take()
    }

    /// Messages for the person not yet shown.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// The messages not yet shown, once.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    /// The GPU and renderer the canvas is drawn with, if there is one.
    pub fn gfx(&self) -> Option<&gfx::Gfx> {
        self.gfx.as_ref()
    }

    /// Gives the runtime a GPU and renderer (the window's, or an off-screen one).
    pub fn set_gfx(&mut self, gfx: Option<gfx::Gfx>) {
        self.gfx = gfx;
    }

    /// Takes the GPU and renderer out (to draw with while the runtime is used).
    pub fn take_gfx(&mut self) -> Option<gfx::Gfx> {
        self.gfx.take()
    }

    /// The view's size in logical pixels.
    pub fn viewport(&self) -> (f64, f64) {
        self.viewport
    }

    /// The window's size in logical pixels changed.
    pub fn set_viewport(&mut self, viewport: (f64, f64)) {
        self.viewport = viewport;
    }

    /// Window pixels per logical pixel changed (browser views paint at the zoom times this).
    pub fn set_ui_scale(&mut self, scale: f64) {
        self.ui_scale = scale;
    }

    /// The agent tool runtime's main-thread state.
    pub fn tools(&self) -> &tools::ToolLink {
        &self.tools
    }

    /// The two selected nodes, when exactly two are selected (what Link acts on).
    pub fn selection_pair(&self) -> Option<(model::NodeId, model::NodeId)> {
        match self.selection.to_vec().as_slice() {
            [a, b] => Some((a.clone(), b.clone())),
            _ => None,
        }
    }

    fn apply_logged(&mut self, cmd: Command) {
        if let Err(e) = self.apply(cmd) {
            self.notify(e.to_string(), true);
        }
    }

    /// Records a message for the person at the app.
    pub fn notify(&mut self, text: String, warning: bool) {
        if warning {
            tracing::warn!("{text}");
        } else {
            tracing::info!("{text}");
        }
        self.notices.push(Notice { text, warning });
        self.redraw = true;
    }

    /// Where the engine saves downloads.
    pub fn download_policy(&self) -> cef_bridge::DownloadPolicy {
        self.engine.download_policy()
    }

    /// The app's handle for other threads.
    pub fn handle(&self) -> AppHandle {
        self.handle.clone()
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Whether agents may drive browsers.
    pub fn browser_control(&self) -> bool {
        self.tools.shared.browser_control()
    }

    /// The active project.
    pub fn project(&self) -> Option<&Project> {
        self.workspace.active()
    }

    /// The active project's id.
    pub fn project_id(&self) -> Option<ProjectId> {
        self.workspace.active_id().cloned()
    }

    /// Applies one model command, then brings live state (browsers, autosave) in line.
    pub fn apply(&mut self, cmd: Command) -> Result<Applied, ModelError> {
        self.apply_within(None, cmd)
    }

    /// [`Self::apply`], with canvas commands acting on `project` rather than
    /// the active one (a project tab the person has left).
    pub fn apply_in(&mut self, project: &ProjectId, cmd: Command) -> Result<Applied, ModelError> {
        self.apply_within(Some(project), cmd)
    }

    fn apply_within(&mut self, project: Option<&ProjectId>, cmd: Command) -> Result<Applied, ModelError> {
        let workspace_change = cmd.scope() == model::CommandScope::Workspace;
        if workspace_change {
            // What changed before is encoded from the model as it was (a
            // project about to close still has its layout to save).
            self.save_unsaved();
        }
        let applied = match project {
            Some(p) => self.workspace.apply_in(p, cmd)?,
            None => self.workspace.apply(cmd)?,
        };
        for id in &applied.removed {
            if self.focus.as_ref() == Some(id) {
                self.focus = None;
            }
        }
        self.after_change();
        // Project ids are identities (agent sessions are bound to them): a
        // project must not get a new id because the app died within the
        // debounce after opening it. These changes are rare; write them now.
        if workspace_change {
            self.flush_saves();
        }
        Ok(applied)
    }

    /// Undoes the last change of the active project.
    pub fn undo(&mut self) -> Result<bool, ModelError> {
        let r = self.workspace.undo()?.is_some();
        self.after_change();
        Ok(r)
    }

    /// Redoes the last undone change of the active project.
    pub fn redo(&mut self) -> Result<bool, ModelError> {
        let r = self.workspace.redo()?.is_some();
        self.after_change();
        Ok(r)
    }

    fn after_change(&mut self) {
        self.redraw = true;
        self.schedule_save();
        self.sync_browsers();
        self.publish_tool_state();
        self.sync_terminals();
        self.refresh_attention();
    }

    /// Republishes the node index for the tool server's thread and revokes the
    /// sessions (and browser ownerships) of agent nodes that left their canvas.
    pub(crate) fn publish_tool_state(&mut self) {
        let gone = self.tools.publish(&self.workspace);
        for node in gone {
            self.revoke_agent(&node);
        }
        self.tools.forget_gone_browsers();
    }

    /// Revokes an agent node's session and releases the browsers it owned.
    pub fn revoke_agent(&mut self, node: &NodeId) {
        self.tools.revoke(node);
    }

    /// Marks the active project's layout and the workspace unsaved; they are
    /// encoded once the debounce fires ([`Runtime::tick`]) or on a flush, not
    /// on every change (a drag changes the layout on every move).
    fn schedule_save(&mut self) {
        let Some(saver) = &self.autosaver else { return };
        self.unsaved.mark(self.workspace.active_id(), Instant::now());
        let failed: Vec<String> =
            saver.take_failures().into_iter().map(|f| format!("{}: {}", f.path.display(), f.error)).collect();
        for f in failed {
            self.notify(format!("autosave failed: {f}"), true);
        }
    }

    /// Encodes and hands over the unsaved changes once their debounce is due.
    fn save_if_due(&mut self) {
        let Some(saver) = &self.autosaver else { return };
        if let Some(what) = self.unsaved.take_due(Instant::now(), &saver.policy()) {
            self.encode_unsaved(&what);
        }
    }

    /// Encodes and hands over every unsaved change now, due or not.
    fn save_unsaved(&mut self) {
        if self.autosaver.is_none() || self.unsaved.is_empty() {
            return;
        }
        let what = self.unsaved.take();
        self.encode_unsaved(&what);
    }

    fn encode_unsaved(&mut self, what: &model::autosave::ToEncode) {
        let Some(saver) = &self.autosaver else { return };
        let errors = saver.submit_encoded(what, &self.config.data_dir, &self.workspace, self.home.as_deref());
        for e in errors {
            self.notify(format!("autosave failed: {e}"), true);
        }
    }

    /// Writes every pending save now (at exit, and after workspace changes).
    pub fn flush_saves(&mut self) {
        self.save_unsaved();
        if let Some(saver) = &self.autosaver {
            match saver.flush() {
                Ok(failures) => {
                    for f in failures {
                        tracing::warn!("save of {} failed: {}", f.path.display(), f.error);
                    }
                }
                Err(e) => tracing::warn!("save flush failed: {e}"),
            }
        }
    }

    /// Adds a node at `at` (its top-left corner, as given), or with none at
    /// the free spot nearest the centre of the view, and returns its id.
    pub fn add_node(
        &mut self,
        kind: NodeKind,
        title: &str,
        size: (f64, f64),
        at: Option<(f64, f64)>,
    ) -> Result<NodeId, ModelError> {
        let (x, y) = at.unwrap_or_else(|| self.free_spot(size, None));
        let node = Node::new(kind, title, Rect { x, y, w: size.0, h: size.1 });
        let id = node.id.clone();
        self.apply(Command::AddNode { node })?;
        Ok(id)
    }

    /// Where a new `size` node goes: the free spot (see [`placement::free_spot`])
    /// nearest `near` (a world point the node's top-left wants to be at), or
    /// with none, nearest a node centred in the view.
    pub fn free_spot(&self, size: (f64, f64), near: Option<Point>) -> (f64, f64) {
        let Some(p) = self.project() else { return near.map_or((0.0, 0.0), |n| (n.x, n.y)) };
        let wanted = near.unwrap_or_else(|| {
            let cam = p.camera();
            let zoom = if cam.zoom > 0.0 { cam.zoom } else { 1.0 };
            let centre = Point::new(cam.x + self.viewport.0 / 2.0 / zoom, cam.y + self.viewport.1 / 2.0 / zoom);
            Point::new(centre.x - size.0 / 2.0, centre.y - size.1 / 2.0)
        });
        let taken: Vec<Rect> = p.nodes().map(|n| n.rect).collect();
        let spot = placement::free_spot(&taken, size, wanted);
        (spot.x, spot.y)
    }

    /// Opens a visible browser node at `url` (normalised by the URL policy).
    pub fn open_browser(&mut self, url: &str, size: Option<(f64, f64)>) -> Result<NodeId, String> {
        self.open_browser_in(url, size, None)
    }

    /// Asks the loop to stop.
    pub fn request_quit(&mut self) {
        self.quit = true;
    }

    /// True once a quit was requested.
    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// True when the canvas changed since the last [`Runtime::take_redraw`].
    pub fn take_redraw(&mut self) -> bool {
        std::mem::take(&mut self.redraw)
    }

    /// Marks the canvas as needing a new frame.
    pub fn request_redraw(&mut self) {
        self.redraw = true;
    }

    /// When the loop must run next at the latest.
    pub fn next_deadline(&self) -> Instant {
        let pump = self.engine.next_pump_deadline();
        let save = self.autosaver.as_ref().and_then(|saver| self.unsaved.due_at(&saver.policy()));
        save.map_or(pump, |due| pump.min(due))
    }

    /// One turn of the loop: CEF work, queued jobs, browser events, autosave.
    pub fn tick(&mut self) {
        if Instant::now() >= self.engine.next_pump_deadline() || self.last_pump.elapsed() >= self.engine.pump_interval()
        {
            self.engine.pump();
            self.last_pump = Instant::now();
        }
        // Jobs may enqueue more jobs; bound the turn so input stays responsive.
        for _ in 0..256 {
            match self.jobs.try_recv() {
                Ok(job) => job(self),
                Err(_) => break,
            }
        }
        while let Ok(ev) = self.events.try_recv() {
            self.on_browser_event(ev);
        }
        self.pace_pages_if_due();
        self.save_if_due();
    }

    /// Pumps until `done(self)` or `timeout` (for one-shot modes and tests).
    pub fn run_until(&mut self, waker: &Waker, timeout: Duration, mut done: impl FnMut(&mut Runtime) -> bool) -> bool {
        let end = Instant::now() + timeout;
        loop {
            self.tick();
            if done(self) {
                return true;
            }
            if Instant::now() >= end || self.quit {
                return false;
            }
            waker.wait_until(self.next_deadline().min(end));
        }
    }

    /// Closes every browser, flushes saves and shuts the engine down.
    pub fn shutdown(mut self) {
        self.flush_saves();
        // Terminal sessions outlive the app: snapshot and detach, never end them.
        self.detach_terminals();
        self.browsers.close_all();
        let Runtime { engine, .. } = self;
        engine.shutdown();
    }
}
