//! The persisted "serve the CDP facade" setting: key `cdpFacade` (true/false)
//! in `agent-tools/settings.json`, next to "Enable agent browser control".

use serde_json::Value;
use std::path::Path;

/// The settings file inside `agent-tools/` (shared with the other agent settings).
pub use super::services::SETTINGS_FILE;
/// The key that turns the facade on.
pub const FACADE_KEY: &str = "cdpFacade";
/// Largest settings file read.
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// Whether the persisted setting asks for the facade. A missing file or key
/// means no; an unreadable or malformed file is reported and also means no
/// (the facade is opt-in, so doubt keeps it off).
pub fn enabled(agent_tools: &Path) -> bool {
    let bytes = match local_guard::files::read_private(agent_tools, SETTINGS_FILE, MAX_SETTINGS_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return false,
        Err(e) => {
            tracing::warn!(error = %e, "{SETTINGS_FILE} not readable; the CDP facade stays off");
            return false;
        }
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => match map.get(FACADE_KEY) {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => {
                tracing::warn!("{SETTINGS_FILE}: {FACADE_KEY} must be true or false; the CDP facade stays off");
                false
            }
        },
        _ => {
            tracing::warn!("{SETTINGS_FILE} is not a JSON object; the CDP facade stays off");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_explicit_true_enables_the_facade() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        assert!(!enabled(&tools));
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
            assert_eq!(enabled(&tools), want, "{text}");
        }
    }

    #[test]
    fn saving_browser_control_keeps_the_facade_setting() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        local_guard::files::ensure_private_dir(&tools).unwrap();
        std::fs::write(tools.join(SETTINGS_FILE), r#"{"cdpFacade": true}"#).unwrap();
        super::super::services::save_browser_control(&tools, true).unwrap();
        assert!(enabled(&tools));
        assert!(super::super::services::load_browser_control(&tools).unwrap());
    }
}
