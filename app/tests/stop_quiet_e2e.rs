//! Stopping and quiet output end to end (issue 16), with the real headless
//! app and real CEF:
//!
//! - SIGTERM always stops the app: 50 fresh apps, each sent one SIGTERM at a
//!   random moment of start-up or use (tool calls running), all exit within
//!   10 s, remove their endpoint files and leave no Chromium process;
//! - the app's stderr carries its own log only: a start and stop of the app,
//!   and a `termsprawl shot`, print no Chromium log line, and Chromium's
//!   lines are in its log file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/mod.rs"]
mod support;
use support::{ctl, kill_tmux, serve_page};

const APP: &str = env!("CARGO_BIN_EXE_termsprawl");

/// One Chromium-running test at a time: the SIGTERM test starts several apps at once already.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

fn sigterm(pid: u32) {
    // SAFETY: kill(2) on this test's own child.
    unsafe { libc_kill(pid as i32, 15) };
}

/// A Chromium log line: `[pid:tid:MMDD/HHMMSS.micros:SEVERITY:file.cc(line)] …`.
fn is_chromium_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else { return false };
    let Some((head, _)) = rest.split_once("] ") else { return false };
    let fields: Vec<&str> = head.split(':').collect();
    fields.len() >= 5
        && fields[0].chars().all(|c| c.is_ascii_digit())
        && ["INFO", "WARNING", "ERROR", "FATAL", "VERBOSE1", "VERBOSE2"].contains(&fields[3])
}

#[test]
fn the_chromium_line_pattern_matches_chromium_and_not_the_app() {
    assert!(is_chromium_line(
        "[26053:26146:1202/014031.684670:ERROR:bus.cc(407)] Failed to connect to the bus: Failed to connect to socket"
    ));
    assert!(is_chromium_line("[13527:13527:1202/015014.277516:WARNING:chrome_main_delegate.cc(675)] This is Chrome"));
    assert!(!is_chromium_line("2026-12-02T01:50:14.657066Z  WARN termsprawl: a line of the app"));
    assert!(!is_chromium_line("termsprawl: wrote out.png (1280x800)"));
}

fn headless(data: &Path, proj: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(APP);
    cmd.arg("--headless").arg("--data-dir").arg(data).arg("--project").arg(proj);
    cmd.args(["--agent", "agent-1", "--agent-browser-control"]);
    cmd.env("HOME", home).env("SHELL", "/bin/bash").env_remove("TERMSPRAWL_DATA_DIR").env_remove("TERMSPRAWL_NODE_ID");
    cmd.env("RUST_LOG", "warn");
    cmd
}

/// Processes (other than `except`) running this binary for the profile under `data`: Chromium helpers.
fn chromium_processes(data: &Path) -> Vec<u32> {
    let needle = format!("--user-data-dir={}", data.join("browser-profile").display());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).split('\0').any(|a| a == needle)
        })
        .collect()
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A small xorshift generator: the delays differ run to run (seeded from the clock) and the seed is printed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What became of one app.
#[derive(Debug)]
struct Outcome {
    delay_ms: u64,
    was_ready: bool,
    status: Option<std::process::ExitStatus>,
    exit_time: Duration,
    files_left: Vec<PathBuf>,
    helpers_left: Vec<u32>,
}

