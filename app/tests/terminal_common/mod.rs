//! Shared helpers for the terminal end-to-end tests: the real `termsprawl
//! --headless` binary started and stopped (SIGTERM) like a person would,
//! project layouts written to disk, and the app's private tmux socket.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use termsprawl::model::{persist, Camera, Node, NodeId, Project, ProjectId};

/// How long app start-up, shutdown and screen updates may take before a test gives up.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// Polls `f` every 100 ms until it returns `Some` or `PATIENCE` passes.
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + PATIENCE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A short temp dir under /tmp (the tmux socket path must fit in 104 bytes) whose tmux servers end with it.
pub fn short_tempdir() -> crate::support::TestRoot {
    crate::support::TestRoot::short("tsp")
}

/// Writes a project layout with `nodes` into `folder` and returns the folder as the app will see it.
pub fn write_project(folder: &Path, nodes: Vec<Node>) -> PathBuf {
    std::fs::create_dir_all(folder).expect("project folder");
    let n = nodes.len() as i64;
    let (project, repairs) =
        Project::from_nodes(ProjectId::generate(), "proj", folder, Camera::default(), nodes, n).expect("project");
    assert!(repairs.is_empty(), "{repairs:?}");
    persist::save_layout(&project, None).expect("save layout");
    persist::normalise(folder)
}

/// A running headless app.
pub struct App {
    child: Option<Child>,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl App {
    /// Starts `termsprawl --headless --data-dir DATA --project FOLDER` with extra env and
    /// waits until it reports it is up.
    pub fn start(data: &Path, folder: &Path, env: &[(&str, &str)]) -> App {
        Self::start_with(data, folder, &[], env)
    }

    /// [`App::start`] with extra command-line arguments (e.g. `--agent NODE`).
    pub fn start_with(data: &Path, folder: &Path, args: &[&str], env: &[(&str, &str)]) -> App {
        let logs = data.join("test-logs");
        std::fs::create_dir_all(&logs).expect("log dir");
        let n = std::fs::read_dir(&logs).map(|d| d.count()).unwrap_or(0);
        let stdout = logs.join(format!("{n}.out"));
        let stderr = logs.join(format!("{n}.err"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_termsprawl"));
        cmd.args(["--headless", "--data-dir"])
            .arg(data)
            .arg("--project")
            .arg(folder)
            .args(args)
            .env("XDG_RUNTIME_DIR", data)
            .env("SHELL", "/bin/sh")
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).expect("stdout file"))
            .stderr(std::fs::File::create(&stderr).expect("stderr file"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("start termsprawl");
        let mut app = App { child: Some(child), stdout, stderr };
        wait_for("the headless app to start", || {
            if let Some(status) = app.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("termsprawl exited early with {status}: {}", app.stderr_text());
            }
            std::fs::read_to_string(&app.stdout).ok().filter(|s| s.contains("termsprawl: headless")).map(|_| ())
        });
        app
    }

    /// What the app wrote on stderr so far.
    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends SIGTERM (as a session manager would) and waits for the app to exit.
    pub fn stop(mut self) -> (ExitStatus, String) {
        let mut child = self.child.take().expect("running app");
        let pid = child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let status = wait_for("the app to exit after SIGTERM", || child.try_wait().expect("wait app"));
        (status, self.stderr_text())
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The app's private tmux server under a data dir; killed when dropped.
pub struct PrivateTmux {
    /// The socket.
    pub socket: PathBuf,
}

impl PrivateTmux {
    /// The socket the app uses under `data`.
    pub fn of(data: &Path) -> PrivateTmux {
        PrivateTmux { socket: data.join("tmux").join("termsprawl.sock") }
    }

    /// Runs a tmux command on the socket; `None` when it fails.
    pub fn run(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Session names on the socket.
    pub fn sessions(&self) -> Vec<String> {
        self.run(&["list-sessions", "-F", "#{session_name}"])
            .map(|s| s.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Whether the session exists.
    pub fn has(&self, name: &str) -> bool {
        self.run(&["has-session", "-t", &format!("={name}")]).is_some()
    }

    /// The pane's history and screen as text.
    pub fn capture(&self, name: &str) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", &format!("={name}:")]).unwrap_or_default()
    }

    /// The pid of the program in the session's pane.
    pub fn pane_pid(&self, name: &str) -> Option<String> {
        self.run(&["display-message", "-p", "-t", &format!("={name}:"), "#{pane_pid}"]).map(|s| s.trim().to_owned())
    }

    /// Clients attached to the session.
    pub fn clients(&self, name: &str) -> usize {
        self.run(&["list-clients", "-t", &format!("={name}")]).map(|s| s.lines().count()).unwrap_or(0)
    }
}

impl Drop for PrivateTmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Whether a usable tmux (≥ 3.2) is installed.
pub fn tmux_available() -> bool {
    terminal::tmux::Tmux::detect().is_ok()
}

/// The app's saved snapshot of a node's session, as text with escapes stripped.
pub fn snapshot_text(data: &Path, folder: &Path, node: &NodeId) -> Option<String> {
    let name = termsprawl::runtime::terminals::session_name(folder, node);
    let bytes = std::fs::read(termsprawl::runtime::terminals::snapshot_path(data, &name)).ok()?;
    Some(strip_escapes(&String::from_utf8_lossy(&bytes)))
}

/// Removes CSI/OSC escape sequences, keeping the text.
pub fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}
