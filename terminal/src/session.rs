//! A live terminal: a child process on a PTY, with reader, parser, writer and
//! waiter threads feeding a shared [`Screen`] and calling the [`TerminalHost`].
//!
//! Threads (all named `term-*`): the reader does blocking PTY reads and hands
//! chunks to the parser; the parser owns the VT parser lock time, flushes
//! stalled synchronized updates, and calls the host outside the lock; the
//! writer performs blocking PTY writes so the caller never blocks; the waiter
//! reaps the child. Inside tmux, `term-signals` reads the pane's own output
//! for signals (see [`crate::pane_pipe`]) and hands them to the parser thread,
//! which makes every host call. Linux reports EIO on the master once the
//! child side is gone; that is treated as end of file.

use std::ffi::OsString;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use portable_pty::{native_pty_system, ChildKiller, CommandBuilder, MasterPty, PtySize};

use crate::colors::Theme;
use crate::error::{BoxError, TerminalError};
use crate::host::{ExitStatus, TerminalHost};
use crate::input::InputModes;
use crate::pane_pipe::{self, PanePipe};
use crate::persist;
use crate::running::RunningTerminal;
use crate::screen::{Screen, ScreenConfig, ScreenEvent, TermSize, DEFAULT_SCROLLBACK};
use crate::signals::TerminalSignal;
use crate::snapshot::GridSnapshot;
use crate::tmux::{self, NewSession, TmuxError, TmuxSession};

/// How long output may keep arriving after the child exits before exit is reported anyway
/// (a background job can hold the PTY open forever).
const EXIT_DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How long the writer keeps the PTY writer open after input ends, waiting for the child to
/// exit; portable-pty sends "\n" + EOF when it is dropped, which must not reach a tmux client.
const WRITER_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Output the reader gathers while the parser's queue is full, before it waits.
const MAX_COALESCED: usize = 256 * 1024;

/// Read chunks in flight between reader and parser; with [`MAX_COALESCED`]
/// this bounds a flood's buffered output to about 5 MiB per terminal.
const READ_QUEUE_DEPTH: usize = 16;

/// What to run in a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Program (looked up on PATH).
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
}

/// How a terminal's contents outlive the app.
#[derive(Debug, Clone, Default)]
pub enum Persistence {
    /// Nothing survives.
    #[default]
    None,
    /// Run inside this tmux session; reopening re-attaches. Dropping the
    /// `Terminal` detaches; [`TmuxSession::kill`] ends it.
    Tmux(TmuxSession),
    /// Start a fresh process, but first show this saved snapshot (from
    /// [`Screen::ansi_snapshot`]) under a "session restored" marker.
    Restore(Vec<u8>),
}

/// Everything needed to start a terminal.
#[derive(Debug, Clone)]
pub struct TerminalConfig {
    /// Command to run; `None` runs `$SHELL` (or `/bin/sh`).
    pub command: Option<CommandSpec>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Extra environment (e.g. `TERMSPRAWL_NODE_ID`), on top of the app's own plus
    /// `TERM=xterm-256color` and `COLORTERM=truecolor`.
    pub env: Vec<(String, String)>,
    /// Initial size.
    pub size: TermSize,
    /// Scrollback lines (ignored inside tmux, which keeps its own history).
    pub scrollback_lines: usize,
    /// Colours.
    pub theme: Theme,
    /// Session persistence.
    pub persistence: Persistence,
}

impl TerminalConfig {
    /// A shell in `cwd` at `size` with defaults for everything else.
    pub fn new(cwd: impl Into<PathBuf>, size: TermSize) -> Self {
        Self {
            command: None,
            cwd: cwd.into(),
            env: Vec::new(),
            size,
            scrollback_lines: DEFAULT_SCROLLBACK,
            theme: Theme::default(),
            persistence: Persistence::None,
        }
    }
}

/// Messages into the parser thread.
enum ParserMsg {
    Data(Vec<u8>),
    Eof,
    /// The child was reaped; with tmux, the pane's captured history to show in its place.
    Exited(ExitStatus, Option<Vec<u8>>),
    /// Signals found in a tmux pane's own output (see [`crate::pane_pipe`]).
    Signals(Vec<TerminalSignal>),
}

