//! Which agent CLI an agent node runs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which agent CLI an agent node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    /// Anthropic's Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// xAI's Grok CLI.
    Grok,
    /// OpenClaude (a Claude Code fork for other providers).
    OpenClaude,
    /// The person's own command from `preferences.json`.
    Custom,
    /// An agent running outside the app, attached through the tool server:
    /// never launched by it.
    External,
}

impl AgentKind {
    /// Every kind, in catalogue order.
    pub const ALL: [AgentKind; 7] =
        [Self::Claude, Self::Codex, Self::Gemini, Self::Grok, Self::OpenClaude, Self::Custom, Self::External];

    /// The kinds the app can launch (every kind but [`AgentKind::External`]), presets first.
    pub const LAUNCHABLE: [AgentKind; 6] =
        [Self::Claude, Self::Codex, Self::Gemini, Self::Grok, Self::OpenClaude, Self::Custom];

    /// The lowercase name used on the wire, on disk and in tool requests.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Grok => "grok",
            Self::OpenClaude => "openclaude",
            Self::Custom => "custom",
            Self::External => "external",
        }
    }

    /// Whether the app launches this kind itself.
    pub const fn is_launchable(self) -> bool {
        !matches!(self, Self::External)
    }
}

/// A name that is no [`AgentKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent {0:?}; expected claude, codex, gemini, grok, openclaude, custom or external")]
pub struct UnknownAgentKind(pub String);

impl FromStr for AgentKind {
    type Err = UnknownAgentKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| UnknownAgentKind(s.to_owned()))
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_by_name_and_on_the_wire() {
        for k in AgentKind::ALL {
            assert_eq!(k.as_str().parse::<AgentKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::json!(k.as_str()));
            assert_eq!(serde_json::from_value::<AgentKind>(serde_json::json!(k.as_str())).unwrap(), k);
        }
        assert_eq!("vim".parse::<AgentKind>(), Err(UnknownAgentKind("vim".into())));
    }

    #[test]
    fn only_external_is_not_launchable() {
        let not: Vec<AgentKind> = AgentKind::ALL.into_iter().filter(|k| !k.is_launchable()).collect();
        assert_eq!(not, [AgentKind::External]);
        assert!(AgentKind::LAUNCHABLE.iter().all(|k| k.is_launchable()));
        assert_eq!(AgentKind::LAUNCHABLE.len() + 1, AgentKind::ALL.len());
    }
}
