//! What an agent is doing, and where the app learned it.

use serde::{Deserialize, Serialize};

/// What an agent is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentState {
    /// Launched; nothing reported or printed yet.
    Starting,
    /// Running a turn (thinking, calling tools, printing).
    Working,
    /// Stopped at a permission prompt.
    NeedsPermission,
    /// Idle at its prompt, or asking the person a question.
    WaitingForInput,
    /// Finished its turn.
    Done,
    /// Its turn (or the last command) failed.
    Error,
    /// The process ended.
    Exited,
}

impl AgentState {
    /// Every state, in the order a turn goes through them.
    pub const ALL: [AgentState; 7] = [
        Self::Starting,
        Self::Working,
        Self::NeedsPermission,
        Self::WaitingForInput,
        Self::Done,
        Self::Error,
        Self::Exited,
    ];

    /// The wire name (`needs-permission`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Working => "working",
            Self::NeedsPermission => "needs-permission",
            Self::WaitingForInput => "waiting-for-input",
            Self::Done => "done",
            Self::Error => "error",
            Self::Exited => "exited",
        }
    }

    /// Whether the agent's turn is over (done, failed, or back at its prompt).
    pub const fn turn_over(self) -> bool {
        matches!(self, Self::Done | Self::WaitingForInput | Self::Error)
    }
}

/// Where a state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateSource {
    /// The CLI's own hooks (claude hooks, codex `notify`), through `termsprawl-ctl hook`.
    Hooks,
    /// Sequences the program wrote to its terminal (OSC 7501, OSC 133).
    Terminal,
    /// The fallback for CLIs that report nothing: output, then quiet time.
    QuietTime,
    /// The process itself: launched, or exited.
    Process,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_sources_go_on_the_wire_by_their_kebab_names() {
        for s in AgentState::ALL {
            assert_eq!(serde_json::to_value(s).unwrap(), serde_json::json!(s.as_str()));
        }
        assert_eq!(serde_json::to_value(StateSource::QuietTime).unwrap(), serde_json::json!("quiet-time"));
        assert_eq!(serde_json::to_value(AgentState::NeedsPermission).unwrap(), serde_json::json!("needs-permission"));
    }
}
