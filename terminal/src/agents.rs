//! Agent CLIs that can run in a terminal node: the preset registry (with
//! each CLI's install line), the user's `custom` agent from
//! `preferences.json`, probing for the executable and its version, and the
//! quiet-time guess of an agent's state for CLIs that report none. The kinds
//! and states are agent-vocab's, shared with the tool server and the app.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use agent_vocab::{AgentKind, AgentState};

/// Errors about agent configuration or availability.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The agent's executable was not found (or is not executable): the node needs setup.
    #[error("agent executable {looked_for:?} was not found on PATH; install it or set its path")]
    NeedsSetup {
        /// What was searched for.
        looked_for: String,
    },
    /// `preferences.json` exists but cannot be used; nothing is launched.
    #[error("malformed agent preferences {path}: {reason}")]
    MalformedPreferences {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        reason: PreferencesProblem,
    },
    /// `preferences.json` could not be read.
    #[error("could not read agent preferences {path}: {source}")]
    PreferencesIo {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// `custom` was requested but preferences define no custom agent.
    #[error("no custom agent is configured in preferences.json")]
    NoCustomAgent,
    /// The kind is not one the app launches ([`AgentKind::External`]).
    #[error("{0} agents run outside the app")]
    NotLaunchable(AgentKind),
}

/// How a person installs an agent's CLI (each project's documented global
/// npm install; the custom agent is set in preferences.json).
pub fn install_hint(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::Claude => "npm i -g @anthropic-ai/claude-code",
        AgentKind::Codex => "npm i -g @openai/codex",
        AgentKind::Gemini => "npm i -g @google/gemini-cli",
        AgentKind::Grok => "npm i -g @vibe-kit/grok-cli",
        AgentKind::OpenClaude => "npm i -g @gitlawb/openclaude",
        AgentKind::Custom => "set custom in preferences.json",
        AgentKind::External => "it runs outside the app",
    }
}

/// How an initial instruction is handed to an agent at launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstructionStyle {
    /// As the last positional argument (`claude "do X"`).
    Positional,
    /// After a flag (`gemini -i "do X"`).
    Flag(String),
}

/// A resolved agent definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSpec {
    /// Which agent.
    pub kind: AgentKind,
    /// Executable name (looked up on PATH) or absolute path.
    pub executable: String,
    /// How to pass an instruction.
    pub instruction: InstructionStyle,
}

/// The preset registry: (kind, executable, instruction flag; `None` = positional).
/// Each CLI's interactive mode accepts the first prompt this way and keeps running.
pub const AGENT_REGISTRY: [(AgentKind, &str, Option<&str>); 5] = [
    (AgentKind::Claude, "claude", None),
    (AgentKind::Codex, "codex", None),
    (AgentKind::Gemini, "gemini", Some("--prompt-interactive")),
    (AgentKind::Grok, "grok", Some("--prompt")),
    (AgentKind::OpenClaude, "openclaude", None),
];

impl AgentSpec {
    /// The preset for `kind`, or the custom agent from `prefs`.
    pub fn resolve(kind: AgentKind, prefs: &Preferences) -> Result<Self, AgentError> {
        if kind == AgentKind::Custom {
            let custom = prefs.custom.as_ref().ok_or(AgentError::NoCustomAgent)?;
            let instruction = match &custom.instruction_flag {
                Some(flag) => InstructionStyle::Flag(flag.clone()),
                None => InstructionStyle::Positional,
            };
            return Ok(Self { kind, executable: custom.executable.clone(), instruction });
        }
        let (_, executable, flag) =
            AGENT_REGISTRY.iter().find(|(k, _, _)| *k == kind).ok_or(AgentError::NotLaunchable(kind))?;
        let instruction = match flag {
            Some(flag) => InstructionStyle::Flag((*flag).to_owned()),
            None => InstructionStyle::Positional,
        };
        Ok(Self { kind, executable: (*executable).to_owned(), instruction })
    }

