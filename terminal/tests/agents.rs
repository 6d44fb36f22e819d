//! Agent probing against real files on a temporary PATH, and preferences files.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;

use terminal::agents::{probe, AgentError, AgentKind, AgentSpec, Preferences};

fn write_script(dir: &std::path::Path, name: &str, mode: u32) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\necho fake agent \"$@\"\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[test]
fn finds_an_executable_agent_on_path() {
    let empty = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let script = write_script(bin.path(), "claude", 0o755);
    let path_var = std::env::join_paths([empty.path(), bin.path()]).unwrap();
    assert_eq!(probe("claude", Some(&path_var)).unwrap(), script);
    // An absolute path is checked directly.
    assert_eq!(probe(script.to_str().unwrap(), None).unwrap(), script);
}

#[test]
fn missing_or_unusable_agents_need_setup() {
    let bin = tempfile::tempdir().unwrap();
    write_script(bin.path(), "codex", 0o644);
    std::fs::create_dir(bin.path().join("gemini")).unwrap();
    let path_var: OsString = bin.path().as_os_str().to_owned();
    for name in ["codex", "gemini", "grok", "", "./codex"] {
        match probe(name, Some(&path_var)) {
            Err(AgentError::NeedsSetup { looked_for }) => assert_eq!(looked_for, name),
            other => panic!("{name}: expected NeedsSetup, got {other:?}"),
        }
    }
    assert!(matches!(probe("codex", None), Err(AgentError::NeedsSetup { .. })));
    let missing_abs = bin.path().join("nope");
    assert!(matches!(probe(missing_abs.to_str().unwrap(), None), Err(AgentError::NeedsSetup { .. })));
}

#[test]
fn custom_agent_comes_from_preferences_json() {
    let dir = tempfile::tempdir().unwrap();
    let prefs_path = dir.path().join("preferences.json");
    assert_eq!(Preferences::load(&prefs_path).unwrap(), Preferences::default());

    let bin = tempfile::tempdir().unwrap();
    let script = write_script(bin.path(), "my-agent", 0o755);
    std::fs::write(&prefs_path, r#"{"custom":{"executable":"my-agent","instructionFlag":"--task"}}"#).unwrap();
    let prefs = Preferences::load(&prefs_path).unwrap();
    let spec = AgentSpec::resolve(AgentKind::Custom, &prefs).unwrap();
    assert_eq!(probe(&spec.executable, Some(bin.path().as_os_str())).unwrap(), script);
    assert_eq!(spec.launch_args(Some("write tests")), vec!["--task", "write tests"]);
}

#[test]
fn malformed_preferences_json_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let prefs_path = dir.path().join("preferences.json");
    std::fs::write(&prefs_path, r#"{"custom":{"executable":"#).unwrap();
    match Preferences::load(&prefs_path) {
        Err(AgentError::MalformedPreferences { path, reason }) => {
            assert_eq!(path, prefs_path);
            assert!(reason.to_string().contains("invalid JSON"), "{reason}");
        }
        other => panic!("expected MalformedPreferences, got {other:?}"),
    }
    std::fs::write(&prefs_path, r#"{"custom":{"executable":["a"]}}"#).unwrap();
    let err = Preferences::load(&prefs_path).unwrap_err();
    assert!(err.to_string().contains("custom.executable must be a string"), "{err}");
}
