//! The workspace model: projects, their canvases of nodes, the commands
//! that change them (with undo/redo), selection, hit testing, and the files
//! they are saved to. Pure data and logic — no window, GPU, browser or PTY
//! types — so all of it is testable without any of those.
//!
//! Modules and what each imports of the model (checked by module-graph's
//! test; no file imports another round a circle):
//!
//! ```text
//! autosave  → error, ids, persist, project, workspace  (debounced saving)
//! persist   → error, geometry, ids, node, project, workspace  (layout and workspace files)
//! workspace → command, error, history, ids, project    (open projects, apply/undo)
//! command   → error, geometry, history, ids, node, placement, project, title  (what a command does)
//! hit       → geometry, ids, node, project              (hit testing)
//! selection → geometry, ids, project
//! project   → error, geometry, ids, node                (one canvas)
//! history   → error, ids, node                          (undo/redo records)
//! title     → node                                      (what a title bar reads)
//! placement → geometry                                  (free spots for new nodes)
//! node      → error, geometry, ids                      (node kinds, tabs, colours)
//! geometry  → error                                     (points, rects, camera)
//! error     → ids                                       (ModelError takes IdError in)
//! leaves: ids                                           (ids, tab addresses, IdError)
//! ```

pub mod autosave;
pub mod command;
pub mod error;
pub mod geometry;
pub mod history;
pub mod hit;
pub mod ids;
pub mod node;
pub mod persist;
pub mod placement;
pub mod project;
pub mod selection;
pub mod title;
pub mod workspace;

pub use autosave::{Autosaver, DebouncePolicy};
pub use command::{Command, CommandScope};
pub use error::{ModelError, PersistError};
pub use geometry::{Camera, Point, Rect, ResizeEdge};
pub use history::{CoalesceKey, HistoryEffect};
pub use hit::{Hit, HitOptions, HitRegion};
pub use ids::{BrowserContextId, IdError, NodeId, ProjectId, TabAddress, TabId};
pub use node::{AgentKind, AgentWorktree, ArtifactView, BrowserTab, Colour, Node, NodeKind};
pub use persist::{LoadedProject, LoadedWorkspace, Recovery};
pub use project::Project;
pub use selection::Selection;
pub use workspace::{Applied, Workspace};
