//! Why a node needs the person: the one mapping from a node's status to a
//! reason (extend [`needs_you`] when a new status needs the person).

use crate::runtime::terminals::{exit_text, AgentNodeStatus, NotLaunched};
use agent_vocab::AgentState;
use terminal::ExitStatus;

/// Why a node needs the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// An agent stopped at a permission prompt: it waits for a decision.
    NeedsPermission,
    /// An agent waits for an answer (it says so, or it went quiet after output).
    WaitingForInput,
    /// An agent finished its turn: the next step is the person's.
    Done,
    /// An agent's turn failed.
    Error,
    /// An agent's program ended with a failure.
    Failed(ExitStatus),
    /// An agent could not start (its CLI is missing, preferences are wrong, …).
    NotLaunched(NotLaunched),
    /// The terminal's program rang the bell.
    Bell,
    /// The terminal's program raised a notification (OSC 9, 777 or 99).
    Notified {
        /// Its title, when it gave one.
        title: Option<String>,
        /// Its text.
        body: String,
    },
}

impl Reason {
    /// The reason in a few words (a notification's body, the jump's toast).
    pub fn text(&self) -> String {
        match self {
            Self::NeedsPermission => "needs your permission".into(),
            Self::WaitingForInput => "waiting for input".into(),
            Self::Done => "finished its turn".into(),
            Self::Error => "its turn failed".into(),
            Self::Failed(status) => exit_text(status),
            Self::NotLaunched(why) => why.message(),
            Self::Bell => "rang the bell".into(),
            Self::Notified { title: Some(t), body } if !body.is_empty() => format!("{t}: {body}"),
            Self::Notified { title: Some(t), .. } => t.clone(),
            Self::Notified { title: None, body } => body.clone(),
        }
    }
}

/// Whether an agent in `status` needs the person, and why.
pub fn needs_you(status: &AgentNodeStatus) -> Option<Reason> {
    match status {
        AgentNodeStatus::Live(AgentState::NeedsPermission) => Some(Reason::NeedsPermission),
        AgentNodeStatus::Live(AgentState::WaitingForInput) => Some(Reason::WaitingForInput),
        AgentNodeStatus::Live(AgentState::Done) => Some(Reason::Done),
        AgentNodeStatus::Live(AgentState::Error) => Some(Reason::Error),
        AgentNodeStatus::Exited(s) if !s.success() => Some(Reason::Failed(s.clone())),
        AgentNodeStatus::NotLaunched(why) => Some(Reason::NotLaunched(why.clone())),
        AgentNodeStatus::Live(AgentState::Starting)
        | AgentNodeStatus::Live(AgentState::Working)
        | AgentNodeStatus::Live(AgentState::Exited)
        | AgentNodeStatus::Pending
        | AgentNodeStatus::Exited(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: u32) -> ExitStatus {
        ExitStatus { code, signal: None }
    }

    #[test]
    fn waiting_failures_and_launch_problems_need_the_person_work_does_not() {
        assert_eq!(needs_you(&AgentNodeStatus::Live(AgentState::WaitingForInput)), Some(Reason::WaitingForInput));
        assert_eq!(needs_you(&AgentNodeStatus::Exited(exit(3))), Some(Reason::Failed(exit(3))));
        let setup = NotLaunched::NeedsSetup { looked_for: "codex".into() };
        assert_eq!(needs_you(&AgentNodeStatus::NotLaunched(setup.clone())), Some(Reason::NotLaunched(setup.clone())));
        assert_eq!(needs_you(&AgentNodeStatus::Live(AgentState::NeedsPermission)), Some(Reason::NeedsPermission));
        assert_eq!(needs_you(&AgentNodeStatus::Live(AgentState::Done)), Some(Reason::Done));
        assert_eq!(needs_you(&AgentNodeStatus::Live(AgentState::Error)), Some(Reason::Error));
        assert_eq!(needs_you(&AgentNodeStatus::Live(AgentState::Working)), None);
        assert_eq!(needs_you(&AgentNodeStatus::Live(AgentState::Starting)), None);
        assert_eq!(needs_you(&AgentNodeStatus::Pending), None);
        assert_eq!(needs_you(&AgentNodeStatus::Exited(exit(0))), None, "a clean exit is not a call for help");
        assert_eq!(Reason::Failed(exit(3)).text(), "exited 3");
        assert_eq!(Reason::NotLaunched(setup).text(), NotLaunched::NeedsSetup { looked_for: "codex".into() }.message());
        assert_eq!(Reason::WaitingForInput.text(), "waiting for input");
    }
}
