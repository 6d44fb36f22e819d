//! Terminal and agent nodes ↔ live PTY sessions.
//!
//! One `terminal::Terminal` per terminal/agent node of the active project,
//! spawned in the node's working directory with the node's identity in its
//! environment, sized from the node and the renderer's cell metrics (never
//! from the zoom), and drawn through the renderer's cell grid.
//!
//! Sessions outlive the app: with tmux ≥ 3.2 every node runs inside a tmux
//! session on a private socket under the data dir (name from
//! [`session_name`]), so a restart re-attaches with scrollback intact;
//! without tmux a capped ANSI snapshot of the grid is saved at exit (and
//! every [`SNAPSHOT_EVERY`]) under `<data>/terminals/` and replayed on
//! restore under the "session restored" marker. The snapshot is written in
//! tmux mode too: it is the app's own last view of the node (what the grid
//! showed), readable after a reboot took the tmux server away. Closing a node
//! ends its session (tmux session killed, snapshot deleted); closing the app,
//! or its project, only detaches.
//!
//! Agent nodes launch their CLI once, resolved through the terminal crate's
//! registry (and `agent-tools/preferences.json` for `custom`) and probed on
//! PATH first; a missing executable or malformed preferences leave the node
//! un-launched with a *needs setup* badge and a notice. The tool runtime
//! prepares each launch (credentials, first instruction) through
//! [`Runtime::set_pty_launch_hook`].

use super::{AppHandle, Runtime};
use crate::model::{AgentKind, Command, NodeId, NodeKind, ProjectId};
use canvas_render::{Badge, CellView, Color, CursorShape as RCursor, NodeContent, TerminalGridView};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use terminal::agents::{self, AgentError, AgentSpec, AgentStatus, Preferences};
use terminal::persist;
use terminal::tmux::{Tmux, TmuxSession};
use terminal::{
    CellFlags, CommandSpec, CursorShape, ExitStatus, GridSnapshot, Persistence, TermSize, Terminal, TerminalConfig,
    TerminalHost,
};

/// Cell size assumed before a renderer exists (DejaVu/Hack at 14 px).
const FALLBACK_CELL: (f32, f32) = (8.0, 17.0);

/// How often the main thread re-checks agent statuses (a quiet agent turns
/// "waiting for input" without producing any event of its own).
const TICK_EVERY: Duration = Duration::from_secs(1);

/// How often changed terminals are snapshotted to disk (besides at exit), so
/// a crash or SIGKILL loses at most this much.
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(5);

/// Quiet time after output before an agent counts as waiting for input.
pub const AGENT_IDLE_AFTER: Duration = Duration::from_secs(3);

/// The data-dir folder holding terminal snapshots.
pub const SNAPSHOT_DIR: &str = "terminals";

/// A live terminal of a node.
pub struct LiveTerminal {
    /// The PTY session.
    pub term: Terminal,
    /// Exit status once the child ended.
    pub exited: Option<ExitStatus>,
    /// A bell rang since the node was last focused.
    pub bell: bool,
    /// The project the node belongs to (tells a closed node from a closed project).
    pub project: ProjectId,
    /// The session name (tmux session and snapshot file stem).
    pub session: String,
    /// The agent it runs (agent nodes only).
    pub agent: Option<AgentKind>,
    /// Whether it re-attached to a tmux session that was already running.
    pub warm: bool,
    saved_generation: Option<u64>,
    shown_status: Option<AgentStatus>,
}

/// Why an agent node was not launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotLaunched {
    /// The agent's executable is not on PATH.
    NeedsSetup {
        /// The command that was looked for.
        looked_for: String,
    },
    /// preferences.json is malformed, or names no custom agent.
    Misconfigured(String),
    /// The launch hook refused it.
    Refused(String),
}

impl NotLaunched {
    /// The line shown in the node's body.
    pub fn message(&self) -> String {
        match self {
            Self::NeedsSetup { looked_for } => {
                format!("needs setup: `{looked_for}` was not found on PATH; install it, then reopen this node")
            }
            Self::Misconfigured(why) | Self::Refused(why) => format!("not launched: {why}"),
        }
    }
}

/// What an agent node shows in its status badge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentNodeStatus {
    /// Producing output, or just started.
    Running,
    /// Quiet for [`AGENT_IDLE_AFTER`] after output.
    WaitingForInput,
    /// The process ended.
    Exited(ExitStatus),
    /// Not launched (see the reason).
    NotLaunched(NotLaunched),
    /// Launch postponed by the launch hook (e.g. the tool server is starting).
    Pending,
}

