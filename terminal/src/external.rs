//! The user's desktop terminal application, for commands that need a real
//! terminal window outside the canvas (interactive logins, `sudo` prompts):
//! what `terminal_external` launches.
//!
//! The terminal is the one named in `preferences.json` (`externalTerminal`),
//! else the first known one on PATH, Debian's `x-terminal-emulator` first.
//! With no display there is no desktop terminal to open; the caller decides
//! what to do instead. The command runs under a small `sh` script that sets
//! the window title and, when the command ends, says how it ended and waits
//! for Enter, so a failed login leaves its message readable.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::agents::{probe, ExternalTerminalPreference};

/// Terminals tried in order when none is configured, with the arguments that
/// make each run a command given as the remaining arguments.
pub const KNOWN_TERMINALS: &[(&str, &[&str])] = &[
    ("x-terminal-emulator", &["-e"]),
    ("gnome-terminal", &["--"]),
    ("konsole", &["-e"]),
    ("xfce4-terminal", &["-x"]),
    ("kitty", &[]),
    ("alacritty", &["-e"]),
    ("wezterm", &["start", "--"]),
    ("foot", &[]),
    ("xterm", &["-e"]),
];

/// Runs `$2` with the title `$1`, then reports its status and waits for Enter.
const WRAPPER: &str = r#"printf '\033]0;%s\007' "$1"; /bin/sh -c "$2"; s=$?; printf '\n[%s exited with status %s; press Enter to close] ' "$1" "$s"; read _"#;

