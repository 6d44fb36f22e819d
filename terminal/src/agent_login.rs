//! Whether a registry agent's CLI has a login: the files and variables each
//! CLI reads its credentials from, checked for existence and non-emptiness
//! only. Nothing is read into memory beyond the JSON keys that say a login is
//! configured (their values are never kept, logged or compared).
//!
//! Where each CLI keeps its login (from the CLIs' own documentation):
//! - claude: `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `CLAUDE_CODE_OAUTH_TOKEN`
//!   (from `claude setup-token`), Bedrock/Vertex switches, `.credentials.json`
//!   in `$CLAUDE_CONFIG_DIR` or `~/.claude` (from `/login`), `apiKeyHelper` or
//!   a key in its `settings.json` `env`, or `primaryApiKey` in `~/.claude.json`.
//! - codex: `OPENAI_API_KEY`, `CODEX_API_KEY`, or `$CODEX_HOME/auth.json`
//!   (`~/.codex/auth.json`, from `codex login`).
//! - gemini: `GEMINI_API_KEY`, `GOOGLE_API_KEY`, Vertex AI settings, or
//!   `~/.gemini/oauth_creds.json` (Login with Google) or `~/.gemini/.env`.
//! - grok: `GROK_API_KEY`, `XAI_API_KEY`, or `apiKey` in `~/.grok/user-settings.json`.
//! - openclaude: any provider key it accepts (`OPENAI_API_KEY`, `GEMINI_API_KEY`,
//!   `ANTHROPIC_API_KEY`, …), `OPENAI_BASE_URL` (a local model needs no key), or
//!   a saved `~/.openclaude-profile.json`.

use std::path::{Path, PathBuf};

use crate::agents::AgentKind;

/// What the login check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// A login is configured.
    Found,
    /// None is: how a person logs in.
    Missing {
        /// The command (or setting) that logs the CLI in.
        how: &'static str,
    },
    /// Not checked: the custom agent, or no home directory to look in.
    Unchecked,
}

/// Checks `kind`'s login in `var`'s environment (which also gives `HOME`).
pub fn check(kind: AgentKind, var: &dyn Fn(&str) -> Option<String>) -> Login {
    let Some(home) = var("HOME").filter(|h| Path::new(h).is_absolute()).map(PathBuf::from) else {
        return Login::Unchecked;
    };
    let set = |name: &str| var(name).is_some_and(|v| !v.trim().is_empty());
    let any_set = |names: &[&str]| names.iter().any(|n| set(n));
    let found = match kind {
        AgentKind::Custom | AgentKind::External => return Login::Unchecked,
        AgentKind::Claude => {
            let config =
                var("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()).map_or_else(|| home.join(".claude"), PathBuf::from);
            any_set(&[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
                "CLAUDE_CODE_USE_BEDROCK",
                "CLAUDE_CODE_USE_VERTEX",
            ]) || non_empty(&config.join(".credentials.json"))
                || json_has(&config.join("settings.json"), &["apiKeyHelper"])
                || json_has(&config.join("settings.json"), &["env", "ANTHROPIC_API_KEY"])
                || json_has(&config.join("settings.json"), &["env", "ANTHROPIC_AUTH_TOKEN"])
                || json_has(&home.join(".claude.json"), &["primaryApiKey"])
        }
        AgentKind::Codex => {
            let dir = var("CODEX_HOME").filter(|d| !d.is_empty()).map_or_else(|| home.join(".codex"), PathBuf::from);
            any_set(&["OPENAI_API_KEY", "CODEX_API_KEY"]) || non_empty(&dir.join("auth.json"))
        }
        AgentKind::Gemini => {
            any_set(&[
                "GEMINI_API_KEY",
                "GOOGLE_API_KEY",
                "GOOGLE_GENAI_USE_VERTEXAI",
                "GOOGLE_APPLICATION_CREDENTIALS",
            ]) || non_empty(&home.join(".gemini/oauth_creds.json"))
                || non_empty(&home.join(".gemini/.env"))
        }
        AgentKind::Grok => {
            any_set(&["GROK_API_KEY", "XAI_API_KEY"]) || json_has(&home.join(".grok/user-settings.json"), &["apiKey"])
        }
        AgentKind::OpenClaude => {
            any_set(&[
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "GEMINI_API_KEY",
                "GOOGLE_API_KEY",
                "ANTHROPIC_API_KEY",
                "CODEX_API_KEY",
            ]) || non_empty(&home.join(".openclaude-profile.json"))
        }
    };
    if found {
        Login::Found
    } else {
        Login::Missing { how: login_hint(kind) }
    }
}

/// How a person logs `kind`'s CLI in.
pub fn login_hint(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::Claude => "run `claude /login` (or `claude setup-token`, or set ANTHROPIC_API_KEY)",
        AgentKind::Codex => "run `codex login` (or set OPENAI_API_KEY)",
        AgentKind::Gemini => "run `gemini` and choose Login with Google (or set GEMINI_API_KEY)",
        AgentKind::Grok => "set GROK_API_KEY (an xAI API key)",
        AgentKind::OpenClaude => {
            "set CLAUDE_CODE_USE_OPENAI=1 and OPENAI_API_KEY (or run `openclaude` and choose /provider)"
        }
        AgentKind::Custom => "log it in as its own documentation says",
        AgentKind::External => "it runs outside the app, logged in there",
    }
}