    /// Arguments for launching with an optional first instruction.
    pub fn launch_args(&self, instruction: Option<&str>) -> Vec<String> {
        match (instruction.filter(|i| !i.is_empty()), &self.instruction) {
            (None, _) => Vec::new(),
            (Some(text), InstructionStyle::Positional) => vec![text.to_owned()],
            (Some(text), InstructionStyle::Flag(flag)) => vec![flag.clone(), text.to_owned()],
        }
    }
}

/// The custom agent entry of preferences.json.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomAgent {
    /// Executable name or absolute path.
    pub executable: String,
    /// Flag preceding the instruction; positional when absent.
    pub instruction_flag: Option<String>,
}

/// What is wrong with the text of preferences.json.
#[derive(Debug, thiserror::Error)]
pub enum PreferencesProblem {
    /// It is not JSON.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not of the shape read (a message naming the key).
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for PreferencesProblem {
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

impl From<&str> for PreferencesProblem {
    fn from(message: &str) -> Self {
        Self::Invalid(message.to_owned())
    }
}

/// The text of preferences.json; `None` when there is no such file.
fn read_preferences(path: &Path) -> Result<Option<String>, AgentError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AgentError::PreferencesIo { path: path.to_owned(), source }),
    }
}

/// Preferences JSON, which must be an object.
fn preferences_root(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, PreferencesProblem> {
    match serde_json::from_str(text)? {
        serde_json::Value::Object(root) => Ok(root),
        _ => Err("top level must be an object".into()),
    }
}

/// The `executable` of entry `entry` (named `name` in messages): a non-empty string, trimmed, without NUL.
fn executable_of(entry: &serde_json::Map<String, serde_json::Value>, name: &str) -> Result<String, String> {
    match entry.get("executable") {
        Some(serde_json::Value::String(s)) if s.contains('\0') => Err(format!("{name}.executable contains NUL")),
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        Some(serde_json::Value::String(_)) => Err(format!("{name}.executable is empty")),
        Some(_) => Err(format!("{name}.executable must be a string")),
        None => Err(format!("{name}.executable is missing")),
    }
}

/// The user's choice of desktop terminal for `terminal_external`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalTerminalPreference {
    /// Executable name or absolute path.
    pub executable: String,
    /// Arguments that precede the command to run (e.g. `["-e"]`, `["--"]`).
    pub args: Vec<String>,
}

impl ExternalTerminalPreference {
    /// Reads `externalTerminal` from preferences.json: `None` when the file or
    /// the key is absent; an error when it is malformed (other keys are not
    /// read, so a broken custom agent does not stop this, nor the reverse).
    pub fn load(path: &Path) -> Result<Option<Self>, AgentError> {
        match read_preferences(path)? {
            Some(text) => {
                Self::parse(&text).map_err(|reason| AgentError::MalformedPreferences { path: path.to_owned(), reason })
            }
            None => Ok(None),
        }
    }

    /// Parses the `externalTerminal` entry of preferences JSON.
    pub fn parse(text: &str) -> Result<Option<Self>, PreferencesProblem> {
        let root = preferences_root(text)?;
        match root.get("externalTerminal") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Object(t)) => {
                let executable = executable_of(t, "externalTerminal")?;
                let args = match t.get("args") {
                    None | Some(serde_json::Value::Null) => vec![],
                    Some(serde_json::Value::Array(items)) => items
                        .iter()
                        .map(|a| match a {
                            serde_json::Value::String(s) if !s.contains('\0') => Ok(s.clone()),
                            _ => Err("externalTerminal.args must be strings without NUL".to_owned()),
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err("externalTerminal.args must be an array of strings".into()),
                };
                Ok(Some(Self { executable, args }))
            }
            Some(_) => Err("externalTerminal must be an object".into()),
        }
    }
}

/// Agent-related parts of `agent-tools/preferences.json` (other keys are ignored).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preferences {
    /// `{"custom": {"executable": "...", "instructionFlag": "..."}}`.
    pub custom: Option<CustomAgent>,
}

impl Preferences {
    /// Loads preferences; a missing file means defaults, a malformed one is an error.
    pub fn load(path: &Path) -> Result<Self, AgentError> {
        match read_preferences(path)? {
            Some(text) => {
                Self::parse(&text).map_err(|reason| AgentError::MalformedPreferences { path: path.to_owned(), reason })
            }
            None => Ok(Self::default()),
        }
    }

