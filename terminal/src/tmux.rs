//! Sessions that survive app restarts by running inside tmux on a private
//! socket: reopening a node re-attaches (`new-session -A`) with scrollback
//! intact. The app's own tmux config is never read (`-f /dev/null`).

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::host::ExitStatus;

/// Oldest tmux whose behaviour this module relies on (`-e` on new-session, array options).
pub const MIN_VERSION: TmuxVersion = TmuxVersion { major: 3, minor: 2 };

/// History kept inside tmux, in lines.
pub const HISTORY_LIMIT: u32 = 50_000;

/// The pane runs the program under this `sh` script so that its exit status
/// and its output outlive it: tmux 3.3 ends the session when the program exits
/// and its client then exits 0, so the status would otherwise be lost
/// (`pane_dead_signal` is 3.4+, and the `pane-died` hook does not fire for
/// signal deaths), and the client leaves the alternate screen it drew in, so
/// the outer grid would show nothing of what ran. Once the program ends, and
/// while the pane still lives (so no `remain-on-exit` race with the session's
/// end), the script captures the pane's whole history with its colours
/// (`capture-pane -e -J`) into the trace file, then writes the status.
/// `$1` is the status file, `$2` the trace file, `$3` tmux, `$4` the socket;
/// the rest is the program. (The `pipe-pane` that copies the program's output
/// to the signal pass is chained onto the command that creates the session,
/// see [`TmuxSession::new_session_args`], rather than run from here: one tmux client
/// fewer per terminal.) The shell catches (rather than ignores) INT and
/// QUIT so that Ctrl+C reaches the program with default handlers and the
/// wrapper survives to record the status; a hang-up (the session killed) ends
/// it without recording anything.
const EXIT_RECORDER: &str = r#"f=$1; c=$2; t=$3; k=$4; shift 4; trap : INT QUIT; "$@"; s=$?; "$t" -S "$k" capture-pane -p -e -J -S - -E - -t "$TMUX_PANE" >"$c" 2>/dev/null; printf '%s\n' "$s" >"$f"; exit "$s""#;

/// tmux's `set-titles-string`: the pane title, or nothing while it is tmux's
/// default (the host name).
const PASS_TITLE: &str = "#{?#{==:#{pane_title},#{host}},,#{pane_title}}";

/// The most of a trace file read back (its newest part), so a flood in a
/// 50,000-line history cannot take the app's memory.
pub const MAX_TRACE_BYTES: usize = 8 * 1024 * 1024;

/// Errors preparing or managing tmux sessions.
#[derive(Debug, thiserror::Error)]
pub enum TmuxError {
    /// `tmux` could not be run.
    #[error("tmux is not available: {0}")]
    NotInstalled(#[source] std::io::Error),
    /// `tmux -V` ran and failed.
    #[error("tmux is not available: `{} -V` exited with {status}", program.display())]
    VersionFailed {
        /// The executable.
        program: PathBuf,
        /// How it ended.
        status: std::process::ExitStatus,
    },
    /// `tmux -V` printed something unrecognisable.
    #[error("could not parse the tmux version from {0:?}")]
    UnknownVersion(String),
    /// tmux is older than [`MIN_VERSION`].
    #[error("tmux {found} is too old; {MIN_VERSION} or newer is needed")]
    TooOld {
        /// Version found.
        found: TmuxVersion,
    },
    /// A session name outside `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid tmux session name {0:?}: use 1-64 of A-Z a-z 0-9 _ -")]
    BadName(String),
    /// The socket path does not fit in a unix socket address.
    #[error("tmux socket path {0} is too long for a unix socket")]
    SocketPathTooLong(PathBuf),
    /// Creating the socket directory failed.
    #[error("could not create tmux socket directory {path}: {source}")]
    SocketDir {
        /// Directory.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A tmux command failed.
    #[error("tmux {command} failed: {reason}")]
    Command {
        /// Sub-command that failed.
        command: &'static str,
        /// What tmux wrote to stderr.
        reason: String,
    },
    /// A tmux command could not be started.
    #[error("tmux {command} failed: {source}")]
    Spawn {
        /// Sub-command that was to run.
        command: &'static str,
        /// Cause.
        source: std::io::Error,
    },
}

/// A tmux version (`3.3a` → 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TmuxVersion {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

impl std::fmt::Display for TmuxVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl TmuxVersion {
    /// Parses `tmux -V` output such as `tmux 3.3a`, `tmux next-3.4` or `tmux 3.2-rc2`.
    pub fn parse(output: &str) -> Option<Self> {
        let word = output.split_whitespace().nth(1)?;
        let start = word.find(|c: char| c.is_ascii_digit())?;
        let mut parts = word[start..].split('.');
        let major = parts.next()?.parse().ok()?;
        let minor_digits: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
        Some(Self { major, minor: minor_digits.parse().ok()? })
    }
}

/// A usable tmux executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tmux {
    program: PathBuf,
    version: TmuxVersion,
}

impl Tmux {
    /// Finds `tmux` on PATH and checks it is at least [`MIN_VERSION`].
    pub fn detect() -> Result<Self, TmuxError> {
        Self::detect_at(Path::new("tmux"))
    }