/// One PTY about to start; the launch hook may change it.
#[derive(Debug, Clone)]
pub struct PtyLaunch {
    /// The node.
    pub node: NodeId,
    /// Its project.
    pub project: ProjectId,
    /// The project folder.
    pub project_folder: PathBuf,
    /// The agent (agent nodes only).
    pub agent: Option<AgentKind>,
    /// The resolved agent executable (agent nodes only; probed on PATH).
    pub agent_executable: Option<PathBuf>,
    /// What runs (`None`: the user's shell).
    pub command: Option<CommandSpec>,
    /// Environment added for the child (identity and data dir already in).
    pub env: Vec<(String, String)>,
    /// True when a tmux session of this node is already running: the program
    /// in it started earlier, so command and environment changes do not reach it.
    pub warm: bool,
}

/// What the launch hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchDecision {
    /// Start the PTY as (possibly) modified.
    Launch,
    /// Not now; the next sync asks again.
    Defer,
    /// Do not start; the node shows this reason.
    Refuse(String),
}

/// The launch hook: sees every terminal/agent PTY before it starts.
pub type LaunchHook = Arc<dyn Fn(&mut Runtime, &mut PtyLaunch) -> LaunchDecision + Send + Sync>;

/// Live terminals of the active project.
#[derive(Default)]
pub struct TerminalNodes {
    map: HashMap<NodeId, LiveTerminal>,
    not_launched: HashMap<NodeId, NotLaunched>,
    deferred: HashSet<NodeId>,
    tmux: Option<Option<Tmux>>,
    hook: Option<LaunchHook>,
    ticker: bool,
    last_snapshot: Option<Instant>,
    worker: Option<mpsc::Sender<SessionJob>>,
    ending: HashSet<String>,
}

impl TerminalNodes {
    /// The live terminal of a node.
    pub fn get(&self, id: &NodeId) -> Option<&LiveTerminal> {
        self.map.get(id)
    }

    /// Every live terminal.
    pub fn iter(&self) -> impl Iterator<Item = (&NodeId, &LiveTerminal)> {
        self.map.iter()
    }

    /// Why an agent node did not start, if it did not.
    pub fn not_launched(&self, id: &NodeId) -> Option<&NotLaunched> {
        self.not_launched.get(id)
    }
}

/// Routes a terminal's callbacks to the main thread.
struct NodeHost {
    node: NodeId,
    app: AppHandle,
}

impl TerminalHost for NodeHost {
    fn wakeup(&self) {
        let _ = self.app.post(|rt| rt.request_redraw());
    }
    fn title_changed(&self, title: Option<String>) {
        let Some(title) = title.filter(|t| !t.trim().is_empty()) else { return };
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Err(e) = rt.workspace.apply(Command::SetTitle { id, title }) {
                tracing::debug!(error = %e, "terminal title not recorded");
            }
            rt.request_redraw();
        });
    }
    fn bell(&self) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if rt.focus.as_ref() != Some(&id) {
                if let Some(t) = rt.terminals.map.get_mut(&id) {
                    t.bell = true;
                }
                rt.request_redraw();
            }
        });
    }
    fn clipboard_store(&self, text: String) {
        let _ = self.app.post(move |rt| rt.clipboard = Some(text));
    }
    fn exited(&self, status: ExitStatus) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Some(t) = rt.terminals.map.get_mut(&id) {
                t.exited = Some(status);
            }
            rt.request_redraw();
        });
    }
}

fn clamp16(v: usize) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

fn rgb(c: terminal::Rgb) -> [u8; 3] {
    [c.r, c.g, c.b]
}