/// Exit status shared between the waiter, the writer and callers.
#[derive(Default)]
struct ExitCell {
    status: Mutex<Option<ExitStatus>>,
    changed: Condvar,
}

impl ExitCell {
    fn set(&self, status: ExitStatus) {
        *self.status.lock() = Some(status);
        self.changed.notify_all();
    }

    fn wait(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        let mut status = self.status.lock();
        while status.is_none() {
            if self.changed.wait_until(&mut status, deadline).timed_out() {
                break;
            }
        }
        status.clone()
    }
}

/// A running terminal session. Dropping it hangs up the child (a tmux client
/// detaches, leaving the session alive); threads finish on their own.
pub struct Terminal {
    screen: Arc<Mutex<Screen>>,
    input: Sender<Vec<u8>>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    killer: Mutex<Box<dyn ChildKiller + Send + Sync>>,
    pid: Option<u32>,
    exit: Arc<ExitCell>,
    tmux: Option<TmuxSession>,
    /// The tmux pane's output is piped to the signal pass (closed again on detach).
    piped: bool,
}

/// How many terminals [`Terminal::spawn_many`] starts at once once their
/// sessions exist: a re-attach asks tmux to pipe the pane (a client run to
/// its end), and side by side the cores stay busy where one at a time waits.
const PARALLEL_STARTS: usize = 8;

/// A terminal decided but not started: what [`Terminal::spawn`] checks and
/// prepares before its tmux session (when new) is created and its PTY starts.
struct Pending {
    config: TerminalConfig,
    screen: Screen,
    tmux: Option<TmuxSession>,
    /// The tmux session is running already: the PTY's client attaches to it.
    reattach: bool,
    pane_pipe: Option<(PanePipe, std::fs::File)>,
}

impl Pending {
    /// Checks `config` and prepares its screen, stale files and signal FIFO.
    fn prepare(config: TerminalConfig) -> Result<Self, TerminalError> {
        config.size.validate()?;
        if !config.cwd.is_dir() {
            return Err(TerminalError::BadWorkingDir(config.cwd.clone()));
        }
        for (name, value) in &config.env {
            let reason = if name.is_empty() || name.contains('=') {
                "name must be non-empty and contain no '='"
            } else if name.contains('\0') || value.contains('\0') {
                "contains NUL"
            } else {
                continue;
            };
            return Err(TerminalError::BadEnv { name: name.clone(), reason });
        }

        let mut screen = Screen::new(
            config.size,
            ScreenConfig { scrollback_lines: config.scrollback_lines, theme: config.theme.clone() },
        )?;
        if let Persistence::Restore(snapshot) = &config.persistence {
            screen.feed(&persist::restore_stream(snapshot));
            // Replies to anything in the old output must not reach the new process.
            screen.take_events();
        }

        let tmux = match &config.persistence {
            Persistence::Tmux(session) => Some(session.clone()),
            _ => None,
        };
        let reattach = tmux.as_ref().is_some_and(TmuxSession::running_now_or_known);
        if let Some(session) = tmux.as_ref().filter(|_| !reattach) {
            session.clear_stale_exit_status();
        }
        // tmux swallows the sequences signals come in, so inside tmux the signal
        // pass reads the pane's own output instead of the client's.
        let pane_pipe = tmux.as_ref().and_then(|session| match PanePipe::create(session) {
            Ok(pipe) => Some(pipe),
            Err(e) => {
                tracing::warn!(error = %e, "could not create a pane signal FIFO; signals inside tmux are lost");
                None
            }
        });
        if pane_pipe.is_some() {
            screen.set_signal_pass(false);
        }
        Ok(Self { config, screen, tmux, reattach, pane_pipe })
    }

