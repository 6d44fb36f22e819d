//! Shared helpers for the PTY-level tests: a recording host and polling waits.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use terminal::{ExitStatus, Terminal, TerminalHost, TerminalSignal};

/// Generous: these tests run on a loaded 2-core machine.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Everything the terminal told its host.
#[derive(Default, Debug)]
pub struct Recorded {
    pub wakeups: usize,
    pub titles: Vec<Option<String>>,
    pub bells: usize,
    pub clipboard: Vec<String>,
    pub exits: Vec<ExitStatus>,
    pub signals: Vec<TerminalSignal>,
}

/// A host that records callbacks and lets tests wait for them.
#[derive(Default)]
pub struct TestHost {
    pub recorded: Mutex<Recorded>,
    changed: Condvar,
}

impl TestHost {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Waits until `pred` holds on the recorded callbacks.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&Recorded) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        let mut rec = self.recorded.lock();
        while !pred(&rec) {
            if self.changed.wait_until(&mut rec, deadline).timed_out() {
                panic!("timed out waiting for {what}; recorded: {rec:?}");
            }
        }
    }

    pub fn wait_exit(&self) -> ExitStatus {
        self.wait_for("exit", |r| !r.exits.is_empty());
        self.recorded.lock().exits[0].clone()
    }

    fn update(&self, f: impl FnOnce(&mut Recorded)) {
        f(&mut self.recorded.lock());
        self.changed.notify_all();
    }
}

impl TerminalHost for TestHost {
    fn wakeup(&self) {
        self.update(|r| r.wakeups += 1);
    }
    fn title_changed(&self, title: Option<String>) {
        self.update(|r| r.titles.push(title));
    }
    fn bell(&self) {
        self.update(|r| r.bells += 1);
    }
    fn clipboard_store(&self, text: String) {
        self.update(|r| r.clipboard.push(text));
    }
    fn exited(&self, status: ExitStatus) {
        self.update(|r| r.exits.push(status));
    }
    fn signal(&self, signal: TerminalSignal) {
        self.update(|r| r.signals.push(signal));
    }
}

/// All visible rows as text.
pub fn screen_text(term: &Terminal) -> String {
    let snap = term.snapshot();
    (0..snap.rows).map(|r| snap.row_text(r)).collect::<Vec<_>>().join("\n")
}

/// Polls the screen until `pred` holds.
pub fn wait_screen(term: &Terminal, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = screen_text(term);
        if pred(&text) {
            return text;
        }
        if Instant::now() > deadline {
            panic!("timed out waiting for {what}; screen:\n{text}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls an arbitrary condition.
pub fn wait_until(what: &str, pred: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !pred() {
        if Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` still has a /proc entry (alive or zombie).
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Pids of processes named `comm` whose parent is `ppid`.
pub fn children_named(ppid: u32, comm: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // comm is in parentheses and may contain spaces; fields after the last ')'.
        let Some(close) = stat.rfind(')') else { continue };
        let name = stat[..close].split_once('(').map(|(_, n)| n).unwrap_or("");
        let parent = stat[close + 1..].split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if name == comm && parent == Some(ppid) {
            found.push(pid);
        }
    }
    found
}
