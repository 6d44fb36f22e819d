//! terminal: everything about terminal nodes except drawing them. It owns the
//! PTY and child process ([`Terminal`]; apps drive it through the
//! [`RunningTerminal`] trait, which test fakes implement too), the VT state
//! fed on a reader thread ([`Screen`], on alacritty_terminal), the
//! renderer-neutral [`GridSnapshot`] with resolved colours,
//! keyboard/paste/mouse encoding ([`keys`], [`mouse`]), selection and text
//! extraction, session persistence ([`tmux`], [`persist`]), what programs
//! signal beyond the grid ([`signals`]: notifications, progress, prompt marks,
//! status reports) and the agent CLI registry ([`agents`]). It must not know about wgpu, winit, CEF, the canvas
//! or the tool server: the app reaches it through [`TerminalHost`] callbacks,
//! the [`RunningTerminal`] trait and plain data types.
//!
//! Modules and what each imports of the crate (checked by module-graph's
//! workspace test, like every crate's table). Dependencies run one way: the
//! VT state ([`Screen`], `screen`) stands on the input modes it reports,
//! colours, signals and errors; what reads or extends a screen (`text`,
//! `selection`, `snapshot`, `trace`, [`persist`]) stands on it; the
//! [`RunningTerminal`] trait stands on the screen, its snapshot and the key
//! encoders; the live [`Terminal`] (`session`, which implements the trait)
//! is on top, and nothing below imports it.
//!
//! ```text
//! error     → tmux  (TerminalError wraps TmuxError)
//! external  → agents
//! host      → signals
//! keys      → input
//! mouse     → input
//! pane_pipe → shell, signals, tmux
//! persist   → screen
//! running   → error, host, input, keys, screen, snapshot
//! screen    → colors, error, input, signals
//! selection → screen, text
//! session   → colors, error, host, input, keys, pane_pipe, persist, running,
//!             screen, signals, snapshot, spawn, tmux
//! snapshot  → colors, screen, selection  (takes the clamped selection range)
//! text      → screen
//! tmux      → capture, host, spawn
//! trace     → capture, screen
//! leaves: agent_login, agents, capture, colors, input, shell, signals, spawn
//! ```

#![warn(missing_docs)]

pub mod agent_login;
pub mod agents;
mod capture;
mod colors;
mod error;
pub mod external;
mod host;
mod input;
pub mod keys;
pub mod mouse;
mod pane_pipe;
pub mod persist;
mod running;
mod screen;
mod selection;
mod session;
mod shell;
pub mod signals;
mod snapshot;
mod spawn;
mod text;
pub mod tmux;
pub mod trace;

pub use colors::{xterm_256, Rgb, Theme, DIM_FACTOR};
pub use error::TerminalError;
pub use host::{ExitStatus, TerminalHost};
pub use input::InputModes;
pub use running::RunningTerminal;
pub use screen::{Screen, ScreenConfig, ScreenEvent, TermSize, DEFAULT_SCROLLBACK};
pub use selection::{SelectionKind, Side};
pub use session::{CommandSpec, Persistence, Terminal, TerminalConfig};
pub use shell::shell_quote;
pub use signals::TerminalSignal;
pub use snapshot::{Cell, CellFlags, CursorShape, CursorSnapshot, GridSnapshot, Hyperlink, SelectionSpan};