    /// The tmux session to create before the PTY starts (one not running yet),
    /// with what it runs: the environment the PTY's client would have given it.
    fn new_session(&self) -> Option<(&TmuxSession, NewSession)> {
        let session = self.tmux.as_ref().filter(|_| !self.reattach)?;
        let config = &self.config;
        let (program, args) = program_of(config);
        // tmux starts its default shell as a login shell; the wrapper in between
        // keeps that with `-l`.
        let args = if config.command.is_none() { vec![OsString::from("-l")] } else { args };
        let mut env = vec![
            ("TERM_PROGRAM".to_owned(), "termsprawl".to_owned()),
            ("COLORTERM".to_owned(), "truecolor".to_owned()),
        ];
        env.extend(config.env.iter().cloned());
        // What the PTY's client has: the global environment of a server it starts.
        let mut process_env =
            vec![("TERM".to_owned(), "xterm-256color".to_owned()), ("COLORTERM".to_owned(), "truecolor".to_owned())];
        process_env.extend(config.env.iter().cloned());
        let request = NewSession {
            cwd: config.cwd.clone(),
            process_env,
            env,
            program,
            args,
            pipe_command: self.pane_pipe.as_ref().map(|(pipe, _)| pipe.pipe_command()),
            size: (config.size.cols, config.size.rows),
        };
        Some((session, request))
    }

    /// Starts the PTY (its tmux session, if new, already created) and the session threads.
    fn start(self, host: Arc<dyn TerminalHost>) -> Result<Terminal, TerminalError> {
        let Self { config, screen, tmux, reattach, pane_pipe } = self;
        let (program, args) = match tmux.as_ref() {
            Some(session) => {
                let (client, args) = session.attach_command();
                (client.into_os_string(), args)
            }
            None => program_of(&config),
        };
        let pty = native_pty_system().openpty(pty_size(config.size)).map_err(|e| TerminalError::Pty(e.into()))?;
        let spawn_error =
            |source: BoxError| TerminalError::Spawn { program: program.to_string_lossy().into_owned(), source };
        let mut child = if tmux.is_some() {
            // The tmux client starts without forking the app (see `crate::spawn`).
            let mut set = vec![
                ("TERM".to_owned(), "xterm-256color".to_owned()),
                ("COLORTERM".to_owned(), "truecolor".to_owned()),
            ];
            set.extend(config.env.iter().cloned());
            // A tmux client started from inside tmux would refuse to nest.
            let env = crate::spawn::child_env(&["TMUX"], &set);
            let tty =
                pty.master.tty_name().ok_or_else(|| TerminalError::OpenPty("the PTY has no device name".into()))?;
            let child = crate::spawn::on_terminal(&program, &args, &env, &config.cwd, &tty)
                .map_err(|e| spawn_error(e.into()))?;
            Box::new(child) as Box<dyn portable_pty::Child + Send + Sync>
        } else {
            let mut cmd = CommandBuilder::new(&program);
            cmd.args(&args);
            cmd.cwd(&config.cwd);
            cmd.env("TERM", "xterm-256color");
            cmd.env("COLORTERM", "truecolor");
            // A shell started from inside tmux would think it runs in its pane.
            cmd.env_remove("TMUX");
            for (key, value) in &config.env {
                cmd.env(key, value);
            }
            pty.slave.spawn_command(cmd).map_err(|e| spawn_error(e.into()))?
        };
        // Our copy of the slave must go, or the reader never sees EOF.
        drop(pty.slave);
        let pid = child.process_id();
        let killer = child.clone_killer();
        let reader = pty.master.try_clone_reader().map_err(|e| TerminalError::Pty(e.into()))?;
        let writer = pty.master.take_writer().map_err(|e| TerminalError::Pty(e.into()))?;
        tracing::debug!(pid, program = %program.to_string_lossy(), "terminal spawned");

        let screen = Arc::new(Mutex::new(screen));
        let exit = Arc::new(ExitCell::default());
        let (input_tx, input_rx) = mpsc::channel::<Vec<u8>>();
        let (parser_tx, parser_rx) = mpsc::sync_channel::<ParserMsg>(READ_QUEUE_DEPTH);

        let piped = pane_pipe.is_some();
        let pane_pipe = match (pane_pipe, tmux.as_ref()) {
            (Some((pipe, fifo)), Some(session)) => {
                // A new session's wrapper opens the pipe before its program runs; a
                // re-attach replaces whatever pipe an earlier attach left.
                if reattach {
                    if let Err(e) = session.open_pipe(&pipe.pipe_command()) {
                        tracing::warn!(error = %e, "could not pipe a tmux pane to the signal pass");
                    }
                }
                let stop = pipe.stop_flag();
                let session = session.clone();
                let tx = parser_tx.clone();
                spawn_thread("term-signals", move || {
                    pane_pipe::read_signals(fifo, stop, session, |signals| tx.send(ParserMsg::Signals(signals)).is_ok())
                })?;
                Some(pipe)
            }
            _ => None,
        };

        spawn_thread("term-writer", {
            let exit = exit.clone();
            move || writer_loop(writer, input_rx, exit)
        })?;
        spawn_thread("term-reader", {
            let tx = parser_tx.clone();
            move || reader_loop(reader, tx)
        })?;
        spawn_thread("term-waiter", {
            let tx = parser_tx;
            let exit = exit.clone();
            let tmux = tmux.clone();
            move || {
                let status: ExitStatus = match child.wait() {
                    Ok(status) => status.into(),
                    Err(e) => {
                        tracing::warn!(error = %e, "waiting for terminal child failed");
                        ExitStatus { code: 1, signal: None }
                    }
                };
                // A tmux client exits 0 whether its program ended or it was detached;
                // the program's own status, when it ended, is in the session's file,
                // and what its pane showed in the trace file beside it.
                let (status, trace) = match tmux.as_ref().and_then(TmuxSession::take_exit_status) {
                    Some(ended) => (ended, tmux.as_ref().and_then(TmuxSession::take_exit_trace)),
                    None => (status, None),
                };
                exit.set(status.clone());
                let _ = tx.send(ParserMsg::Exited(status, trace));
                // Removes the FIFO and stops its reader.
                drop(pane_pipe);
            }
        })?;
        spawn_thread("term-parser", {
            let screen = screen.clone();
            let input = input_tx.clone();
            move || parser_loop(parser_rx, screen, input, host)
        })?;

        Ok(Terminal {
            screen,
            input: input_tx,
            master: Mutex::new(pty.master),
            killer: Mutex::new(killer),
            pid,
            exit,
            tmux,
            piped,
        })
    }
}

