//! agent-vocab: the one vocabulary for agents that the terminal crate (which
//! CLI to launch, the quiet-time guess), the tool server (`agent_launch`,
//! `agent_status`, `canvas_list`) and the app (nodes, badges, hooks) share:
//! [`AgentKind`] (which CLI an agent node runs), [`AgentState`] (what it is
//! doing), [`StateSource`] (where that was learned) and [`AgentActivity`]
//! (the three with their time, as agents read them). Plain data with their
//! wire names; it must not know how any of them is found out.
//!
//! ```text
//! activity → state
//! leaves: kind, state
//! ```

#![warn(missing_docs)]

mod activity;
mod kind;
mod state;

pub use activity::AgentActivity;
pub use kind::{AgentKind, UnknownAgentKind};
pub use state::{AgentState, StateSource};
