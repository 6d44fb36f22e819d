//! An agent's state with its time and source, as `agent_status` and
//! `canvas_list` report it.

use serde::{Deserialize, Serialize};

use crate::state::{AgentState, StateSource};

/// An agent's state with its time and source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentActivity {
    /// The state.
    pub state: AgentState,
    /// When it entered the state, in milliseconds since the Unix epoch.
    pub state_since: u64,
    /// Where the state came from.
    pub source: StateSource,
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
            state: AgentState::NeedsPermission,
            state_since: 1_700_000_000_000,
            source: StateSource::Hooks,
            exit_code: None,
            detail: Some("Bash".into()),
        };
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"state": "needs-permission", "stateSince": 1_700_000_000_000u64, "source": "hooks", "detail": "Bash"})
        );
        let exited = AgentActivity { state: AgentState::Exited, exit_code: Some(2), detail: None, ..a };
        assert_eq!(serde_json::to_value(&exited).unwrap()["exitCode"], json!(2));
    }
}