/// Whether `path` is a file with something in it.
fn non_empty(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// Whether the JSON file at `path` has a non-empty string (or any non-null,
/// non-string value) at `keys`. Unreadable or malformed files have nothing.
fn json_has(path: &Path, keys: &[&str]) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    for key in keys {
        match value.get_mut(*key) {
            Some(inner) => value = inner.take(),
            None => return false,
        }
    }
    match value {
        serde_json::Value::String(s) => !s.trim().is_empty(),
        serde_json::Value::Null => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(home: &Path, vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let mut map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        map.insert("HOME".into(), home.display().to_string());
        move |name| map.get(name).cloned()
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_fresh_home_has_no_login_for_any_preset_and_custom_is_never_checked() {
        let home = tempfile::tempdir().unwrap();
        for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Gemini, AgentKind::Grok, AgentKind::OpenClaude] {
            assert_eq!(check(kind, &env(home.path(), &[])), Login::Missing { how: login_hint(kind) }, "{kind:?}");
        }
        assert_eq!(check(AgentKind::Custom, &env(home.path(), &[])), Login::Unchecked);
        assert_eq!(check(AgentKind::Claude, &|_: &str| None), Login::Unchecked, "no HOME, nothing to look in");
        assert!(login_hint(AgentKind::Claude).contains("claude /login"));
        assert!(login_hint(AgentKind::Codex).contains("codex login"));
    }

    #[test]
    fn claude_logins_in_files_settings_and_variables() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let claude = |vars: &[(&str, &str)]| check(AgentKind::Claude, &env(h, vars));
        assert_eq!(claude(&[("ANTHROPIC_API_KEY", "k")]), Login::Found);
        assert_eq!(claude(&[("CLAUDE_CODE_OAUTH_TOKEN", "t")]), Login::Found);
        assert!(matches!(claude(&[("ANTHROPIC_API_KEY", "  ")]), Login::Missing { .. }), "blank is not a key");
        write(&h.join(".claude/.credentials.json"), "");
        assert!(matches!(claude(&[]), Login::Missing { .. }), "an empty credentials file is no login");
        write(&h.join(".claude/.credentials.json"), "{\"claudeAiOauth\":{}}");
        assert_eq!(claude(&[]), Login::Found);
        std::fs::remove_file(h.join(".claude/.credentials.json")).unwrap();
        write(&h.join(".claude/settings.json"), r#"{"apiKeyHelper": ""}"#);
        assert!(matches!(claude(&[]), Login::Missing { .. }));
        write(&h.join(".claude/settings.json"), r#"{"apiKeyHelper": "~/bin/key.sh"}"#);
        assert_eq!(claude(&[]), Login::Found);
        write(&h.join(".claude/settings.json"), "not json");
        assert!(matches!(claude(&[]), Login::Missing { .. }), "malformed settings hold no login");
        let elsewhere = h.join("cfg");
        write(&elsewhere.join(".credentials.json"), "{}");
        assert_eq!(claude(&[("CLAUDE_CONFIG_DIR", elsewhere.to_str().unwrap())]), Login::Found);
        write(&h.join(".claude.json"), r#"{"primaryApiKey": "x"}"#);
        assert_eq!(claude(&[]), Login::Found);
    }

    #[test]
    fn codex_gemini_grok_and_openclaude_logins() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        assert_eq!(check(AgentKind::Codex, &env(h, &[("OPENAI_API_KEY", "k")])), Login::Found);
        let codex_home = h.join("ch");
        write(&codex_home.join("auth.json"), "{}");
        assert!(matches!(check(AgentKind::Codex, &env(h, &[])), Login::Missing { .. }));
        assert_eq!(check(AgentKind::Codex, &env(h, &[("CODEX_HOME", codex_home.to_str().unwrap())])), Login::Found);
        write(&h.join(".codex/auth.json"), "{}");
        assert_eq!(check(AgentKind::Codex, &env(h, &[])), Login::Found);

        assert_eq!(check(AgentKind::Gemini, &env(h, &[("GEMINI_API_KEY", "k")])), Login::Found);
        write(&h.join(".gemini/oauth_creds.json"), "{}");
        assert_eq!(check(AgentKind::Gemini, &env(h, &[])), Login::Found);

        write(&h.join(".grok/user-settings.json"), r#"{"defaultModel": "grok-4"}"#);
        assert!(matches!(check(AgentKind::Grok, &env(h, &[])), Login::Missing { .. }), "settings without a key");
        write(&h.join(".grok/user-settings.json"), r#"{"apiKey": "xai-1"}"#);
        assert_eq!(check(AgentKind::Grok, &env(h, &[])), Login::Found);
        assert_eq!(check(AgentKind::Grok, &env(h, &[("XAI_API_KEY", "k")])), Login::Found);

        assert_eq!(
            check(AgentKind::OpenClaude, &env(h, &[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")])),
            Login::Found
        );
        write(&h.join(".openclaude-profile.json"), "{}");
        assert_eq!(check(AgentKind::OpenClaude, &env(h, &[])), Login::Found);
    }
}
