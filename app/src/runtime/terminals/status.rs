//! What a terminal/agent node reports about its program: why it did not
//! start, and an agent's status.

use std::time::Duration;
use terminal::ExitStatus;

/// Quiet time after output before an agent counts as waiting for input.
pub const AGENT_IDLE_AFTER: Duration = Duration::from_secs(3);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_launched_messages_say_what_to_do() {
        let setup = NotLaunched::NeedsSetup { looked_for: "codex".into() };
        assert_eq!(setup.message(), "needs setup: `codex` was not found on PATH; install it, then reopen this node");
        assert_eq!(NotLaunched::Misconfigured("bad prefs".into()).message(), "not launched: bad prefs");
        assert_eq!(NotLaunched::Refused("no session".into()).message(), "not launched: no session");
    }
}
