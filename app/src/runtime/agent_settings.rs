//! `agent-tools/settings.json`: the agent settings the app persists ("Enable
//! agent browser control", "serve the CDP facade"), read and written here
//! only.
//!
//! Doubt keeps a setting off: a missing file or key means off, a malformed
//! file or a non-object is reported and means off for every key, and a key
//! that is not `true`/`false` is reported and means off for that key. Saving
//! keeps whatever else the file holds (unknown keys, and a known key's
//! unusable value unless that key is the one being set); a malformed file is
//! replaced.

use local_guard::FileError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

/// The settings file inside `agent-tools/`.
pub const SETTINGS_FILE: &str = "settings.json";
/// The key of "Enable agent browser control".
pub const BROWSER_CONTROL_KEY: &str = "agentBrowserControl";
/// The key that turns the CDP facade on.
pub const FACADE_KEY: &str = "cdpFacade";
/// Largest settings file read.
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// A switch as the file holds it: a boolean, or something else (kept as it
/// was on save, read as off).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Switch {
    /// `true` or `false`.
    Bool(bool),
    /// Any other JSON value.
    Unusable(Value),
}

/// The contents of `agent-tools/settings.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentSettings {
    /// "Enable agent browser control" (`None`: never set).
    #[serde(rename = "agentBrowserControl", default, skip_serializing_if = "Option::is_none")]
    pub agent_browser_control: Option<Switch>,
    /// "Serve the CDP facade" (`None`: never set).
    #[serde(rename = "cdpFacade", default, skip_serializing_if = "Option::is_none")]
    pub cdp_facade: Option<Switch>,
    /// Keys this app does not know, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AgentSettings {
    /// Parses the file's bytes; `None` (after a warning) when they are not a JSON object.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let parsed = serde_json::from_slice::<Value>(bytes).and_then(|v| match v {
            Value::Object(map) => serde_json::from_value::<Self>(Value::Object(map)).map(Some),
            _ => Ok(None),
        });
        match parsed {
            Ok(Some(s)) => Some(s),
            Ok(None) => {
                tracing::warn!(
                    "{SETTINGS_FILE} is not a JSON object; agent browser control and the CDP facade stay off"
                );
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "ignoring malformed {SETTINGS_FILE}; agent browser control and the CDP facade stay off");
                None
            }
        }
    }

    /// Whether agents may drive browsers (off unless the file says `true`).
    pub fn browser_control(&self) -> bool {
        switch_on(self.agent_browser_control.as_ref(), BROWSER_CONTROL_KEY)
    }

    /// Whether the CDP facade is served (off unless the file says `true`).
    pub fn facade(&self) -> bool {
        switch_on(self.cdp_facade.as_ref(), FACADE_KEY)
    }

    /// Sets "Enable agent browser control".
    pub fn set_browser_control(&mut self, on: bool) {
        self.agent_browser_control = Some(Switch::Bool(on));
    }
}

fn switch_on(switch: Option<&Switch>, key: &str) -> bool {
    match switch {
        None => false,
        Some(Switch::Bool(on)) => *on,
        Some(Switch::Unusable(_)) => {
            tracing::warn!("{SETTINGS_FILE}: {key} must be true or false; it stays off");
            false
        }
    }
}

/// Reads the settings: defaults when the file is missing, malformed or not
/// an object (reported); an error only when the file cannot be read.
pub fn load(agent_tools: &Path) -> Result<AgentSettings, FileError> {
    let bytes = local_guard::files::read_private(agent_tools, SETTINGS_FILE, MAX_SETTINGS_BYTES)?;
    Ok(bytes.and_then(|b| AgentSettings::parse(&b)).unwrap_or_default())
}

/// Writes the settings (private file, pretty JSON).
pub fn save(agent_tools: &Path, settings: &AgentSettings) -> Result<(), FileError> {
    local_guard::files::write_private_json(agent_tools, SETTINGS_FILE, settings)
}

/// Persists "Enable agent browser control", keeping the file's other settings.
pub fn save_browser_control(agent_tools: &Path, on: bool) -> Result<(), FileError> {
    let mut settings = load(agent_tools)?;
    settings.set_browser_control(on);
    save(agent_tools, &settings)
}