/// Converts a terminal snapshot into the renderer's cell grid.
pub fn grid_view(s: &GridSnapshot, focused: bool) -> TerminalGridView {
    let cells = s
        .cells
        .iter()
        .map(|c| CellView {
            ch: c.ch,
            fg: rgb(c.fg),
            bg: rgb(c.bg),
            bold: c.flags.contains(CellFlags::BOLD),
            italic: c.flags.contains(CellFlags::ITALIC),
            underline: c.flags.intersects(
                CellFlags::UNDERLINE
                    | CellFlags::DOUBLE_UNDERLINE
                    | CellFlags::UNDERCURL
                    | CellFlags::DOTTED_UNDERLINE
                    | CellFlags::DASHED_UNDERLINE,
            ),
            strikethrough: c.flags.contains(CellFlags::STRIKETHROUGH),
            dim: c.flags.contains(CellFlags::DIM),
            wide: c.flags.contains(CellFlags::WIDE),
            wide_spacer: c.flags.contains(CellFlags::WIDE_SPACER),
        })
        .collect();
    let shape = match s.cursor.shape {
        CursorShape::Hidden => None,
        _ if !focused => Some(RCursor::HollowBlock),
        CursorShape::Block => Some(RCursor::Block),
        CursorShape::HollowBlock => Some(RCursor::HollowBlock),
        CursorShape::Underline => Some(RCursor::Underline),
        CursorShape::Beam => Some(RCursor::Beam),
    };
    let mut selection = vec![];
    if let Some(sel) = &s.selection {
        let (start, end) = (sel.start, sel.end);
        for row in start.0..=end.0.min(s.rows.saturating_sub(1)) {
            let c0 = if row == start.0 || sel.block { start.1 } else { 0 };
            let c1 = if row == end.0 || sel.block { end.1 + 1 } else { s.cols };
            selection.push((clamp16(row), clamp16(c0), clamp16(c1.min(s.cols))));
        }
    }
    TerminalGridView {
        cols: clamp16(s.cols),
        rows: clamp16(s.rows),
        cells,
        cursor: shape.map(|sh| (clamp16(s.cursor.row), clamp16(s.cursor.col), sh)),
        selection,
    }
}

/// 64-bit FNV-1a: stable across runs and builds (unlike std's hasher).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter().chain(&[0u8]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The session name of a node: its tmux session and snapshot file stem.
/// Deterministic from the project folder and node id (so a restart finds the
/// same session), within tmux's `[A-Za-z0-9_-]{1,64}`; the folder is mixed in
/// because node ids are only unique within a project.
pub fn session_name(project_folder: &Path, node: &NodeId) -> String {
    let id: String =
        node.as_str().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(40).collect();
    let hash = fnv1a(&[project_folder.as_os_str().as_encoded_bytes(), node.as_str().as_bytes()]);
    format!("ts-{id}-{hash:016x}")
}

/// Whether `s` is a usable tmux session name (`[A-Za-z0-9_-]{1,64}`).
pub fn valid_session_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Where the snapshot of session `name` lives.
pub fn snapshot_path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(SNAPSHOT_DIR).join(format!("{name}.ansi"))
}

/// Ends a node's session for good: kills its tmux session (when tmux is
/// used) and deletes its snapshot. Returns whether anything existed.
pub fn end_session(data_dir: &Path, tmux: Option<&Tmux>, name: &str) -> Result<bool, String> {
    let mut existed = false;
    if let Some(tmux) = tmux {
        existed |= terminal::tmux::kill_session(tmux, data_dir, name).map_err(|e| e.to_string())?;
    }
    match std::fs::remove_file(snapshot_path(data_dir, name)) {
        Ok(()) => existed = true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot delete terminal snapshot: {e}")),
    }
    Ok(existed)
}

/// Saves the grid of `term` as session `name`'s snapshot.
pub fn save_terminal_snapshot(data_dir: &Path, name: &str, term: &Terminal) -> Result<(), String> {
    write_snapshot(data_dir, name, &term.with_screen(|s| s.ansi_snapshot(persist::MAX_SNAPSHOT_BYTES)))
}

fn write_snapshot(data_dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let dir = data_dir.join(SNAPSHOT_DIR);
    create_private_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    persist::save_snapshot(&snapshot_path(data_dir, name), bytes).map_err(|e| e.to_string())
}

/// Work on session files, done off the main thread (fsync, tmux processes)
/// and in order, so a node's late snapshot can never recreate the file its
/// closing just deleted.
enum SessionJob {
    Save { data: PathBuf, name: String, bytes: Vec<u8> },
    End { data: PathBuf, tmux: Option<Tmux>, name: String },
    Flush(mpsc::Sender<()>),
}