    /// Parses preferences JSON, describing the first problem found.
    pub fn parse(text: &str) -> Result<Self, PreferencesProblem> {
        let root = preferences_root(text)?;
        let custom = match root.get("custom") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Object(custom)) => {
                let executable = executable_of(custom, "custom")?;
                let instruction_flag = match custom.get("instructionFlag") {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(s)) if s.trim().is_empty() => None,
                    Some(serde_json::Value::String(s)) if s.trim().starts_with('-') => Some(s.trim().to_owned()),
                    Some(serde_json::Value::String(_)) => {
                        return Err("custom.instructionFlag must start with '-'".into())
                    }
                    Some(_) => return Err("custom.instructionFlag must be a string".into()),
                };
                Some(CustomAgent { executable, instruction_flag })
            }
            Some(_) => return Err("custom must be an object".into()),
        };
        Ok(Self { custom })
    }
}

/// Finds `executable` on `path_var` (a PATH-style list), or checks it directly when it
/// is an absolute path. Returns the resolved file, or `NeedsSetup`.
pub fn probe(executable: &str, path_var: Option<&OsStr>) -> Result<PathBuf, AgentError> {
    let needs_setup = || AgentError::NeedsSetup { looked_for: executable.to_owned() };
    if executable.is_empty() {
        return Err(needs_setup());
    }
    let candidate = Path::new(executable);
    if candidate.is_absolute() {
        return if is_executable_file(candidate) { Ok(candidate.to_owned()) } else { Err(needs_setup()) };
    }
    // A relative path with a separator would depend on the app's cwd: refuse it.
    if executable.contains('/') {
        return Err(needs_setup());
    }
    let path_var = path_var.ok_or_else(needs_setup)?;
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(executable))
        .find(|file| is_executable_file(file))
        .ok_or_else(needs_setup)
}

/// Why `<cli> --version` gave no version.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    /// The program could not be started.
    #[error("could not run {path} --version: {source}")]
    Spawn {
        /// The executable.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// It did not finish in time (it was killed).
    #[error("{path} --version did not answer within {timeout:?}")]
    Timeout {
        /// The executable.
        path: PathBuf,
        /// The limit.
        timeout: Duration,
    },
    /// It exited unsuccessfully or printed nothing.
    #[error("{path} --version printed no version ({status})")]
    NoVersion {
        /// The executable.
        path: PathBuf,
        /// How it ended.
        status: std::process::ExitStatus,
    },
}

/// Longest version line kept (a CLI that prints a banner is cut short).
const VERSION_CHARS: usize = 60;
/// Most bytes of `--version` output read.
const VERSION_BYTES: u64 = 4096;