/// What creating `session` failed with, as a start's error.
fn creation_error(session: &TmuxSession, e: TmuxError) -> TerminalError {
    TerminalError::Spawn { program: session.tmux_program().to_string_lossy().into_owned(), source: e.into() }
}

impl Terminal {
    /// Starts the child on a new PTY and the session threads.
    pub fn spawn(config: TerminalConfig, host: Arc<dyn TerminalHost>) -> Result<Self, TerminalError> {
        let pending = Pending::prepare(config)?;
        if let Some((session, request)) = pending.new_session() {
            session.create(&request).map_err(|e| creation_error(session, e))?;
        }
        pending.start(host)
    }

    /// Starts every terminal of `batch`, answering each one's outcome in
    /// order, as [`Self::spawn`] would one by one. The new tmux sessions among
    /// them are created together, with as few tmux commands as fit (see
    /// [`crate::tmux`]), then the PTYs start [`PARALLEL_STARTS`] at a time.
    pub fn spawn_many(batch: Vec<(TerminalConfig, Arc<dyn TerminalHost>)>) -> Vec<Result<Self, TerminalError>> {
        let mut pending: Vec<Result<(Pending, Arc<dyn TerminalHost>), _>> =
            batch.into_iter().map(|(config, host)| Pending::prepare(config).map(|p| (p, host))).collect();
        let wanted: Vec<(usize, &TmuxSession, NewSession)> = pending
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let (session, request) = p.as_ref().ok()?.0.new_session()?;
                Some((i, session, request))
            })
            .collect();
        let requests: Vec<(&TmuxSession, &NewSession)> = wanted.iter().map(|(_, s, r)| (*s, r)).collect();
        let failed: Vec<(usize, TerminalError)> = tmux::create_many(&requests)
            .into_iter()
            .zip(&wanted)
            .filter_map(|(created, (i, session, _))| Some((*i, creation_error(session, created.err()?))))
            .collect();
        for (i, e) in failed {
            pending[i] = Err(e);
        }

        let count = pending.len();
        let queue = std::sync::Mutex::new(pending.into_iter().enumerate());
        let started = std::sync::Mutex::new(Vec::with_capacity(count));
        std::thread::scope(|scope| {
            for _ in 0..PARALLEL_STARTS.min(count) {
                scope.spawn(|| loop {
                    let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                    let Some((i, p)) = next else { break };
                    let outcome = p.and_then(|(p, host)| p.start(host));
                    started.lock().unwrap_or_else(PoisonError::into_inner).push((i, outcome));
                });
            }
        });
        let mut started = started.into_inner().unwrap_or_else(PoisonError::into_inner);
        started.sort_by_key(|(i, _)| *i);
        started.into_iter().map(|(_, outcome)| outcome).collect()
    }

    /// Sends raw bytes to the program (already-encoded keys, mouse reports, paste).
    /// Never blocks: a writer thread drains the queue.
    pub fn write(&self, bytes: impl Into<Vec<u8>>) -> Result<(), TerminalError> {
        let bytes = bytes.into();
        if bytes.is_empty() {
            return Ok(());
        }
        self.input.send(bytes).map_err(|_| TerminalError::WriterClosed)
    }

    /// Encodes and sends a key press, honouring the program's current modes.
    pub fn send_key(&self, key: crate::keys::Key, mods: crate::keys::Modifiers) -> Result<(), TerminalError> {
        RunningTerminal::send_key(self, key, mods)
    }

    /// Pastes text (bracketed when the program asked for it).
    pub fn paste(&self, text: &str) -> Result<(), TerminalError> {
        RunningTerminal::paste(self, text)
    }

    /// Resizes the grid and the PTY (the child gets SIGWINCH).
    pub fn resize(&self, size: TermSize) -> Result<(), TerminalError> {
        self.screen.lock().resize(size)?;
        self.master.lock().resize(pty_size(size)).map_err(|e| TerminalError::Resize(e.into()))
    }

    /// Runs `f` with the screen locked (snapshot, selection, scrolling). Keep it short:
    /// the parser waits for the lock.
    pub fn with_screen<R>(&self, f: impl FnOnce(&mut Screen) -> R) -> R {
        f(&mut self.screen.lock())
    }

    /// A drawable copy of the visible grid.
    pub fn snapshot(&self) -> GridSnapshot {
        self.screen.lock().snapshot()
    }

    /// See [`Screen::generation`]: compare with the last drawn frame's value.
    pub fn generation(&self) -> u64 {
        self.screen.lock().generation()
    }

    /// Current input modes (for key, mouse and wheel encoding).
    pub fn input_modes(&self) -> InputModes {
        self.screen.lock().input_modes()
    }

    /// When the program last produced output.
    pub fn last_output_at(&self) -> Option<Instant> {
        self.screen.lock().last_output_at()
    }

    /// Text for agents: the last `max_chars` of history and screen. Inside tmux the
    /// pane's own history is read (falling back to the screen if tmux fails); once
    /// the program ended, the screen holds the pane's captured history.
    pub fn read_text(&self, max_chars: usize) -> String {
        if let Some(session) = self.tmux.as_ref().filter(|_| self.exit_status().is_none()) {
            match session.capture_text(max_chars) {
                Ok(text) => return text,
                Err(e) => tracing::warn!(error = %e, "tmux capture failed; using the visible screen"),
            }
        }
        self.screen.lock().read_text(max_chars)
    }

    /// The child's process id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The tmux session backing this terminal, if any.
    pub fn tmux_session(&self) -> Option<&TmuxSession> {
        self.tmux.as_ref()
    }

    /// The exit status, once the child has exited and been reaped.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exit.status.lock().clone()
    }

    /// Blocks up to `timeout` for the child to exit (for shutdown paths and tests).
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        self.exit.wait(timeout)
    }

    /// Sends SIGHUP to the child (for a tmux client: detach).
    pub fn hangup(&self) {
        if self.exit_status().is_none() {
            if let Err(e) = self.killer.lock().kill() {
                tracing::debug!(error = %e, "hangup of terminal child failed");
            }
        }
    }
}

