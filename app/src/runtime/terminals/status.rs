//! What a terminal/agent node reports about its program: why it did not
//! start, and an agent's status with its time and source.

use super::activity::unix_ms;
use agent_vocab::{AgentState, StateSource};
use std::time::{Duration, SystemTime};
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
    /// The agent's CLI is installed but not logged in.
    NeedsLogin {
        /// The agent's name.
        agent: String,
        /// How a person logs it in.
        how: &'static str,
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
            Self::NeedsLogin { agent, how } => {
                format!("needs setup: {agent} is not logged in; {how}, then reopen this node")
            }
            Self::Misconfigured(why) | Self::Refused(why) => format!("not launched: {why}"),
        }
    }
}

/// What an agent node shows in its status badge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentNodeStatus {
    /// Launched, in the state its hooks or terminal reported, or the
    /// quiet-time guess (waiting for input after [`AGENT_IDLE_AFTER`]). The
    /// process's own exit is [`AgentNodeStatus::Exited`], with its status.
    Live(AgentState),
    /// The process ended.
    Exited(ExitStatus),
    /// Not launched (see the reason).
    NotLaunched(NotLaunched),
    /// Launch postponed by the launch hook (e.g. the tool server is starting).
    Pending,
}

/// An agent node's status with when it began and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentNodeActivity {
    /// The status.
    pub status: AgentNodeStatus,
    /// When it began.
    pub since: SystemTime,
    /// Where it came from.
    pub source: StateSource,
    /// What it is about (a tool, the permission asked, an exit), when known.
    pub detail: Option<String>,
}

impl AgentNodeActivity {
    /// As `agent_status` and `canvas_list` report it (`None` for a node that never launched).
    pub fn wire(&self) -> Option<agent_vocab::AgentActivity> {
        let (state, exit_code) = match &self.status {
            AgentNodeStatus::Live(state) => (*state, None),
            AgentNodeStatus::Pending => (AgentState::Starting, None),
            AgentNodeStatus::Exited(status) => (AgentState::Exited, Some(status.code)),
            AgentNodeStatus::NotLaunched(_) => return None,
        };
        Some(agent_vocab::AgentActivity {
            state,
            state_since: unix_ms(self.since),
            source: self.source,
            exit_code,
            detail: self.detail.clone(),
        })
    }
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

    #[test]
    fn activity_goes_on_the_wire_with_its_exit_code() {
        let since = SystemTime::UNIX_EPOCH + Duration::from_millis(1500);
        let a = |status, source| AgentNodeActivity { status, since, source, detail: None };
        let exited =
            a(AgentNodeStatus::Exited(ExitStatus { code: 2, signal: None }), StateSource::Process).wire().unwrap();
        assert_eq!((exited.state, exited.exit_code, exited.state_since), (AgentState::Exited, Some(2), 1500));
        let guess = a(AgentNodeStatus::Live(AgentState::WaitingForInput), StateSource::QuietTime).wire().unwrap();
        assert_eq!((guess.state, guess.source), (AgentState::WaitingForInput, StateSource::QuietTime));
        assert_eq!(a(AgentNodeStatus::Pending, StateSource::Process).wire().unwrap().state, AgentState::Starting);
        assert_eq!(
            a(AgentNodeStatus::NotLaunched(NotLaunched::Refused("x".into())), StateSource::Process).wire(),
            None
        );
    }
}