/// Runs `executable --version` (stdin closed, stderr discarded) and returns
/// its first non-empty output line; a program still running after `timeout`
/// is killed. Blocking: call it off the UI thread.
pub fn probe_version(executable: &Path, timeout: Duration) -> Result<String, VersionError> {
    let mut child = Command::new(executable)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| VersionError::Spawn { path: executable.to_owned(), source })?;
    let stdout = child.stdout.take();
    // The pipe is read on its own thread so a chatty program cannot block on a
    // full pipe, and a daemon it forked that keeps the pipe open cannot block us.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout {
            // A read error just ends the output early; the exit status still decides.
            let _ = s.take(VERSION_BYTES).read_to_end(&mut out);
        }
        // The receiver may have given up; then nobody wants the output.
        let _ = tx.send(out);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) | Err(_) => {
                // Killing a process that just exited fails harmlessly; wait reaps it either way.
                let _ = child.kill();
                let _ = child.wait();
                return Err(VersionError::Timeout { path: executable.to_owned(), timeout });
            }
        }
    };
    let out = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).unwrap_or_default();
    let text = String::from_utf8_lossy(&out);
    match text.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) if status.success() => Ok(line.chars().take(VERSION_CHARS).collect()),
        _ => Err(VersionError::NoVersion { path: executable.to_owned(), status }),
    }
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The quiet-time guess from timestamps alone: exited wins; otherwise quiet
/// for `idle_after` since the last output means waiting for input; no output
/// yet counts as working.
pub fn quiet_time_guess(now: Instant, last_output: Option<Instant>, exited: bool, idle_after: Duration) -> AgentState {
    if exited {
        return AgentState::Exited;
    }
    match last_output {
        Some(at) if now.saturating_duration_since(at) >= idle_after => AgentState::WaitingForInput,
        _ => AgentState::Working,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_covers_every_preset_and_builds_arguments() {
        let prefs = Preferences::default();
        for kind in AgentKind::LAUNCHABLE.into_iter().filter(|k| *k != AgentKind::Custom) {
            let spec = AgentSpec::resolve(kind, &prefs).unwrap();
            assert_eq!(kind.as_str().parse::<AgentKind>().unwrap(), kind);
            assert!(!spec.executable.is_empty());
        }
        let claude = AgentSpec::resolve(AgentKind::Claude, &prefs).unwrap();
        assert_eq!(claude.launch_args(Some("fix it")), vec!["fix it"]);
        assert!(claude.launch_args(None).is_empty());
        let gemini = AgentSpec::resolve(AgentKind::Gemini, &prefs).unwrap();
        assert_eq!(gemini.launch_args(Some("hi")), vec!["--prompt-interactive", "hi"]);
        assert!(matches!(AgentSpec::resolve(AgentKind::Custom, &prefs), Err(AgentError::NoCustomAgent)));
        assert!("vim".parse::<AgentKind>().is_err());
        let external = AgentSpec::resolve(AgentKind::External, &prefs).unwrap_err();
        assert_eq!(external.to_string(), "external agents run outside the app");
    }

    #[test]
    fn every_agent_says_how_to_install_it() {
        for kind in AgentKind::LAUNCHABLE {
            let hint = install_hint(kind);
            if kind == AgentKind::Custom {
                assert!(hint.contains("preferences.json"));
            } else {
                assert!(hint.starts_with("npm i -g @"), "{hint}");
            }
        }
    }

    /// An executable script, written by a child `sh`: a file this process had
    /// open for writing would be inherited by a child another test thread
    /// forks at that moment, and executing it would then fail with ETXTBSY.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::io::Write;
        let p = dir.join(name);
        let mut writer = Command::new("sh")
            .args(["-c", r#"cat > "$1" && chmod 755 "$1""#, "sh"])
            .arg(&p)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        writer.stdin.take().unwrap().write_all(format!("#!/bin/sh\n{body}\n").as_bytes()).unwrap();
        assert!(writer.wait().unwrap().success());
        p
    }

    #[test]
    fn version_is_the_first_line_printed_and_a_hung_cli_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let ok = script(dir.path(), "ok", r#"[ "$1" = --version ] && printf '\n  2.1.332 (Claude Code)\nmore\n'"#);
        assert_eq!(probe_version(&ok, Duration::from_secs(10)).unwrap(), "2.1.332 (Claude Code)");
        let silent = script(dir.path(), "silent", "exit 0");
        assert!(matches!(probe_version(&silent, Duration::from_secs(10)), Err(VersionError::NoVersion { .. })));
        let failing = script(dir.path(), "failing", "echo 1.0; exit 2");
        assert!(matches!(probe_version(&failing, Duration::from_secs(10)), Err(VersionError::NoVersion { .. })));
        let hung = script(dir.path(), "hung", "exec sleep 30");
        assert!(matches!(probe_version(&hung, Duration::from_millis(200)), Err(VersionError::Timeout { .. })));
        assert!(matches!(
            probe_version(&dir.path().join("none"), Duration::from_secs(1)),
            Err(VersionError::Spawn { .. })
        ));
    }

    #[test]
    fn custom_agent_from_preferences() {
        let prefs = Preferences::parse(
            r#"{"custom":{"executable":"my-agent","instructionFlag":"--task"},"externalTerminal":"x"}"#,
        )
        .unwrap();
        let spec = AgentSpec::resolve(AgentKind::Custom, &prefs).unwrap();
        assert_eq!(spec.executable, "my-agent");
        assert_eq!(spec.launch_args(Some("go")), vec!["--task", "go"]);
        let positional = Preferences::parse(r#"{"custom":{"executable":"a"}}"#).unwrap();
        assert_eq!(positional.custom.unwrap().instruction_flag, None);
        assert_eq!(Preferences::parse("{}").unwrap(), Preferences::default());
    }

    #[test]
    fn external_terminal_from_preferences() {
        let text = r#"{"custom":{"executable":5},"externalTerminal":{"executable":"kitty","args":["--hold"]}}"#;
        let t = ExternalTerminalPreference::parse(text).unwrap().unwrap();
        assert_eq!(t, ExternalTerminalPreference { executable: "kitty".into(), args: vec!["--hold".into()] });
        assert!(Preferences::parse(text).is_err(), "the broken custom agent is still reported to its own reader");
        assert_eq!(
            ExternalTerminalPreference::parse(r#"{"externalTerminal":{"executable":"xterm"}}"#).unwrap().unwrap().args,
            Vec::<String>::new()
        );
        assert_eq!(ExternalTerminalPreference::parse("{}").unwrap(), None);
        for (text, needle) in [
            (r#"{"externalTerminal":"xterm"}"#, "must be an object"),
            (r#"{"externalTerminal":{}}"#, "executable is missing"),
            (r#"{"externalTerminal":{"executable":""}}"#, "empty"),
            (r#"{"externalTerminal":{"executable":"x","args":"-e"}}"#, "array of strings"),
            (r#"{"externalTerminal":{"executable":"x","args":[1]}}"#, "must be strings"),
        ] {
            let err = ExternalTerminalPreference::parse(text).unwrap_err();
            assert!(err.to_string().contains(needle), "{text}: {err}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ExternalTerminalPreference::load(&dir.path().join("missing.json")).unwrap(), None);
    }

    #[test]
    fn malformed_preferences_are_rejected_with_a_reason() {
        for (text, needle) in [
            ("not json", "invalid JSON"),
            ("[]", "top level"),
            (r#"{"custom":"claude"}"#, "custom must be an object"),
            (r#"{"custom":{}}"#, "executable is missing"),
            (r#"{"custom":{"executable":5}}"#, "must be a string"),
            (r#"{"custom":{"executable":"  "}}"#, "empty"),
            (r#"{"custom":{"executable":"a","instructionFlag":3}}"#, "instructionFlag must be a string"),
            (r#"{"custom":{"executable":"a","instructionFlag":"task"}}"#, "start with '-'"),
        ] {
            let err = Preferences::parse(text).unwrap_err();
            assert!(err.to_string().contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn preferences_that_are_not_json_keep_serde_json_s_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preferences.json");
        std::fs::write(&path, "not json").unwrap();
        let json = serde_json::from_str::<serde_json::Value>("not json").unwrap_err();
        let err = Preferences::load(&path).unwrap_err();
        let expected = format!("malformed agent preferences {}: invalid JSON: {json}", path.display());
        assert_eq!(err.to_string(), expected, "the message is as before");
        let reason = std::error::Error::source(&err).expect("the problem is the source");
        assert!(matches!(reason.downcast_ref(), Some(PreferencesProblem::Json(_))), "{reason:?}");
        assert_eq!(reason.source().map(ToString::to_string), Some(json.to_string()));
    }

    #[test]
    fn status_is_a_function_of_timestamps() {
        let t0 = Instant::now();
        let idle = Duration::from_secs(5);
        assert_eq!(quiet_time_guess(t0, None, false, idle), AgentState::Working);
        assert_eq!(quiet_time_guess(t0 + Duration::from_secs(4), Some(t0), false, idle), AgentState::Working);
        assert_eq!(quiet_time_guess(t0 + Duration::from_secs(5), Some(t0), false, idle), AgentState::WaitingForInput);
        assert_eq!(quiet_time_guess(t0 + Duration::from_secs(9), Some(t0), true, idle), AgentState::Exited);
        // A clock reading before the last output (different sources) is not "idle".
        assert_eq!(quiet_time_guess(t0, Some(t0 + Duration::from_secs(1)), false, idle), AgentState::Working);
    }
}
