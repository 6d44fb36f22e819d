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

#![warn(missing_docs)]

pub mod agent_login;
pub mod agents;
mod colors;
mod error;
pub mod external;
mod host;
pub mod keys;
pub mod mouse;
mod pane_pipe;
pub mod persist;
mod running;
mod screen;
mod selection;
mod session;
pub mod signals;
mod snapshot;
mod spawn;
mod text;
pub mod tmux;
pub mod trace;

pub use colors::{xterm_256, Rgb, Theme, DIM_FACTOR};
pub use error::TerminalError;
pub use host::{ExitStatus, TerminalHost};
pub use running::RunningTerminal;
pub use screen::{InputModes, Screen, ScreenConfig, ScreenEvent, TermSize, DEFAULT_SCROLLBACK};
pub use selection::{SelectionKind, Side};
pub use session::{CommandSpec, Persistence, Terminal, TerminalConfig};
pub use signals::TerminalSignal;
pub use snapshot::{Cell, CellFlags, CursorShape, CursorSnapshot, GridSnapshot, Hyperlink, SelectionSpan};