fn one_app(root: &Path, delay: Duration) -> Outcome {
    let data = root.join("data");
    let proj = root.join("proj");
    let home = root.join("home");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let log = std::fs::File::create(root.join("app.log")).unwrap();
    let mut child = headless(&data, &proj, &home).stdout(Stdio::piped()).stderr(log).spawn().unwrap();
    let ready = Arc::new(AtomicBool::new(false));
    let out = BufReader::new(child.stdout.take().unwrap());
    let r = ready.clone();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if line.contains("browser agent server") {
                r.store(true, Ordering::SeqCst);
            }
        }
    });
    // Use: tool calls keep running from the moment the tool server is up.
    let done = Arc::new(AtomicBool::new(false));
    let user = {
        let (done, data) = (done.clone(), data.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if data.join("agent-tools/endpoint.json").is_file() {
                    // Fails once the app is gone: only the load matters here.
                    let _ = Command::new(env!("CARGO_BIN_EXE_termsprawl-ctl"))
                        .arg("--data-dir")
                        .arg(&data)
                        .args(["--node", "agent-1", "call", "canvas_list", "{}"])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status();
                }
                std::thread::sleep(Duration::from_millis(30));
            }
        })
    };
    std::thread::sleep(delay);
    let was_ready = ready.load(Ordering::SeqCst);
    sigterm(child.id());
    let sent = Instant::now();
    let status = wait_exit(&mut child, Duration::from_secs(10));
    let exit_time = sent.elapsed();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    done.store(true, Ordering::SeqCst);
    let _ = user.join();
    let files_left: Vec<PathBuf> = [data.join("agent-tools/endpoint.json"), data.join("browser-agent.json")]
        .into_iter()
        .filter(|p| p.exists())
        .collect();
    // The app reaps its helpers before it exits; allow a moment for a kernel-side exit in flight.
    let end = Instant::now() + Duration::from_secs(2);
    let mut helpers_left = chromium_processes(&data);
    while !helpers_left.is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
        helpers_left = chromium_processes(&data);
    }
    for pid in &helpers_left {
        // SAFETY: kill(2) on a helper of this test's own app, so it does not outlive the test.
        unsafe { libc_kill(*pid as i32, 9) };
    }
    kill_tmux(&data);
    Outcome { delay_ms: delay.as_millis() as u64, was_ready, status, exit_time, files_left, helpers_left }
}