impl RunningTerminal for Terminal {
    fn write(&self, bytes: Vec<u8>) -> Result<(), TerminalError> {
        Terminal::write(self, bytes)
    }
    fn resize(&self, size: TermSize) -> Result<(), TerminalError> {
        Terminal::resize(self, size)
    }
    fn lock_screen(&self, f: &mut dyn FnMut(&mut Screen)) {
        self.with_screen(f)
    }
    fn read_text(&self, max_chars: usize) -> String {
        Terminal::read_text(self, max_chars)
    }
    fn exit_status(&self) -> Option<ExitStatus> {
        Terminal::exit_status(self)
    }
    fn snapshot(&self) -> GridSnapshot {
        Terminal::snapshot(self)
    }
    fn generation(&self) -> u64 {
        Terminal::generation(self)
    }
    fn input_modes(&self) -> InputModes {
        Terminal::input_modes(self)
    }
    fn last_output_at(&self) -> Option<Instant> {
        Terminal::last_output_at(self)
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // A detached pane's `cat` would otherwise linger until the pane next writes.
        if let Some(session) = self.tmux.as_ref().filter(|_| self.piped && self.exit_status().is_none()) {
            if let Err(e) = session.close_pipe() {
                tracing::debug!(error = %e, "closing a tmux pane's signal pipe failed");
            }
        }
        // SIGHUP, as a closing terminal window would. The writer thread keeps the PTY
        // writer until the child is gone (see WRITER_CLOSE_WAIT).
        self.hangup();
    }
}

