//! What the window's "New agent" offers: every registry agent and the custom
//! one, each with what the probe found — installed (where, and the version
//! `<cli> --version` printed, and whether it is logged in) or how to install it.
//!
//! The version is asked once per executable file (its path and modification
//! time, so an upgrade is asked again), on a thread of its own with a short
//! timeout; the UI thread only reads the cache, and is woken when an answer
//! arrives.

use super::agent_nodes::{install_hint, resolve_cli, AgentUnavailable};
use super::Waker;
use crate::model::AgentKind;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long `<cli> --version` may take (node-based CLIs start in about a second).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// The agents a person can start from the window, in menu order.
pub const LAUNCHABLE: [AgentKind; 6] =
    [AgentKind::Claude, AgentKind::Codex, AgentKind::Gemini, AgentKind::Grok, AgentKind::OpenClaude, AgentKind::Custom];

/// What `--version` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Version {
    /// Still being asked.
    Probing,
    /// Its first output line.
    Known(String),
    /// It gave none (why).
    Unknown(String),
}

/// What the probe found for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Installed at `executable`.
    Installed {
        /// The resolved executable.
        executable: PathBuf,
        /// Its version.
        version: Version,
    },
    /// Installed at `executable` but not logged in: how to log in.
    NotLoggedIn {
        /// The resolved executable.
        executable: PathBuf,
        /// Its version.
        version: Version,
        /// How to log it in.
        how: &'static str,
    },
    /// Not installed: how to install it.
    Missing {
        /// The install line (or, for custom, where to set it).
        install: &'static str,
    },
    /// Cannot be used as configured (malformed preferences.json).
    Misconfigured(String),
}

/// One "New agent" entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentOffer {
    /// The agent.
    pub kind: AgentKind,
    /// What the probe found.
    pub availability: Availability,
}

impl AgentOffer {
    /// Whether choosing it can start the agent.
    pub fn installed(&self) -> bool {
        matches!(self.availability, Availability::Installed { .. })
    }

    /// What the entry says after the agent's name.
    pub fn summary(&self) -> String {
        match &self.availability {
            Availability::Installed { version: Version::Known(v), .. } => v.clone(),
            Availability::Installed { version: Version::Probing, executable } => {
                format!("installed ({}), checking its version…", executable.display())
            }
            Availability::Installed { version: Version::Unknown(_), executable } => {
                format!("installed ({})", executable.display())
            }
            Availability::NotLoggedIn { version: Version::Known(v), .. } => format!("installed {v} · not logged in"),
            Availability::NotLoggedIn { executable, .. } => {
                format!("installed ({}) · not logged in", executable.display())
            }
            Availability::Missing { install } if self.kind == AgentKind::Custom => {
                format!("not configured: {install}")
            }
            Availability::Missing { install } => format!("not installed: {install}"),
            Availability::Misconfigured(why) => why.clone(),
        }
    }
}

type CacheKey = (PathBuf, Option<SystemTime>);

/// The probe's version cache (cheap to clone: the clones share it).
#[derive(Clone, Default)]
pub struct AgentCatalog {
    versions: Arc<Mutex<HashMap<CacheKey, Version>>>,
    /// Counts answers, so a reader knows to refresh what it shows.
    answers: Arc<AtomicU64>,
}

impl AgentCatalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many version answers have arrived (changes when an entry changes).
    pub fn answers(&self) -> u64 {
        self.answers.load(Ordering::Acquire)
    }

    /// Every launchable agent with what the probe finds now; versions not yet
    /// known are asked for on a thread, which wakes `waker` when it answers.
    pub fn offers(&self, agent_tools: &Path, waker: &Arc<Waker>) -> Vec<AgentOffer> {
        LAUNCHABLE
            .into_iter()
            .map(|kind| AgentOffer { kind, availability: self.probe(kind, agent_tools, waker) })
            .collect()
    }

    fn probe(&self, kind: AgentKind, agent_tools: &Path, waker: &Arc<Waker>) -> Availability {
        let (executable, login) = match resolve_cli(kind, agent_tools) {
            Ok(exe) => (exe, None),
            Err(AgentUnavailable::NotLoggedIn { executable, how, .. }) => (executable, Some(how)),
            Err(AgentUnavailable::NotInstalled { install, .. }) => return Availability::Missing { install },
            Err(AgentUnavailable::Misconfigured(_)) if kind == AgentKind::Custom && !custom_configured(agent_tools) => {
                return Availability::Missing { install: install_hint(kind) }
            }
            Err(AgentUnavailable::Misconfigured(why)) => return Availability::Misconfigured(why),
        };
        let mtime = std::fs::metadata(&executable).and_then(|m| m.modified()).ok();
        let key = (executable.clone(), mtime);
        let version = {
            let mut versions = self.versions.lock();
            match versions.get(&key) {
                Some(v) => v.clone(),
                None => {
                    versions.insert(key.clone(), Version::Probing);
                    self.ask_version(key, waker.clone());
                    Version::Probing
                }
            }
        };
        match login {
            None => Availability::Installed { executable, version },
            Some(how) => Availability::NotLoggedIn { executable, version, how },
        }
    }

    fn ask_version(&self, key: CacheKey, waker: Arc<Waker>) {
        let versions = self.versions.clone();
        let answers = self.answers.clone();
        let spawned = std::thread::Builder::new().name("agent-version".into()).spawn(move || {
            let version = match terminal::agents::probe_version(&key.0, VERSION_TIMEOUT) {
                Ok(v) => Version::Known(v),
                Err(e) => {
                    tracing::debug!(executable = %key.0.display(), "no version: {e}");
                    Version::Unknown(e.to_string())
                }
            };
            versions.lock().insert(key, version);
            answers.fetch_add(1, Ordering::AcqRel);
            waker.wake();
        });
        if let Err(e) = spawned {
            tracing::warn!("agent version not asked: {e}");
        }
    }
}