fn run_session_job(job: SessionJob) {
    match job {
        SessionJob::Save { data, name, bytes } => {
            if let Err(e) = write_snapshot(&data, &name, &bytes) {
                tracing::warn!(session = %name, "terminal snapshot not saved: {e}");
            }
        }
        SessionJob::End { data, tmux, name } => match end_session(&data, tmux.as_ref(), &name) {
            Ok(existed) => tracing::debug!(session = %name, existed, "terminal session ended"),
            Err(e) => tracing::warn!(session = %name, "terminal session not ended: {e}"),
        },
        SessionJob::Flush(done) => {
            let _ = done.send(());
        }
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// The terminal crate's agent for a model agent kind (`None`: runs outside the app).
pub fn registry_kind(kind: AgentKind) -> Option<agents::AgentKind> {
    Some(match kind {
        AgentKind::Claude => agents::AgentKind::Claude,
        AgentKind::Codex => agents::AgentKind::Codex,
        AgentKind::Gemini => agents::AgentKind::Gemini,
        AgentKind::Grok => agents::AgentKind::Grok,
        AgentKind::Openclaude => agents::AgentKind::OpenClaude,
        AgentKind::Custom => agents::AgentKind::Custom,
        AgentKind::External => return None,
    })
}

/// Resolves and probes an agent: its executable (absolute) and spec, or why it cannot start.
pub fn resolve_agent(
    kind: AgentKind,
    preferences: &Path,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<(AgentSpec, PathBuf), NotLaunched> {
    let Some(reg) = registry_kind(kind) else {
        return Err(NotLaunched::Misconfigured("external agents run outside the app".into()));
    };
    // Presets never read preferences.json: a broken file only stops the custom agent.
    let prefs = if reg == agents::AgentKind::Custom {
        Preferences::load(preferences).map_err(|e| NotLaunched::Misconfigured(e.to_string()))?
    } else {
        Preferences::default()
    };
    let spec = AgentSpec::resolve(reg, &prefs).map_err(|e| NotLaunched::Misconfigured(e.to_string()))?;
    match agents::probe(&spec.executable, path_var) {
        Ok(path) => Ok((spec, path)),
        Err(AgentError::NeedsSetup { looked_for }) => Err(NotLaunched::NeedsSetup { looked_for }),
        Err(e) => Err(NotLaunched::Misconfigured(e.to_string())),
    }
}

/// What a terminal/agent node wants running.
struct Wanted {
    id: NodeId,
    rect: crate::model::Rect,
    cwd: PathBuf,
    command: Option<Vec<String>>,
    agent: Option<AgentKind>,
    /// An artifact node's file and view (its command is chosen at launch).
    artifact: Option<(PathBuf, crate::model::ArtifactView)>,
    session: String,
}

/// A program and its arguments (`None` for an empty command line).
fn command_spec(argv: &[String]) -> Option<CommandSpec> {
    argv.split_first().map(|(program, args)| CommandSpec { program: program.clone(), args: args.to_vec() })
}

/// Whether a live terminal that is no longer wanted was closed for good
/// (its project is still open but the node is gone) rather than just put
/// away (its project was closed or another one became active).
pub fn closed_for_good(workspace: &crate::model::Workspace, project: &ProjectId, node: &NodeId) -> bool {
    workspace.project(project).is_some_and(|p| p.node(node).is_none())
}

impl Runtime {
    /// Columns × rows that fill a node (the font's cell size, never the zoom).
    pub fn terminal_size_for(&self, rect: &crate::model::Rect) -> TermSize {
        let (cols, rows, cw, ch) = match &self.gfx {
            Some(g) => {
                let (c, r) = g.renderer.terminal_grid_size(super::scene::render_rect(rect));
                let m = g.renderer.cell_metrics();
                (c, r, m.width, m.height)
            }
            None => {
                let body =
                    canvas_render::content_rect(super::scene::render_rect(rect), &canvas_render::Theme::default());
                let c = (body.w / FALLBACK_CELL.0).floor().clamp(2.0, 1000.0) as u16;
                let r = (body.h / FALLBACK_CELL.1).floor().clamp(1.0, 1000.0) as u16;
                (c, r, FALLBACK_CELL.0, FALLBACK_CELL.1)
            }
        };
        TermSize { cols: cols.max(2), rows: rows.max(1), cell_width: cw as u16, cell_height: ch as u16 }
    }

    /// Installs the hook that prepares every terminal/agent PTY before it
    /// starts (the tool runtime's credential and launch integration).
    pub fn set_pty_launch_hook(&mut self, hook: LaunchHook) {
        self.terminals.hook = Some(hook);
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
                    NodeKind::Agent { cwd, agent } => (cwd.clone(), None, Some(*agent), None),
                    NodeKind::Artifact { path, view } => {
                        artifact = Some((path.clone(), *view));
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
            if self.terminals.not_launched.contains_key(&w.id) {
                continue;
            }
            self.start_terminal(w, size, &project_id, &folder);
        }
    }

    /// Ends or detaches the live terminal of a node that is no longer shown.
    fn put_away_terminal(&mut self, id: &NodeId) {
        let Some(t) = self.terminals.map.remove(id) else { return };
        let data = self.data_dir().to_path_buf();
        let job = if closed_for_good(&self.workspace, &t.project, id) {
            self.terminals.ending.insert(t.session.clone());
            SessionJob::End { data, tmux: self.tmux().cloned(), name: t.session.clone() }
        } else {
            let bytes = t.term.with_screen(|s| s.ansi_snapshot(persist::MAX_SNAPSHOT_BYTES));
            SessionJob::Save { data, name: t.session.clone(), bytes }
        };
        // Dropping hangs up: a tmux client detaches, a plain shell ends.
        drop(t);
        self.session_job(job);
    }

    /// Queues work on session files for the worker thread (started on first use;
    /// done inline if it cannot start).
    fn session_job(&mut self, job: SessionJob) {
        if self.terminals.worker.is_none() {
            let (tx, rx) = mpsc::channel();
            match std::thread::Builder::new()
                .name("term-sessions".into())
                .spawn(move || rx.into_iter().for_each(run_session_job))
            {
                Ok(_) => self.terminals.worker = Some(tx),
                Err(e) => tracing::warn!("terminal session worker not started; working inline: {e}"),
            }
        }
        let job = match &self.terminals.worker {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        run_session_job(job);
    }

    /// Waits (bounded) until queued session work is done (at exit).
    fn flush_session_jobs(&mut self, timeout: Duration) {
        self.terminals.ending.clear();
        let Some(tx) = &self.terminals.worker else { return };
        let (done_tx, done_rx) = mpsc::channel();
        if tx.send(SessionJob::Flush(done_tx)).is_ok() && done_rx.recv_timeout(timeout).is_err() {
            tracing::warn!("terminal snapshots still being written at exit");
        }
    }

    /// Records why a node's terminal was not started: its body says so, and a notice.
    fn not_launched(&mut self, id: NodeId, notice: String, why: NotLaunched) {
        self.notify(notice, true);
        self.terminals.not_launched.insert(id, why);
        self.request_redraw();
    }

    fn start_terminal(&mut self, w: Wanted, size: TermSize, project: &ProjectId, folder: &Path) {
        let data = self.data_dir().to_path_buf();
        let mut agent_executable = None;
        let mut command = w.command.as_deref().and_then(command_spec);
        if let Some((path, view)) = &w.artifact {
            match super::artifact_views::artifact_command(
                path,
                *view,
                |v| std::env::var(v).ok(),
                std::env::var_os("PATH").as_deref(),
            ) {
                Ok(argv) => command = command_spec(&argv),
                Err(why) => {
                    return self.not_launched(w.id, format!("artifact {}: {}", path.display(), why.message()), why)
                }
            }
        }
        if let Some(kind) = w.agent {
            let prefs = crate::paths::agent_tools(&data).join("preferences.json");
            match resolve_agent(kind, &prefs, std::env::var_os("PATH").as_deref()) {
                Ok((spec, exe)) => {
                    command = Some(CommandSpec { program: exe.display().to_string(), args: spec.launch_args(None) });
                    agent_executable = Some(exe);
                }
                Err(why) => {
                    return self.not_launched(
                        w.id.clone(),
                        format!("agent node {} ({kind}): {}", w.id, why.message()),
                        why,
                    )
                }
            }
        }
        // A node closed and brought back (undo) must not attach to the session being ended.
        if self.terminals.ending.contains(&w.session) {
            self.flush_session_jobs(Duration::from_secs(2));
        }
        let tmux_session = match self.tmux().cloned() {
            Some(tmux) => match TmuxSession::new(tmux, &data, &w.session) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!(node = %w.id, "terminal runs without tmux: {e}");
                    None
                }
            },
            None => None,
        };
        let warm = tmux_session.as_ref().is_some_and(TmuxSession::exists);
        let mut launch = PtyLaunch {
            node: w.id.clone(),
            project: project.clone(),
            project_folder: folder.to_path_buf(),
            agent: w.agent,
            agent_executable,
            command,
            env: vec![
                ("TERMSPRAWL_NODE_ID".into(), w.id.to_string()),
                ("TERMSPRAWL_PROJECT_ID".into(), project.to_string()),
                (crate::paths::DATA_DIR_ENV.into(), data.display().to_string()),
            ],
            warm,
        };
        // Tool-runtime integration point: credentials and first instructions for agent PTYs.
        if let Some(hook) = self.terminals.hook.clone() {
            match hook(self, &mut launch) {
                LaunchDecision::Launch => {}
                LaunchDecision::Defer => {
                    self.terminals.deferred.insert(w.id);
                    return;
                }
                LaunchDecision::Refuse(why) => {
                    return self.not_launched(
                        w.id.clone(),
                        format!("node {} not launched: {why}", w.id),
                        NotLaunched::Refused(why),
                    )
                }
            }
        }
        let mut config = TerminalConfig::new(w.cwd, size);
        config.command = launch.command;
        config.env = launch.env;
        config.persistence = match tmux_session {
            Some(s) => Persistence::Tmux(s),
            None => match persist::load_snapshot(&snapshot_path(&data, &w.session)) {
                Ok(Some(bytes)) if !bytes.is_empty() => Persistence::Restore(bytes),
                Ok(_) => Persistence::None,
                Err(e) => {
                    tracing::warn!(node = %w.id, "terminal snapshot not restored: {e}");
                    Persistence::None
                }
            },
        };
        let host = Arc::new(NodeHost { node: w.id.clone(), app: self.handle() });
        match Terminal::spawn(config, host) {
            Ok(term) => {
                tracing::debug!(node = %w.id, session = %w.session, warm, "terminal started");
                let live = LiveTerminal {
                    term,
                    exited: None,
                    bell: false,
                    project: project.clone(),
                    session: w.session,
                    agent: w.agent,
                    warm,
                    saved_generation: None,
                    shown_status: None,
                };
                self.terminals.map.insert(w.id, live);
            }
            Err(e) => self.notify(format!("terminal {} did not start: {e}", w.id), true),
        }
    }

    /// Starts the thread that wakes the main thread every [`TICK_EVERY`] for
    /// [`Runtime::terminals_tick`]; it ends when the app stops taking jobs.
    fn start_terminal_ticker(&mut self) {
        if self.terminals.ticker {
            return;
        }
        self.terminals.ticker = true;
        let app = self.handle();
        let spawned = std::thread::Builder::new().name("term-ticker".into()).spawn(move || loop {
            std::thread::sleep(TICK_EVERY);
            if app.post(|rt| rt.terminals_tick()).is_err() {
                break;
            }
        });
        if let Err(e) = spawned {
            tracing::warn!("terminal ticker not started (agent badges refresh only on output): {e}");
        }
    }

    /// Periodic terminal work: redraws when an agent's status changed with
    /// time alone, saves snapshots of changed terminals every [`SNAPSHOT_EVERY`],
    /// and retries deferred launches.
    pub fn terminals_tick(&mut self) {
        let now = Instant::now();
        let mut changed = false;
        for t in self.terminals.map.values_mut() {
            if t.agent.is_none() {
                continue;
            }
            let status = agents::agent_status(now, t.term.last_output_at(), t.exited.is_some(), AGENT_IDLE_AFTER);
            if t.shown_status != Some(status) {
                t.shown_status = Some(status);
                changed = true;
            }
        }
        if changed {
            self.request_redraw();
        }
        if self.terminals.last_snapshot.is_none_or(|at| now.duration_since(at) >= SNAPSHOT_EVERY) {
            self.terminals.last_snapshot = Some(now);
            self.save_terminal_snapshots();
        }
        if !self.terminals.deferred.is_empty() {
            self.sync_terminals();
        }
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
            let bytes = t.term.with_screen(|s| s.ansi_snapshot(persist::MAX_SNAPSHOT_BYTES));
            jobs.push(SessionJob::Save { data: data.clone(), name: t.session.clone(), bytes });
        }
        for job in jobs {
            self.session_job(job);
        }
    }

    /// At app exit: snapshot every terminal and detach (sessions live on).
    pub fn detach_terminals(&mut self) {
        self.save_terminal_snapshots();
        // Dropping hangs up each client; tmux sessions keep running.
        self.terminals.map.clear();
        self.flush_session_jobs(Duration::from_secs(10));
    }

    /// An agent node's status (`None` for other nodes).
    pub fn agent_node_status(&self, id: &NodeId) -> Option<AgentNodeStatus> {
        if let Some(why) = self.terminals.not_launched.get(id) {
            return Some(AgentNodeStatus::NotLaunched(why.clone()));
        }
        if self.terminals.deferred.contains(id) {
            return Some(AgentNodeStatus::Pending);
        }
        let t = self.terminals.map.get(id)?;
        t.agent?;
        if let Some(status) = &t.exited {
            return Some(AgentNodeStatus::Exited(status.clone()));
        }
        Some(match agents::agent_status(Instant::now(), t.term.last_output_at(), false, AGENT_IDLE_AFTER) {
            AgentStatus::WaitingForInput => AgentNodeStatus::WaitingForInput,
            AgentStatus::Running | AgentStatus::Exited => AgentNodeStatus::Running,
        })
    }

    pub(crate) fn terminal_content(&self, id: &NodeId) -> NodeContent {
        if let Some(why) = self.terminals.not_launched.get(id) {
            return NodeContent::Text(why.message());
        }
        match self.terminals.map.get(id) {
            Some(t) => NodeContent::Terminal(grid_view(&t.term.snapshot(), self.focus.as_ref() == Some(id))),
            None => NodeContent::Empty,
        }
    }

    pub(crate) fn node_badge(&self, id: &NodeId) -> Option<Badge> {
        let exited_badge = |status: &ExitStatus| {
            let text = match &status.signal {
                Some(sig) => format!("exited ({sig})"),
                None => format!("exited {}", status.code),
            };
            Badge { text, color: if status.success() { Color::hex(0x9aa5ce) } else { Color::hex(0xf7768e) } }
        };
        if let Some(status) = self.agent_node_status(id) {
            return Some(match status {
                AgentNodeStatus::Running => Badge { text: "running".into(), color: Color::hex(0x9ece6a) },
                AgentNodeStatus::WaitingForInput => {
                    Badge { text: "waiting for input".into(), color: Color::hex(0xe0af68) }
                }
                AgentNodeStatus::Exited(s) => exited_badge(&s),
                AgentNodeStatus::NotLaunched(NotLaunched::NeedsSetup { looked_for }) => {
                    Badge { text: format!("needs setup: {looked_for}"), color: Color::hex(0xf7768e) }
                }
                AgentNodeStatus::NotLaunched(_) => Badge { text: "not launched".into(), color: Color::hex(0xf7768e) },
                AgentNodeStatus::Pending => Badge { text: "starting".into(), color: Color::hex(0x9aa5ce) },
            });
        }
        let t = self.terminals.map.get(id)?;
        if let Some(status) = &t.exited {
            return Some(exited_badge(status));
        }
        t.bell.then(|| Badge { text: "bell".into(), color: Color::hex(0xe0af68) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_stable_valid_and_distinct() {
        let a = NodeId::new("term-1").unwrap();
        let b = NodeId::new("term-2").unwrap();
        let long = NodeId::new("x".repeat(128)).unwrap();
        let name = session_name(Path::new("/p/one"), &a);
        assert_eq!(name, session_name(Path::new("/p/one"), &a));
        assert_ne!(name, session_name(Path::new("/p/two"), &a));
        assert_ne!(name, session_name(Path::new("/p/one"), &b));
        for n in [name, session_name(Path::new("/p"), &long)] {
            assert!(valid_session_name(&n), "{n}");
        }
    }

    #[test]
    fn agent_resolution_reports_missing_and_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let prefs = dir.path().join("preferences.json");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let path = std::ffi::OsString::from(bin.as_os_str());
        match resolve_agent(AgentKind::Codex, &prefs, Some(&path)) {
            Err(NotLaunched::NeedsSetup { looked_for }) => assert_eq!(looked_for, "codex"),
            other => panic!("{other:?}"),
        }
        let exe = bin.join("codex");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (spec, found) = resolve_agent(AgentKind::Codex, &prefs, Some(&path)).unwrap();
        assert_eq!((spec.executable.as_str(), found), ("codex", exe));
        std::fs::write(&prefs, "{\"custom\": {\"executable\": 3}}").unwrap();
        match resolve_agent(AgentKind::Custom, &prefs, Some(&path)) {
            Err(NotLaunched::Misconfigured(why)) => assert!(why.contains("malformed agent preferences"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(resolve_agent(AgentKind::External, &prefs, Some(&path)), Err(NotLaunched::Misconfigured(_))));
    }
}