/// The program the node runs and its arguments (the user's shell by default).
fn program_of(config: &TerminalConfig) -> (OsString, Vec<OsString>) {
    match &config.command {
        Some(spec) => (spec.program.clone().into(), spec.args.iter().map(OsString::from).collect()),
        None => (default_shell(), Vec::new()),
    }
}

fn default_shell() -> OsString {
    std::env::var_os("SHELL")
        .filter(|s| !s.is_empty() && Path::new(s).is_absolute())
        .unwrap_or_else(|| "/bin/sh".into())
}

fn pty_size(size: TermSize) -> PtySize {
    PtySize {
        rows: size.rows,
        cols: size.cols,
        pixel_width: size.cols.saturating_mul(size.cell_width),
        pixel_height: size.rows.saturating_mul(size.cell_height),
    }
}

fn spawn_thread(name: &'static str, f: impl FnOnce() + Send + 'static) -> Result<(), TerminalError> {
    std::thread::Builder::new().name(name.to_owned()).spawn(f).map(|_| ()).map_err(|e| TerminalError::Thread(name, e))
}

/// Reads the PTY and hands its output to the parser thread. Keeping reads
/// apart from parsing lets the kernel's tty pipeline (a 4 KiB line-discipline
/// buffer refilled by a kernel worker) move on while a chunk is parsed: on two
/// cores, parsing on this thread measured 0.73x of alacritty_terminal alone
/// and batching queued chunks under one lock 0.82x (bench/terminal-flood, no
/// frames drawn). While the parser is behind, reads keep going and coalesce
/// (up to [`MAX_COALESCED`]) instead of blocking on the full queue, so the PTY
/// never stalls and the parser gets fewer, larger chunks: 0.88x before this,
/// 0.97-0.99x with it. Output is still handed over at once whenever the parser
/// keeps up, so interactive latency is unchanged.
fn reader_loop(mut reader: Box<dyn Read + Send>, tx: SyncSender<ParserMsg>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                pending.extend_from_slice(&buf[..n]);
                match tx.try_send(ParserMsg::Data(std::mem::take(&mut pending))) {
                    Ok(()) => {}
                    Err(TrySendError::Full(ParserMsg::Data(back))) => {
                        pending = back;
                        // Memory stays bounded: past the cap, wait for the parser.
                        if pending.len() >= MAX_COALESCED
                            && tx.send(ParserMsg::Data(std::mem::take(&mut pending))).is_err()
                        {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            // Linux: EIO once every slave fd is closed, i.e. end of file.
            Err(e) if e.raw_os_error() == Some(5) => break,
            Err(e) => {
                tracing::warn!(error = %e, "terminal pty read failed");
                break;
            }
        }
    }
    if !pending.is_empty() && tx.send(ParserMsg::Data(pending)).is_err() {
        return;
    }
    let _ = tx.send(ParserMsg::Eof);
}

fn writer_loop(mut writer: Box<dyn Write + Send>, input: Receiver<Vec<u8>>, exit: Arc<ExitCell>) {
    for bytes in input.iter() {
        if let Err(e) = writer.write_all(&bytes).and_then(|()| writer.flush()) {
            tracing::debug!(error = %e, "terminal pty write failed");
            break;
        }
    }
    exit.wait(WRITER_CLOSE_WAIT);
    drop(writer);
}

fn parser_loop(
    rx: Receiver<ParserMsg>,
    screen: Arc<Mutex<Screen>>,
    input: Sender<Vec<u8>>,
    host: Arc<dyn TerminalHost>,
) {
    let mut eof = false;
    let mut exited: Option<(ExitStatus, Option<Vec<u8>>, Instant)> = None;
    loop {
        let sync_deadline = screen.lock().sync_deadline();
        let exit_deadline = exited.as_ref().map(|(_, _, at)| *at + EXIT_DRAIN_GRACE);
        let deadline = match (sync_deadline, exit_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let msg = match deadline {
            Some(deadline) => match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(msg) => Some(msg),
                Err(_) => break,
            },
        };
        let events = {
            let mut screen = screen.lock();
            match &msg {
                Some(ParserMsg::Data(bytes)) => screen.feed(bytes),
                Some(_) => {}
                None => {
                    if screen.sync_deadline().is_some_and(|d| d <= Instant::now()) {
                        screen.flush_sync();
                    }
                }
            }
            screen.take_events()
        };
        dispatch(&events, &input, host.as_ref());
        match msg {
            Some(ParserMsg::Data(_)) => host.wakeup(),
            Some(ParserMsg::Eof) => eof = true,
            Some(ParserMsg::Exited(status, trace)) => exited = Some((status, trace, Instant::now())),
            Some(ParserMsg::Signals(signals)) => signals.into_iter().for_each(|signal| host.signal(signal)),
            None => host.wakeup(),
        }
        if let Some((status, trace, at)) = &exited {
            if eof || Instant::now() >= *at + EXIT_DRAIN_GRACE {
                {
                    let mut screen = screen.lock();
                    screen.flush_sync();
                    if let Some(trace) = trace {
                        screen.replace_with(trace);
                    }
                }
                host.wakeup();
                tracing::debug!(code = status.code, "terminal child exited");
                host.exited(status.clone());
                return;
            }
        }
    }
}

fn dispatch(events: &[ScreenEvent], input: &Sender<Vec<u8>>, host: &dyn TerminalHost) {
    for event in events {
        match event {
            ScreenEvent::Title(title) => host.title_changed(title.clone()),
            ScreenEvent::Bell => host.bell(),
            ScreenEvent::ClipboardStore(text) => host.clipboard_store(text.clone()),
            ScreenEvent::Signal(signal) => host.signal(signal.clone()),
            ScreenEvent::PtyWrite(bytes) => {
                // The writer is gone only after the child exited; replies no longer matter.
                let _ = input.send(bytes.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PTY stand-in: `reads` reads of 1,000 bytes, each filled with its sequence number.
    struct Numbered {
        next: u32,
        reads: u32,
    }

    impl Read for Numbered {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.next == self.reads {
                return Ok(0);
            }
            buf[..1000].fill((self.next % 251) as u8);
            self.next += 1;
            Ok(1000)
        }
    }

    #[test]
    fn output_read_while_the_parser_lags_arrives_whole_in_order_and_coalesced() {
        let (tx, rx) = mpsc::sync_channel(READ_QUEUE_DEPTH);
        let reader = std::thread::spawn(move || reader_loop(Box::new(Numbered { next: 0, reads: 5000 }), tx));
        // The parser lags: the reader fills the queue long before anything is taken.
        std::thread::sleep(Duration::from_millis(300));
        let (mut bytes, mut messages) = (Vec::new(), 0);
        loop {
            match rx.recv_timeout(Duration::from_secs(10)).expect("the reader stalled") {
                ParserMsg::Data(d) => {
                    assert!(d.len() <= MAX_COALESCED + 64 * 1024, "a chunk of {} bytes exceeds the cap", d.len());
                    bytes.extend_from_slice(&d);
                    messages += 1;
                }
                ParserMsg::Eof => break,
                ParserMsg::Exited(..) | ParserMsg::Signals(_) => unreachable!("the reader reports only output"),
            }
        }
        reader.join().unwrap();
        assert_eq!(bytes.len(), 5_000_000, "output lost or duplicated");
        assert!(
            bytes.chunks(1000).enumerate().all(|(i, c)| c.iter().all(|&b| b == (i % 251) as u8)),
            "output out of order"
        );
        assert!(messages < 500, "{messages} messages for 5,000 reads: nothing was coalesced");
    }
}