/// Whether the persisted setting asks for the CDP facade; an unreadable file
/// is reported and means no (the facade is opt-in, so doubt keeps it off).
pub fn facade_enabled(agent_tools: &Path) -> bool {
    match load(agent_tools) {
        Ok(s) => s.facade(),
        Err(e) => {
            tracing::warn!(error = %e, "{SETTINGS_FILE} not readable; the CDP facade stays off");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent_tools() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        (dir, tools)
    }

    fn browser_control(tools: &Path) -> bool {
        load(tools).unwrap().browser_control()
    }

    #[test]
    fn browser_control_setting_round_trips_and_defaults_off() {
        let (_dir, tools) = agent_tools();
        assert!(!browser_control(&tools));
        save_browser_control(&tools, true).unwrap();
        assert!(browser_control(&tools));
        std::fs::write(tools.join(SETTINGS_FILE), b"[1,").unwrap();
        assert!(!browser_control(&tools));
    }

    #[test]
    fn only_an_explicit_true_enables_the_facade() {
        let (_dir, tools) = agent_tools();
        assert!(!facade_enabled(&tools));
        let cases = [
            (r#"{"cdpFacade": true, "agentBrowserControl": false}"#, true),
            (r#"{"cdpFacade": false}"#, false),
            (r#"{"cdpFacade": "yes"}"#, false),
            (r#"{}"#, false),
            ("[true]", false),
            ("{not json", false),
        ];
        for (text, want) in cases {
            std::fs::write(tools.join(SETTINGS_FILE), text).unwrap();
            assert_eq!(facade_enabled(&tools), want, "{text}");
        }
    }

    #[test]
    fn saving_browser_control_keeps_the_facade_setting() {
        let (_dir, tools) = agent_tools();
        std::fs::write(tools.join(SETTINGS_FILE), r#"{"cdpFacade": true}"#).unwrap();
        save_browser_control(&tools, true).unwrap();
        assert!(facade_enabled(&tools));
        assert!(browser_control(&tools));
    }

    #[test]
    fn one_rule_for_both_keys() {
        let (_dir, tools) = agent_tools();
        // A non-bool value turns only its own key off.
        std::fs::write(tools.join(SETTINGS_FILE), r#"{"agentBrowserControl": 1, "cdpFacade": true}"#).unwrap();
        assert!(!browser_control(&tools));
        assert!(facade_enabled(&tools));
        std::fs::write(tools.join(SETTINGS_FILE), r#"{"agentBrowserControl": true, "cdpFacade": "yes"}"#).unwrap();
        assert!(browser_control(&tools));
        assert!(!facade_enabled(&tools));
        // A non-object or malformed file turns both off.
        for text in ["[true]", r#""cdpFacade""#, "{not json"] {
            std::fs::write(tools.join(SETTINGS_FILE), text).unwrap();
            assert_eq!(load(&tools).unwrap(), AgentSettings::default(), "{text}");
        }
    }

    #[test]
    fn saving_keeps_unknown_keys_and_unusable_values_and_replaces_a_malformed_file() {
        let (_dir, tools) = agent_tools();
        let path = tools.join(SETTINGS_FILE);
        std::fs::write(&path, r#"{"cdpFacade": "yes", "theme": {"dark": true}, "agentBrowserControl": 7}"#).unwrap();
        save_browser_control(&tools, true).unwrap();
        let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({"cdpFacade": "yes", "theme": {"dark": true}, "agentBrowserControl": true})
        );
        std::fs::write(&path, b"{not json").unwrap();
        save_browser_control(&tools, false).unwrap();
        let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(saved, serde_json::json!({"agentBrowserControl": false}));
    }

    #[test]
    fn a_settings_file_that_cannot_be_read_is_an_error_for_load_and_off_for_the_facade() {
        let (_dir, tools) = agent_tools();
        // A directory in the file's place cannot be read as a file.
        std::fs::create_dir(tools.join(SETTINGS_FILE)).unwrap();
        assert!(load(&tools).is_err());
        assert!(save_browser_control(&tools, true).is_err());
        assert!(!facade_enabled(&tools));
    }
}