    /// Checks a specific tmux executable.
    pub fn detect_at(program: &Path) -> Result<Self, TmuxError> {
        let output = Command::new(program).arg("-V").stdin(Stdio::null()).output().map_err(TmuxError::NotInstalled)?;
        if !output.status.success() {
            return Err(TmuxError::VersionFailed { program: program.to_owned(), status: output.status });
        }
        let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let version = TmuxVersion::parse(&text).ok_or(TmuxError::UnknownVersion(text))?;
        if version < MIN_VERSION {
            return Err(TmuxError::TooOld { found: version });
        }
        Ok(Self { program: program.to_owned(), version })
    }

    /// The detected version.
    pub fn version(&self) -> TmuxVersion {
        self.version
    }

    /// The executable.
    pub fn program(&self) -> &Path {
        &self.program
    }
}

/// One named tmux session on the app's private socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxSession {
    tmux: Tmux,
    socket: PathBuf,
    name: String,
    /// Whether the session was running when last asked (a `list-sessions` of
    /// the whole socket), so starting its terminal asks no `has-session`.
    known_running: Option<bool>,
}

impl TmuxSession {
    /// The session `name` on the socket `<data_dir>/tmux/termsprawl.sock`
    /// (the directory is created with mode 0700).
    pub fn new(tmux: Tmux, data_dir: &Path, name: &str) -> Result<Self, TmuxError> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(TmuxError::BadName(name.to_owned()));
        }
        let dir = data_dir.join("tmux");
        let socket = dir.join("termsprawl.sock");
        // sun_path holds 108 bytes including the terminating NUL.
        if socket.as_os_str().len() >= 104 {
            return Err(TmuxError::SocketPathTooLong(socket));
        }
        create_private_dir(&dir).map_err(|source| TmuxError::SocketDir { path: dir.clone(), source })?;
        Ok(Self { tmux, socket, name: name.to_owned(), known_running: None })
    }

    /// The same session, known to be running or not (from
    /// [`Self::sessions_on_socket`]): starting its terminal trusts this
    /// instead of asking tmux again. Trusting a stale answer is safe: an
    /// attach to a session that ended fails at once and reads what it left,
    /// and creating one that another client made meanwhile attaches to it.
    pub fn known_running(mut self, running: bool) -> Self {
        self.known_running = Some(running);
        self
    }

    /// Whether the session is running: what [`Self::known_running`] was told,
    /// else tmux's answer now.
    pub(crate) fn running_now_or_known(&self) -> bool {
        self.known_running.unwrap_or_else(|| self.exists())
    }

    /// Session name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tmux executable the session runs under.
    pub fn tmux_program(&self) -> &Path {
        &self.tmux.program
    }

    /// Socket path.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The server options every command line that may start the server sets
    /// first (so a server started by any of them is configured alike).
    fn server_options(&self) -> Vec<OsString> {
        let mut args = self.base_args();
        args.extend(server_option_commands());
        args
    }

    /// The commands that create the session detached, as `request` asks,
    /// running its program under [`EXIT_RECORDER`], then pipe its pane to the
    /// request's pipe command when given. The server runs both commands of the
    /// line before it next reads any pane, so none of the program's output can
    /// come before the pipe.
    fn new_session_args(&self, request: &NewSession) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["new-session", "-d", "-s", &self.name].map(OsString::from).into();
        let (cols, rows) = request.size;
        args.extend(["-x".into(), cols.to_string().into(), "-y".into(), rows.to_string().into()]);
        args.push("-c".into());
        args.push(request.cwd.as_os_str().to_owned());
        for (key, value) in &request.env {
            args.push("-e".into());
            args.push(format!("{key}={value}").into());
        }
        args.extend(["--", "/bin/sh", "-c", EXIT_RECORDER, "termsprawl-session"].map(OsString::from));
        args.push(self.exit_file().into_os_string());
        args.push(self.trace_file().into_os_string());
        args.push(self.tmux.program.clone().into_os_string());
        args.push(self.socket.clone().into_os_string());
        args.push(request.program.clone());
        args.extend(request.args.iter().cloned());
        if let Some(pipe) = &request.pipe_command {
            args.extend([";", "pipe-pane"].map(OsString::from));
            args.extend(self.pipe_args(pipe).map(OsString::from));
        }
        args
    }

    /// Creates the session, detached, before any client attaches to it.
    ///
    /// Why not `new-session -A` in the PTY's client: a client that connects
    /// while the server is exiting (its last session just ended; tmux exits
    /// when empty) prints "server exited unexpectedly" and ends, and the
    /// program never runs. Run here, that failure is seen and retried against
    /// a fresh server.
    pub(crate) fn create(&self, request: &NewSession) -> Result<(), TmuxError> {
        const ATTEMPTS: u32 = 5;
        let mut args = self.server_options();
        args.extend(self.new_session_args(request));
        let mut attempt = 1;
        let env = tmux_command_env(&request.process_env);
        loop {
            let (status, stderr) = crate::spawn::run_capturing_stderr(self.tmux.program.as_os_str(), &args, &env)
                .map_err(|source| TmuxError::Spawn { command: "new-session", source })?;
            if status.success() {
                return Ok(());
            }
            let reason = String::from_utf8_lossy(&stderr).trim().to_owned();
            // Made meanwhile by another client (a second app on the data dir): attach to it.
            if self.exists() {
                return Ok(());
            }
            if attempt == ATTEMPTS {
                return Err(TmuxError::Command { command: "new-session", reason });
            }
            tracing::debug!(attempt, %reason, session = %self.name, "tmux new-session failed; retrying");
            std::thread::sleep(std::time::Duration::from_millis(20 * u64::from(attempt)));
            attempt += 1;
        }
    }

    /// Program and arguments for the PTY: a tmux client that attaches to the
    /// session (made by [`Self::create`], or left by an earlier run). When the
    /// session has already ended, the client fails at once and what the
    /// program left (status, trace) is read from the session's files.
    pub(crate) fn attach_command(&self) -> (PathBuf, Vec<OsString>) {
        let mut args = self.server_options();
        args.extend(["attach-session", "-t", &self.target()].map(OsString::from));
        (self.tmux.program.clone(), args)
    }

    /// Where the pane's wrapper writes the program's exit status when it ends.
    pub fn exit_file(&self) -> PathBuf {
        self.socket.with_file_name(format!("{}.exit", self.name))
    }

    /// Where the pane's wrapper writes the pane's history (with colours) when the program ends.
    pub fn trace_file(&self) -> PathBuf {
        self.socket.with_file_name(format!("{}.trace", self.name))
    }

    /// Takes (reads and removes) what the pane showed when its program ended,
    /// as bytes to feed a screen (see [`crate::trace::capture_stream`]).
    /// `None` when the program has not ended or left nothing.
    pub fn take_exit_trace(&self) -> Option<Vec<u8>> {
        let path = self.trace_file();
        let raw = read_tail(&path, MAX_TRACE_BYTES);
        if let Err(e) = std::fs::remove_file(&path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path.display(), error = %e, "could not remove a tmux trace file");
            }
        }
        let raw = raw?;
        let stream = crate::capture::capture_stream(&raw);
        (!stream.is_empty()).then_some(stream)
    }

    /// Takes (reads and removes) the exit status the program left when it ended.
    /// `None` when it has not ended (a detached client) or left nothing (a hang-up).
    /// A shell reports death by signal N as 128 + N, which is decoded here.
    pub fn take_exit_status(&self) -> Option<ExitStatus> {
        let path = self.exit_file();
        let text = std::fs::read_to_string(&path).ok()?;
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::warn!(path = %path.display(), error = %e, "could not remove a tmux exit status file");
        }
        let code: u32 = text.trim().parse().ok()?;
        let signal = code.checked_sub(128).filter(|n| (1..=64).contains(n)).map(|n| signal_description(n as i32));
        Some(ExitStatus { code: if signal.is_some() { 1 } else { code }, signal })
    }

    /// Removes an exit status left by an earlier session of the same name, so a
    /// new session never reports it. Call only while the session does not exist.
    pub(crate) fn clear_stale_exit_status(&self) {
        for path in [self.exit_file(), self.trace_file()] {
            match std::fs::remove_file(&path) {
                Ok(()) => tracing::debug!(path = %path.display(), "removed a stale tmux exit file"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!(path = %path.display(), error = %e, "could not remove a stale tmux exit file"),
            }
        }
    }

    fn base_args(&self) -> Vec<OsString> {
        vec!["-u".into(), "-S".into(), self.socket.as_os_str().to_owned(), "-f".into(), "/dev/null".into()]
    }

    fn run(&self, command: &'static str, extra: &[&str]) -> Result<std::process::Output, TmuxError> {
        let mut args = self.base_args();
        args.push(command.into());
        args.extend(extra.iter().map(OsString::from));
        Command::new(&self.tmux.program)
            .args(&args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .map_err(|source| TmuxError::Spawn { command, source })
    }

    fn target(&self) -> String {
        // `=` makes tmux match the name exactly rather than by prefix.
        format!("={}", self.name)
    }

    /// The session's current pane (`=name:`), the target of pane commands.
    fn pane_target(&self) -> String {
        format!("{}:", self.target())
    }

    /// `pipe-pane -O -t <pane> <command>`: the pane's output copied to `command`.
    fn pipe_args(&self, command: &str) -> [String; 4] {
        ["-O".into(), "-t".into(), self.pane_target(), command.into()]
    }

    /// Copies the pane's output to `command` (`pipe-pane -O`), replacing any pipe
    /// an earlier attach left (its command then reads end of file).
    pub(crate) fn open_pipe(&self, command: &str) -> Result<(), TmuxError> {
        let args = self.pipe_args(command);
        self.checked("pipe-pane", &args.each_ref().map(String::as_str))
    }

    /// Closes the pane's output pipe, if any (its `cat` reads end of file and exits).
    pub(crate) fn close_pipe(&self) -> Result<(), TmuxError> {
        let target = self.pane_target();
        self.checked("pipe-pane", &["-t", &target])
    }

    /// Sends `bytes` to the pane's program as if typed (`send-keys -H`).
    pub(crate) fn send_bytes(&self, bytes: &[u8]) -> Result<(), TmuxError> {
        let target = self.pane_target();
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["-H", "-t", &target];
        args.extend(hex.iter().map(String::as_str));
        self.checked("send-keys", &args)
    }

    fn checked(&self, command: &'static str, extra: &[&str]) -> Result<(), TmuxError> {
        let out = self.run(command, extra)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(TmuxError::Command { command, reason: String::from_utf8_lossy(&out.stderr).trim().to_owned() })
        }
    }

    /// Whether the session is alive.
    pub fn exists(&self) -> bool {
        self.run("has-session", &["-t", &self.target()]).is_ok_and(|out| out.status.success())
    }

    /// The names of every session on this session's socket, asked once
    /// (`list-sessions`): restoring a canvas asks this instead of one
    /// `has-session` per terminal. No server running means none.
    pub fn sessions_on_socket(&self) -> HashSet<String> {
        match self.run("list-sessions", &["-F", "#{session_name}"]) {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
            }
            _ => HashSet::new(),
        }
    }

    /// Ends the session and everything running in it (when its node is closed for good).
    /// Returns `false` if there was no such session.
    pub fn kill(&self) -> Result<bool, TmuxError> {
        if !self.exists() {
            return Ok(false);
        }
        let out = self.run("kill-session", &["-t", &self.target()])?;
        if out.status.success() {
            Ok(true)
        } else {
            Err(TmuxError::Command {
                command: "kill-session",
                reason: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    /// The last `max_chars` of the pane's history and screen as plain text
    /// (wrapped lines joined, trailing spaces and blank lines trimmed).
    pub fn capture_text(&self, max_chars: usize) -> Result<String, TmuxError> {
        let target = self.pane_target();
        let out = self.run("capture-pane", &["-p", "-J", "-S", "-", "-E", "-", "-t", &target])?;
        if !out.status.success() {
            return Err(TmuxError::Command {
                command: "capture-pane",
                reason: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        let raw = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = raw.lines().map(|l| l.trim_end_matches(' ')).collect();
        let text = lines.join("\n");
        let text = text.trim_end_matches('\n');
        let count = text.chars().count();
        Ok(text.chars().skip(count.saturating_sub(max_chars)).collect())
    }
}

/// The server options every command line that may start the server sets
/// first, as tmux commands each ended by `;`.
fn server_option_commands() -> Vec<OsString> {
    let default_terminal = if has_terminfo("tmux-256color") { "tmux-256color" } else { "screen-256color" };
    let options: [&[&str]; 12] = [
        &["start-server"],
        &["set-option", "-g", "status", "off"],
        // The app's focus in/out (a node taking the keyboard) reaches the
        // pane's program when it asked for focus reports (codex notifies
        // only while unfocused; editors check files on focus).
        &["set-option", "-g", "focus-events", "on"],
        &["set-option", "-g", "history-limit", &HISTORY_LIMIT.to_string()],
        &["set-option", "-s", "escape-time", "10"],
        &["set-option", "-g", "mouse", "on"],
        &["set-option", "-s", "set-clipboard", "on"],
        &["set-option", "-g", "set-titles", "on"],
        // Window names are never shown (titles come from the pane), and
        // renaming reads each busy pane's /proc/PID/cmdline twice a second.
        &["set-option", "-g", "automatic-rename", "off"],
        // The outer title is the pane's own (what the program set with OSC 0/2),
        // never tmux's `session:window:name - "title"`; a pane whose program set
        // none has the host name as its title, which passes as empty (no title).
        &["set-option", "-g", "set-titles-string", PASS_TITLE],
        &["set-option", "-g", "default-terminal", default_terminal],
        // A fixed array slot, so re-attaching does not append duplicates.
        &["set-option", "-s", "terminal-features[90]", "xterm*:RGB:clipboard:title"],
    ];
    let mut args = Vec::new();
    for option in options {
        args.extend(option.iter().map(OsString::from));
        args.push(";".into());
    }
    args
}

/// The environment of a tmux command that may start the server: the app's,
/// less `TMUX`, with `set` on top (a server started by it has this as its
/// global environment). The command may start the server, a daemon that
/// outlives the app: it must hold none of the app's descriptors (a Chromium
/// helper whose IPC socket a tmux server kept open never saw the app die),
/// which [`crate::spawn`] sees to without forking the app.
fn tmux_command_env(set: &[(String, String)]) -> Vec<(OsString, OsString)> {
    crate::spawn::child_env(&["TMUX"], set)
}

/// A session to create (see [`TmuxSession::create`]).
#[derive(Debug, Clone)]
pub(crate) struct NewSession {
    /// Working directory of the program.
    pub(crate) cwd: PathBuf,
    /// Set on the tmux command itself: the global environment of a server it starts.
    pub(crate) process_env: Vec<(String, String)>,
    /// Set on the session (`new-session -e`).
    pub(crate) env: Vec<(String, String)>,
    /// The program.
    pub(crate) program: OsString,
    /// Its arguments.
    pub(crate) args: Vec<OsString>,
    /// Where the pane's output is piped from the start (`pipe-pane -O`).
    pub(crate) pipe_command: Option<String>,
    /// Columns and rows.
    pub(crate) size: (u16, u16),
}

/// The most bytes of packed command (each argument and its NUL) one tmux
/// client sends: its message holds 16,384 bytes (`MAX_IMSGSIZE`) with the
/// header, and a longer command is refused ("command too long").
const MAX_COMMAND_BYTES: usize = 16_000;

fn packed_len(args: &[OsString]) -> usize {
    args.iter().map(|a| a.len() + 1).sum()
}

/// Creates every requested session (none of them running), answering each
/// one's outcome in order. Sessions on one socket are made by as few tmux
/// commands as fit in a client message (`new-session …; pipe-pane …;
/// new-session …`), instead of one tmux client per session: the 100
/// terminals of `./dev bench scale`'s canvas were all live in 0.79x the time
/// this way (docs/benchmarks.md, "scale": restore). When a batch fails, each of its sessions is created on
/// its own, with [`TmuxSession::create`]'s retries; one whose batch made it
/// after all is then found existing and attached to.
pub(crate) fn create_many(requests: &[(&TmuxSession, &NewSession)]) -> Vec<Result<(), TmuxError>> {
    let mut results = Vec::with_capacity(requests.len());
    let options_len = packed_len(&server_option_commands());
    let mut rest = requests;
    while let Some(((first, _), _)) = rest.split_first() {
        let same_server = |s: &TmuxSession| s.socket == first.socket && s.tmux.program == first.tmux.program;
        let mut len = options_len;
        let mut count = 0;
        for (session, request) in rest {
            let add = packed_len(&session.new_session_args(request)) + 2;
            if !same_server(session) || (count > 0 && len + add > MAX_COMMAND_BYTES) {
                break;
            }
            len += add;
            count += 1;
        }
        let (batch, later) = rest.split_at(count.max(1));
        results.extend(create_batch(batch));
        rest = later;
    }
    results
}

/// Creates `batch` (sessions of one server, within [`MAX_COMMAND_BYTES`]) with one tmux command.
fn create_batch(batch: &[(&TmuxSession, &NewSession)]) -> Vec<Result<(), TmuxError>> {
    let one_by_one = || batch.iter().map(|(session, request)| session.create(request)).collect();
    let [(first, first_request), more @ ..] = batch else { return Vec::new() };
    if more.is_empty() {
        return one_by_one();
    }
    let mut args = first.server_options();
    for (i, (session, request)) in batch.iter().enumerate() {
        if i > 0 {
            args.push(";".into());
        }
        args.extend(session.new_session_args(request));
    }
    // What every request sets on the command (the server's global
    // environment); each session has its own anyway, through `-e`.
    let common: Vec<(String, String)> = first_request
        .process_env
        .iter()
        .filter(|pair| more.iter().all(|(_, r)| r.process_env.contains(pair)))
        .cloned()
        .collect();
    match crate::spawn::run_capturing_stderr(first.tmux.program.as_os_str(), &args, &tmux_command_env(&common)) {
        Ok((status, _)) if status.success() => batch.iter().map(|_| Ok(())).collect(),
        outcome => {
            let reason = match outcome {
                Ok((_, stderr)) => String::from_utf8_lossy(&stderr).trim().to_owned(),
                Err(e) => e.to_string(),
            };
            tracing::debug!(sessions = batch.len(), %reason, "a batched tmux new-session failed; creating one by one");
            one_by_one()
        }
    }
}

/// Ends session `name` on the app's socket under `data_dir` (node closed for good).
pub fn kill_session(tmux: &Tmux, data_dir: &Path, name: &str) -> Result<bool, TmuxError> {
    TmuxSession::new(tmux.clone(), data_dir, name)?.kill()
}

/// The last `max` bytes of a file (`None` when it cannot be read).
fn read_tail(path: &Path, max: usize) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len > max as u64 {
        file.seek(SeekFrom::Start(len - max as u64)).ok()?;
    }
    let mut out = Vec::with_capacity(len.min(max as u64) as usize);
    file.take(max as u64).read_to_end(&mut out).ok()?;
    Some(out)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// The C library's description of signal `n` ("Killed", "Interrupt"), as
/// portable-pty reports signal deaths outside tmux.
fn signal_description(n: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string,
    // valid until the next call on this thread; it is copied at once.
    let text = unsafe { libc::strsignal(n) };
    if text.is_null() {
        return format!("Signal {n}");
    }
    // SAFETY: non-null strsignal results are NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

fn has_terminfo(name: &str) -> bool {
    let first = &name[..1];
    ["/usr/share/terminfo", "/lib/terminfo", "/etc/terminfo", "/usr/lib/terminfo"]
        .iter()
        .any(|dir| Path::new(dir).join(first).join(name).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        assert_eq!(TmuxVersion::parse("tmux 3.3a"), Some(TmuxVersion { major: 3, minor: 3 }));
        assert_eq!(TmuxVersion::parse("tmux next-3.4"), Some(TmuxVersion { major: 3, minor: 4 }));
        assert_eq!(TmuxVersion::parse("tmux 3.2-rc2"), Some(TmuxVersion { major: 3, minor: 2 }));
        assert_eq!(TmuxVersion::parse("tmux 2.9"), Some(TmuxVersion { major: 2, minor: 9 }));
        assert_eq!(TmuxVersion::parse("tmux master"), None);
        assert_eq!(TmuxVersion::parse(""), None);
        assert!(TmuxVersion { major: 2, minor: 9 } < MIN_VERSION);
        assert!(TmuxVersion { major: 3, minor: 3 } >= MIN_VERSION);
    }

    #[test]
    fn rejects_bad_names_and_long_sockets() {
        let tmux = Tmux { program: "tmux".into(), version: MIN_VERSION };
        let dir = tempfile::tempdir().unwrap();
        for name in ["", "a:b", "a.b", "with space", &"x".repeat(65)] {
            assert!(matches!(TmuxSession::new(tmux.clone(), dir.path(), name), Err(TmuxError::BadName(_))));
        }
        let deep = dir.path().join("d".repeat(100));
        assert!(matches!(TmuxSession::new(tmux.clone(), &deep, "ok"), Err(TmuxError::SocketPathTooLong(_))));
        let s = TmuxSession::new(tmux, dir.path(), "node-1").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("tmux")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let request = NewSession {
            cwd: "/tmp".into(),
            process_env: Vec::new(),
            env: vec![("A".into(), "1".into())],
            program: "bash".into(),
            args: vec!["-l".into()],
            pipe_command: Some("cat".into()),
            size: (100, 30),
        };
        let mut args = s.server_options();
        args.extend(s.new_session_args(&request));
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let joined = args.join(" ");
        assert!(joined.contains("-f /dev/null"));
        assert!(joined.contains("status off"));
        assert!(joined.contains("history-limit 50000"));
        assert!(joined.contains(&format!("set-titles-string {PASS_TITLE} ;")), "tmux's own title never shows");
        let exit_file = s.exit_file();
        let tail = format!(
            "new-session -d -s node-1 -x 100 -y 30 -c /tmp -e A=1 -- /bin/sh -c {EXIT_RECORDER} termsprawl-session {} {} tmux {} bash -l ; pipe-pane -O -t =node-1: cat",
            exit_file.display(),
            s.trace_file().display(),
            s.socket().display()
        );
        assert!(joined.ends_with(&tail), "{joined}");
        let (_, attach) = s.attach_command();
        let attach: Vec<String> = attach.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let attach = attach.join(" ");
        assert!(
            attach.contains(&format!("set-titles-string {PASS_TITLE} ;")),
            "an attach configures a fresh server too"
        );
        assert!(attach.ends_with("attach-session -t =node-1"), "{attach}");
        assert_eq!(exit_file, dir.path().join("tmux/node-1.exit"));
        assert_eq!(s.trace_file(), dir.path().join("tmux/node-1.trace"));
    }

    #[test]
    fn exit_status_files_decode_codes_and_signals() {
        let tmux = Tmux { program: "tmux".into(), version: MIN_VERSION };
        let dir = tempfile::tempdir().unwrap();
        let s = TmuxSession::new(tmux, dir.path(), "node-2").unwrap();
        assert_eq!(s.take_exit_status(), None, "nothing recorded yet");
        let cases = [
            ("0\n", Some(ExitStatus { code: 0, signal: None })),
            ("3\n", Some(ExitStatus { code: 3, signal: None })),
            ("128\n", Some(ExitStatus { code: 128, signal: None })),
            ("137\n", Some(ExitStatus { code: 1, signal: Some(signal_description(9)) })),
            ("130", Some(ExitStatus { code: 1, signal: Some(signal_description(2)) })),
            ("255\n", Some(ExitStatus { code: 255, signal: None })),
            ("garbage", None),
            ("", None),
        ];
        for (text, expected) in cases {
            std::fs::write(s.exit_file(), text).unwrap();
            assert_eq!(s.take_exit_status(), expected, "{text:?}");
            assert!(!s.exit_file().exists(), "taking a status removes its file ({text:?})");
        }
        assert_eq!(signal_description(9), "Killed");
        std::fs::write(s.exit_file(), "0\n").unwrap();
        s.clear_stale_exit_status();
        assert_eq!(s.take_exit_status(), None);
    }

    #[test]
    fn missing_tmux_is_a_clear_error() {
        let err = Tmux::detect_at(Path::new("/nonexistent/tmux")).unwrap_err();
        assert!(matches!(err, TmuxError::NotInstalled(_)));
    }

    #[test]
    fn tmux_that_cannot_run_keeps_the_cause() {
        let err = Tmux::detect_at(Path::new("/nonexistent/tmux")).unwrap_err();
        let source = std::error::Error::source(&err).expect("the spawn's error");
        assert!(source.downcast_ref::<std::io::Error>().is_some(), "{source:?}");
        assert_eq!(err.to_string(), format!("tmux is not available: {source}"), "the message is as before");
        let status = Command::new("false").status().unwrap();
        let err = Tmux::detect_at(Path::new("false")).unwrap_err();
        assert_eq!(err.to_string(), format!("tmux is not available: `false -V` exited with {status}"));
    }
}
