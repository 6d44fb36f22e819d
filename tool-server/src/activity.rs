//! What an agent is doing, as `agent_status` and `canvas_list` report it:
//! its state, since when, and where the app learned it.

use serde::{Deserialize, Serialize};

/// An agent's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActivityState {
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
    /// Its turn failed.
    Error,
    /// The process ended (see `exitCode`).
    Exited,
}

impl ActivityState {
    /// The wire name (`needs-permission`, …).
    pub fn as_str(self) -> &'static str {
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
}

/// Where a state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActivitySource {
    /// The CLI's own hooks (claude hooks, codex `notify`), through `termsprawl-ctl hook`.
    Hooks,
    /// Sequences the program wrote to its terminal (OSC 7501, OSC 133).
    Terminal,
    /// The fallback for CLIs that report nothing: output, then quiet time.
    QuietTime,
    /// The process itself: launched, or exited.
    Process,
}

/// An agent's state with its time and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentActivity {
    /// The state.
    pub state: ActivityState,
    /// When it entered the state, in milliseconds since the Unix epoch.
    pub state_since: u64,
    /// Where the state came from.
    pub source: ActivitySource,
    /// The exit code, once exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u32>,
    /// What it is doing or waiting for (a tool name, the permission asked), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn activity_serializes_with_the_documented_names() {
        let a = AgentActivity {
            state: ActivityState::NeedsPermission,
            state_since: 1_700_000_000_000,
            source: ActivitySource::Hooks,
            exit_code: None,
            detail: Some("Bash".into()),
        };
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"state": "needs-permission", "stateSince": 1_700_000_000_000u64, "source": "hooks", "detail": "Bash"})
        );
        for s in [
            ActivityState::Starting,
            ActivityState::Working,
            ActivityState::NeedsPermission,
            ActivityState::WaitingForInput,
            ActivityState::Done,
            ActivityState::Error,
            ActivityState::Exited,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        }
        assert_eq!(serde_json::to_value(ActivitySource::QuietTime).unwrap(), json!("quiet-time"));
    }
}