/// Why no external terminal was launched.
#[derive(Debug, thiserror::Error)]
pub enum ExternalTerminalError {
    /// No X11 or Wayland display, and no terminal configured.
    #[error("there is no display to open a desktop terminal on")]
    NoDisplay,
    /// None of [`KNOWN_TERMINALS`] is on PATH.
    #[error("no desktop terminal found on PATH (looked for {0}); set externalTerminal in preferences.json")]
    NoneFound(String),
    /// The configured terminal is not an executable on PATH.
    #[error("the externalTerminal in preferences.json, {0:?}, was not found on PATH")]
    ConfiguredMissing(String),
    /// Spawning the terminal failed.
    #[error("could not start {program}: {source}")]
    Spawn {
        /// Program that failed.
        program: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// A desktop terminal ready to launch commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalTerminal {
    /// Resolved executable.
    pub program: PathBuf,
    /// Arguments that precede the command.
    pub args: Vec<String>,
}

impl ExternalTerminal {
    /// The configured terminal (which must exist), else with a display the first
    /// known terminal on `path_var`.
    pub fn find(
        preferred: Option<&ExternalTerminalPreference>,
        path_var: Option<&OsStr>,
        display: bool,
    ) -> Result<Self, ExternalTerminalError> {
        if let Some(p) = preferred {
            let program = probe(&p.executable, path_var)
                .map_err(|_| ExternalTerminalError::ConfiguredMissing(p.executable.clone()))?;
            return Ok(Self { program, args: p.args.clone() });
        }
        if !display {
            return Err(ExternalTerminalError::NoDisplay);
        }
        KNOWN_TERMINALS
            .iter()
            .find_map(|(name, args)| {
                probe(name, path_var)
                    .ok()
                    .map(|program| Self { program, args: args.iter().map(|a| (*a).to_owned()).collect() })
            })
            .ok_or_else(|| {
                ExternalTerminalError::NoneFound(KNOWN_TERMINALS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "))
            })
    }

    /// The full argument list that runs `command` titled `title` in this terminal.
    pub fn arguments(&self, title: &str, command: &str) -> Vec<String> {
        let mut args = self.args.clone();
        args.extend(["/bin/sh", "-c", WRAPPER, "termsprawl-external", title, command].map(str::to_owned));
        args
    }

    /// Starts `command` in a new window of this terminal, in `cwd`, detached
    /// from the app (own process group, no stdio); returns its pid once
    /// started. A thread reaps it when it ends, so it never lingers as a zombie.
    pub fn launch(
        &self,
        title: &str,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<u32, ExternalTerminalError> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(&self.program)
            .args(self.arguments(title, command))
            .current_dir(cwd)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|source| ExternalTerminalError::Spawn { program: self.program.display().to_string(), source })?;
        let pid = child.id();
        let spawned = std::thread::Builder::new().name("external-terminal-reaper".into()).spawn(move || {
            let _ = child.wait();
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, pid, "could not start a reaper thread for an external terminal");
        }
        Ok(pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn finds_the_configured_terminal_else_the_first_known_one_with_a_display() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().as_os_str();
        assert!(matches!(ExternalTerminal::find(None, Some(path), false), Err(ExternalTerminalError::NoDisplay)));
        assert!(
            matches!(ExternalTerminal::find(None, Some(path), true), Err(ExternalTerminalError::NoneFound(list)) if list.starts_with("x-terminal-emulator, gnome-terminal"))
        );
        let xterm = executable(dir.path(), "xterm", "exit 0");
        let kitty = executable(dir.path(), "kitty", "exit 0");
        let found = ExternalTerminal::find(None, Some(path), true).unwrap();
        assert_eq!(found, ExternalTerminal { program: kitty, args: vec![] }, "kitty comes before xterm");
        std::fs::remove_file(dir.path().join("kitty")).unwrap();
        assert_eq!(
            ExternalTerminal::find(None, Some(path), true).unwrap(),
            ExternalTerminal { program: xterm.clone(), args: vec!["-e".into()] }
        );

        // A configured terminal is used even without a display, and never silently replaced.
        let pref = ExternalTerminalPreference { executable: "xterm".into(), args: vec!["-hold".into(), "-e".into()] };
        assert_eq!(
            ExternalTerminal::find(Some(&pref), Some(path), false).unwrap(),
            ExternalTerminal { program: xterm, args: vec!["-hold".into(), "-e".into()] }
        );
        let missing = ExternalTerminalPreference { executable: "no-such-term".into(), args: vec![] };
        assert!(
            matches!(ExternalTerminal::find(Some(&missing), Some(path), true), Err(ExternalTerminalError::ConfiguredMissing(n)) if n == "no-such-term")
        );
    }

    #[test]
    fn launches_the_command_with_its_title_and_reports_how_it_ended() {
        let dir = tempfile::tempdir().unwrap();
        // A stand-in terminal: records its arguments, then runs what follows `-e`
        // with Enter already pressed.
        let term = executable(
            dir.path(),
            "fake-term",
            r#"printf '%s\n' "$@" > args.txt; shift; echo | "$@" > screen.txt 2>&1; touch done"#,
        );
        let t = ExternalTerminal { program: term, args: vec!["-e".into()] };
        let env = [("EXTRA".to_owned(), "from-env".to_owned())];
        t.launch("login", "echo hello-$((6*7)) $EXTRA $PWD; exit 3", dir.path(), &env).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !dir.path().join("done").exists() {
            assert!(std::time::Instant::now() < deadline, "the external terminal never finished");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let args = std::fs::read_to_string(dir.path().join("args.txt")).unwrap();
        assert!(args.starts_with("-e\n/bin/sh\n-c\n"), "{args}");
        let screen = std::fs::read_to_string(dir.path().join("screen.txt")).unwrap();
        assert!(screen.starts_with("\x1b]0;login\x07"), "the title is set first: {screen:?}");
        assert!(screen.contains(&format!("hello-42 from-env {}", dir.path().display())), "{screen:?}");
        assert!(screen.contains("[login exited with status 3; press Enter to close]"), "{screen:?}");
    }

    #[test]
    fn a_terminal_that_cannot_start_is_a_clear_error() {
        let t = ExternalTerminal { program: "/nonexistent/term".into(), args: vec![] };
        let e = t.launch("x", "true", Path::new("/"), &[]).unwrap_err();
        assert!(e.to_string().starts_with("could not start /nonexistent/term"), "{e}");
    }
}