/// Fifty fresh apps, three at a time, each sent one SIGTERM at a random
/// moment between its start and a few seconds of use: every one exits within
/// 10 s, removes its endpoint files and leaves no Chromium process.
#[test]
fn sigterm_stops_every_app_at_any_moment() {
    let _serial = serial();
    const APPS: usize = 50;
    const AT_ONCE: usize = 3;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("sigterm test seed {seed}");
    let mut rng = Rng(seed);
    // Up to 6 s: start-up takes 1–4 s here, so about half land after the app is ready.
    let delays: Vec<Duration> = (0..APPS).map(|_| Duration::from_millis(rng.next() % 6000)).collect();
    let tmp = support::TestRoot::new();
    let (tx, rx) = mpsc::channel();
    for batch in delays.chunks(AT_ONCE).enumerate() {
        let (b, batch) = batch;
        let handles: Vec<_> = batch
            .iter()
            .enumerate()
            .map(|(i, delay)| {
                let root = tmp.path().join(format!("app-{}", b * AT_ONCE + i));
                let (tx, delay) = (tx.clone(), *delay);
                std::thread::spawn(move || {
                    let outcome = one_app(&root, delay);
                    let log = std::fs::read_to_string(root.join("app.log")).unwrap_or_default();
                    tx.send((root, outcome, log)).unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    drop(tx);
    let outcomes: Vec<(PathBuf, Outcome, String)> = rx.into_iter().collect();
    assert_eq!(outcomes.len(), APPS);
    let ready = outcomes.iter().filter(|(_, o, _)| o.was_ready).count();
    let clean = outcomes.iter().filter(|(_, o, _)| o.status.is_some_and(|s| s.success())).count();
    let slowest = outcomes.iter().map(|(_, o, _)| o.exit_time).max().unwrap_or_default();
    eprintln!(
        "{APPS} apps: {ready} signalled after they were ready, {clean} exited 0 (the rest by the signal, \
         before the app took it over), slowest exit {slowest:?}"
    );
    let bad: Vec<String> = outcomes
        .iter()
        .filter(|(_, o, _)| o.status.is_none() || !o.files_left.is_empty() || !o.helpers_left.is_empty())
        .map(|(root, o, log)| {
            format!("{}: {o:?}\n{}", root.display(), log.lines().rev().take(15).collect::<Vec<_>>().join("\n"))
        })
        .collect();
    assert!(bad.is_empty(), "apps that did not stop cleanly after one SIGTERM:\n{}", bad.join("\n\n"));
    // An app signalled once it was up always went through its own shutdown.
    let abrupt: Vec<u64> = outcomes
        .iter()
        .filter(|(_, o, _)| o.was_ready && !o.status.is_some_and(|s| s.success()))
        .map(|(_, o, _)| o.delay_ms)
        .collect();
    assert!(abrupt.is_empty(), "ready apps killed by SIGTERM instead of shutting down (delays in ms): {abrupt:?}");
}

/// A start and stop of the headless app prints no Chromium line on stderr;
/// Chromium's log file has them.
#[test]
fn the_app_stderr_has_no_chromium_lines() {
    let _serial = serial();
    let tmp = support::TestRoot::new();
    let (data, proj, home) = (tmp.path().join("data"), tmp.path().join("proj"), tmp.path().join("home"));
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let mut child = headless(&data, &proj, &home).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let err_lines =
        std::thread::spawn(move || BufReader::new(stderr).lines().map_while(Result::ok).collect::<Vec<_>>());
    let out = BufReader::new(child.stdout.take().unwrap());
    for line in out.lines().map_while(Result::ok) {
        if line.contains("browser agent server") {
            break;
        }
    }
    // A page, so renderers and the network service log too.
    let page = serve_page("<!doctype html><title>quiet</title><p>quiet page</p>");
    let node = ctl(&data, "agent-1", "browser_open", serde_json::json!({"url": page})).expect("browser_open");
    let node = node["nodeId"].as_str().expect("nodeId").to_owned();
    let text = ctl(&data, "agent-1", "browser_inspect", serde_json::json!({"nodeId": node})).expect("browser_inspect");
    assert!(text["text"].as_str().unwrap_or_default().contains("quiet page"), "{text}");
    sigterm(child.id());
    let status = wait_exit(&mut child, Duration::from_secs(20)).expect("the app did not exit after SIGTERM");
    kill_tmux(&data);
    assert!(status.success(), "exit status {status}");
    let err = err_lines.join().unwrap();
    let chromium: Vec<&String> = err.iter().filter(|l| is_chromium_line(l) || l.contains("bus.cc")).collect();
    assert!(chromium.is_empty(), "Chromium lines on the app's stderr:\n{chromium:#?}");
    let log = std::fs::read_to_string(data.join("browser-profile/chromium.log")).expect("chromium.log");
    assert!(log.lines().any(|l| is_chromium_line(l) && l.contains("This is Chrome version")), "chromium.log:\n{log}");
}

/// `termsprawl shot` prints only its own line; `--chromium-log` keeps Chromium's.
#[test]
fn a_shot_prints_no_chromium_lines() {
    let _serial = serial();
    let tmp = support::TestRoot::new();
    let page = serve_page("<!doctype html><title>shot</title><p style='font-size:40px'>quiet shot</p>");
    let png = tmp.path().join("out.png");
    let log = tmp.path().join("chromium.log");
    let out = Command::new(APP)
        .args(["shot", &page, "--size", "400x300", "-o"])
        .arg(&png)
        .arg("--chromium-log")
        .arg(&log)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "shot failed: {stderr}");
    assert!(png.is_file());
    let chromium: Vec<&str> = stderr.lines().filter(|l| is_chromium_line(l) || l.contains("bus.cc")).collect();
    assert!(chromium.is_empty(), "Chromium lines on the shot's stderr:\n{chromium:#?}");
    assert!(stderr.lines().any(|l| l.starts_with("termsprawl: wrote ")), "stderr: {stderr}");
    let text = std::fs::read_to_string(&log).expect("the --chromium-log file");
    assert!(text.lines().any(|l| is_chromium_line(l) && l.contains("This is Chrome version")), "chromium log:\n{text}");
}
