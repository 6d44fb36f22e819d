//! Which CLI an agent node runs: the terminal crate's registry (and
//! `agent-tools/preferences.json` for `custom`), probed on PATH.

use super::status::NotLaunched;
use crate::model::AgentKind;
use std::path::{Path, PathBuf};
use terminal::agent_login::{self, Login};
use terminal::agents::{self, AgentError, AgentSpec, Preferences};

/// Resolves and probes an agent: its executable (absolute) and spec, or why
/// it cannot start (not installed, or a preset not logged in; `var` gives the
/// environment and `HOME` its login is looked for in).
pub fn resolve_agent(
    kind: AgentKind,
    preferences: &Path,
    path_var: Option<&std::ffi::OsStr>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<(AgentSpec, PathBuf), NotLaunched> {
    if !kind.is_launchable() {
        return Err(NotLaunched::Misconfigured(AgentError::NotLaunchable(kind).to_string()));
    }
    // Presets never read preferences.json: a broken file only stops the custom agent.
    let prefs = if kind == AgentKind::Custom {
        Preferences::load(preferences).map_err(|e| NotLaunched::Misconfigured(e.to_string()))?
    } else {
        Preferences::default()
    };
    let spec = AgentSpec::resolve(kind, &prefs).map_err(|e| NotLaunched::Misconfigured(e.to_string()))?;
    match agents::probe(&spec.executable, path_var) {
        Ok(path) => match agent_login::check(kind, var) {
            Login::Missing { how } => Err(NotLaunched::NeedsLogin { agent: kind.to_string(), how }),
            Login::Found | Login::Unchecked => Ok((spec, path)),
        },
        Err(AgentError::NeedsSetup { looked_for }) => Err(NotLaunched::NeedsSetup { looked_for }),
        Err(e) => Err(NotLaunched::Misconfigured(e.to_string())),
    }
}

/// Test helper: an executable shell script `name` in `dir`.
#[cfg(test)]
pub(super) fn fake_executable(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = dir.join(name);
    std::fs::write(&exe, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_resolution_reports_missing_and_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let prefs = dir.path().join("preferences.json");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let path = std::ffi::OsString::from(bin.as_os_str());
        match resolve_agent(AgentKind::Codex, &prefs, Some(&path), &|_| None) {
            Err(NotLaunched::NeedsSetup { looked_for }) => assert_eq!(looked_for, "codex"),
            other => panic!("{other:?}"),
        }
        let exe = fake_executable(&bin, "codex");
        let (spec, found) = resolve_agent(AgentKind::Codex, &prefs, Some(&path), &|_| None).unwrap();
        assert_eq!((spec.executable.as_str(), found), ("codex", exe));
        std::fs::write(&prefs, "{\"custom\": {\"executable\": 3}}").unwrap();
        match resolve_agent(AgentKind::Custom, &prefs, Some(&path), &|_| None) {
            Err(NotLaunched::Misconfigured(why)) => assert!(why.contains("malformed agent preferences"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            resolve_agent(AgentKind::External, &prefs, Some(&path), &|_| None),
            Err(NotLaunched::Misconfigured(_))
        ));
    }

    #[test]
    fn an_installed_preset_without_a_login_needs_setup_and_custom_is_not_checked() {
        let dir = tempfile::tempdir().unwrap();
        let (home, bin) = (dir.path().join("home"), dir.path().join("bin"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir(&bin).unwrap();
        fake_executable(&bin, "codex");
        let path = std::ffi::OsString::from(bin.as_os_str());
        let prefs = dir.path().join("preferences.json");
        let home_var = home.display().to_string();
        let var = move |name: &str| (name == "HOME").then(|| home_var.clone());
        match resolve_agent(AgentKind::Codex, &prefs, Some(&path), &var) {
            Err(why @ NotLaunched::NeedsLogin { .. }) => assert_eq!(
                why.message(),
                "needs setup: codex is not logged in; run `codex login` (or set OPENAI_API_KEY), then reopen this node"
            ),
            other => panic!("{other:?}"),
        }
        std::fs::create_dir(home.join(".codex")).unwrap();
        std::fs::write(home.join(".codex/auth.json"), "{}").unwrap();
        assert!(resolve_agent(AgentKind::Codex, &prefs, Some(&path), &var).is_ok(), "logged in by `codex login`");
        let exe = fake_executable(&bin, "mine");
        std::fs::write(&prefs, serde_json::json!({"custom": {"executable": exe}}).to_string()).unwrap();
        assert!(
            resolve_agent(AgentKind::Custom, &prefs, Some(&path), &var).is_ok(),
            "custom agents have no login check"
        );
    }
}
