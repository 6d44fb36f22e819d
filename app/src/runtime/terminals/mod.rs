//! Terminal and agent nodes ↔ live PTY sessions.
//!
//! One running terminal per terminal/agent node of the active project (a
//! `terminal::Terminal`, held as a `terminal::RunningTerminal` so tests can
//! hold a fake), spawned in the node's working directory with the node's
//! identity in its environment, sized from the node and the renderer's cell
//! metrics (never from the zoom), and drawn through the renderer's cell grid.
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
//! prepares each launch (credentials, first instruction, status hooks) through
//! [`Runtime::set_pty_launch_hook`](super::Runtime::set_pty_launch_hook).
//! Each running agent has a state ([`AgentNodeActivity`]: starting, working,
//! needs permission, waiting for input, done, error, exited) from its CLI's
//! hooks ([`Runtime::agent_hook`](super::Runtime::agent_hook)), its terminal's
//! signals (OSC 7501, OSC 133), else the quiet-time guess; the notifications
//! programs raise are kept per node for whoever shows them.
//!
//! Files and what each imports of this folder (checked by module-graph's
//! test; `fake`, a terminal without a process, is for tests only):
//!
//! ```text
//! status         → activity  (why a node did not launch, an agent node's status)
//! agents         → status  (agent CLI resolution)
//! artifact_views → status  (the editor or diff program an artifact node runs)
//! badges         → status  (badge text and colours)
//! traces         → badges  (the exit line under an ended program's output)
//! nodes          → activity, snapshots, spawner, status  (the live terminals, per-node state)
//! host           → nodes  (terminal callbacks become main-thread jobs)
//! reports        → activity, traces  (signals, exits and hook reports reaching the runtime)
//! launch         → agents, artifact_views, hook, nodes, snapshots, spawner, status
//!                  (what a node runs, started through a `PtySpawner`)
//! sync           → badges, grid, hook, host, launch, naming, nodes, snapshots, status, ticker
//!                  (the runtime methods tying it together)
//! leaves: activity, grid, hook, naming, snapshots, spawner, ticker
//! ```
//!
//! (`activity`: an agent's state from hooks, terminal signals or the
//! quiet-time guess, and the notifications programs raise; `grid`: screen to renderer cells; `hook`: what the launch hook sees;
//! `naming`: session names; `snapshots`: snapshot files and the session
//! worker; `spawner`: the [`PtySpawner`] seam; `ticker`: the periodic wake-up.)

mod activity;
mod agents;
pub mod artifact_views;
mod badges;
#[cfg(test)]
mod fake;
mod grid;
mod hook;
mod host;
mod launch;
mod naming;
mod nodes;
mod reports;
mod snapshots;
mod spawner;
mod status;
mod sync;
mod ticker;
mod traces;

pub use activity::{ActivityBoard, NodeNotification, NOTIFICATIONS_KEPT};
pub use agents::resolve_agent;
pub use badges::{agent_badge, exit_text, terminal_badge, ATTENTION};
#[cfg(test)]
pub(crate) use fake::FakeSession;
pub use grid::grid_view;
pub use hook::{LaunchDecision, PtyLaunch};
pub use naming::{session_name, valid_session_name};
pub use nodes::{closed_for_good, LiveTerminal, TerminalNodes, NEW_NOTIFICATIONS_KEPT};
pub use snapshots::{end_session, save_terminal_snapshot, snapshot_path, SNAPSHOT_DIR, SNAPSHOT_EVERY};
#[cfg(test)]
pub(crate) use spawner::RecordingSpawner;
pub use spawner::{PtySpawner, SpawnSpec, TerminalSpawner};
pub use status::{AgentNodeActivity, AgentNodeStatus, NotLaunched, AGENT_IDLE_AFTER};
pub use traces::{exit_line, AgentProbe, RESTART_HINT};