/// Whether preferences.json names a custom agent (malformed counts as named: its error is shown).
fn custom_configured(agent_tools: &Path) -> bool {
    match terminal::agents::Preferences::load(&agent_tools.join("preferences.json")) {
        Ok(p) => p.custom.is_some(),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn wait_for_answers(catalog: &AgentCatalog, n: u64, waker: &Waker) {
        let end = Instant::now() + Duration::from_secs(30);
        while catalog.answers() < n {
            assert!(Instant::now() < end, "no version answer");
            waker.wait_until(Instant::now() + Duration::from_millis(20));
        }
    }

    #[test]
    fn offers_say_installed_with_version_or_how_to_install_and_versions_are_cached_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("agent-tools");
        std::fs::create_dir(&tools).unwrap();
        let waker = Waker::new();
        let catalog = AgentCatalog::new();
        let custom = |c: &AgentCatalog| c.offers(&tools, &waker).pop().unwrap();
        assert_eq!(custom(&catalog).summary(), "not configured: set custom in preferences.json");
        assert!(!custom(&catalog).installed());

        let exe = dir.path().join("my-agent");
        let counter = dir.path().join("asked");
        let script = format!("#!/bin/sh\necho x >> '{}'\necho 'my-agent 1.2.3'\n", counter.display());
        std::fs::write(&exe, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(tools.join("preferences.json"), serde_json::json!({"custom": {"executable": exe}}).to_string())
            .unwrap();
        let first = custom(&catalog);
        assert!(first.installed());
        assert_eq!(first.availability, Availability::Installed { executable: exe.clone(), version: Version::Probing });
        assert!(first.summary().starts_with("installed ("), "{}", first.summary());
        wait_for_answers(&catalog, 1, &waker);
        assert_eq!(custom(&catalog).summary(), "my-agent 1.2.3");
        assert_eq!(custom(&catalog).summary(), "my-agent 1.2.3");
        assert_eq!(std::fs::read_to_string(&counter).unwrap().lines().count(), 1, "asked once per file");

        std::fs::write(tools.join("preferences.json"), r#"{"custom": {"executable": 7}}"#).unwrap();
        assert!(matches!(custom(&catalog).availability, Availability::Misconfigured(_)));
        let offers = catalog.offers(&tools, &waker);
        assert_eq!(offers.iter().map(|o| o.kind).collect::<Vec<_>>(), LAUNCHABLE);
    }

    #[test]
    fn an_installed_preset_without_a_login_says_so_after_its_version() {
        let offer = |version| AgentOffer {
            kind: AgentKind::Claude,
            availability: Availability::NotLoggedIn {
                executable: "/opt/bin/claude".into(),
                version,
                how: terminal::agent_login::login_hint(AgentKind::Claude),
            },
        };
        assert_eq!(offer(Version::Known("2.1.332".into())).summary(), "installed 2.1.332 · not logged in");
        assert_eq!(offer(Version::Probing).summary(), "installed (/opt/bin/claude) · not logged in");
        assert!(!offer(Version::Probing).installed(), "choosing it would only say how to log in");
    }

    #[test]
    fn a_missing_preset_says_its_npm_package() {
        let offer = AgentOffer {
            kind: AgentKind::Gemini,
            availability: Availability::Missing { install: install_hint(AgentKind::Gemini) },
        };
        assert_eq!(offer.summary(), "not installed: npm i -g @google/gemini-cli");
    }
}
