//! Hardening end to end (issue 7): the real headless app (real CEF, real
//! PTYs, tmux) as a child process, driven through the real `termsprawl-ctl`.
//!
//! - secrets: neither the tool session token nor the CDP facade token shows
//!   up in any log line, stdout line, argv or environment of the app, its
//!   CEF helpers, its shells or the tmux server, nor in an error body;
//! - files: under `umask 000` the private state is still 0700/0600, a
//!   planted session-file symlink is refused (and its target untouched), a
//!   second instance on the same data dir is refused and changes nothing,
//!   a full disk leaves the previous files intact and is reported;
//! - faults: kill -9 of a renderer (pending call fails fast, reload works,
//!   others unaffected), of a terminal's shell (node shows it, app stays
//!   up), of tmux (nodes show it, new terminals start a new server, old
//!   nodes work again after a restart), and of the app itself: once settled,
//!   and round after round in the middle of layout, owner-map and session
//!   writes with a CDP client attached (nothing quarantined, nothing saved
//!   lost, sessions and owners kept);
//! - clients vanishing mid-request (half-sent bodies, gone during a slow
//!   call or an awaited evaluate, mid-frame): others unaffected, no leak;
//! - a stalled main thread (ptrace stops just that thread): a tool call
//!   fails at 10 s with a clear error, the servers answer meanwhile, and the
//!   timed-out operation is never applied afterwards;
//! - hostile connections: 10,000 idle half-sent requests against each server
//!   in turn while real calls on all three keep answering, memory and fds
//!   bounded.
//!
//! The tests share one lock: each starts Chromium, and running them side by
//! side on a small machine would blur the "fails fast" measurements.

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/mod.rs"]
mod support;
use support::{ctl, eventually, kill_tmux};

const APP: &str = env!("CARGO_BIN_EXE_termsprawl");

/// One Chromium-running test at a time (see the module doc).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A page that, opened with `?spin`, busy-loops its renderer 1.5 s after load
/// (so a DevTools call sent then never gets an answer until the renderer dies).
const PAGE: &str = r#"<!doctype html><title>hardening page</title><p id=p>steady text</p>
<script>if (location.search === '?spin') addEventListener('load', () => setTimeout(() => { for (;;) {} }, 1500));</script>"#;

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a pid this test found among its own app's processes.
    assert_eq!(unsafe { libc_kill(pid as i32, sig) }, 0, "kill({pid}, {sig})");
}

/// kill(2) for a process that may already be gone (a helper that just exited).
fn signal_quietly(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a pid found among this test's app's processes.
    unsafe { libc_kill(pid as i32, sig) };
}

/// One running app instance; its stdout lines are kept (they are logs too).
struct App {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
}

struct Opts<'a> {
    extra: &'a [&'a str],
    umask000: bool,
    rust_log: &'a str,
}

impl App {
    fn command(root: &Path, data: &Path, proj: &Path, o: &Opts) -> Command {
        let mut args: Vec<String> = vec![
            "--headless".into(),
            "--data-dir".into(),
            data.display().to_string(),
            "--project".into(),
            proj.display().to_string(),
        ];
        args.extend(o.extra.iter().map(|s| s.to_string()));
        let mut cmd = if o.umask000 {
            // exec keeps the pid, so the child's pid is the app's.
            let mut c = Command::new("sh");
            c.arg("-c").arg("umask 000; exec \"$0\" \"$@\"").arg(APP).args(&args);
            c
        } else {
            let mut c = Command::new(APP);
            c.args(&args);
            c
        };
        // <root>/bin first: stand-in agent CLIs a test puts there.
        cmd.env("HOME", root.join("home"))
            .env("SHELL", "/bin/bash")
            .env("PATH", format!("{}:/usr/bin:/bin", root.join("bin").display()));
        cmd.env_remove("TERMSPRAWL_DATA_DIR").env_remove("TERMSPRAWL_NODE_ID");
        cmd.env("RUST_LOG", o.rust_log);
        cmd
    }

    fn start(root: &Path, data: &Path, proj: &Path, o: Opts) -> App {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(root.join("app.log")).unwrap();
        let mut child = Self::command(root, data, proj, &o).stdout(Stdio::piped()).stderr(log).spawn().unwrap();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        let lines = stdout.clone();
        // Keep draining stdout (so the app never blocks on a full pipe) and keep every line.
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if line.contains("browser agent server") {
                    let _ = tx.send(());
                }
                lines.lock().unwrap().push(line);
            }
        });
        // The browser agent server line is printed last: every service is up.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if rx.recv_timeout(Duration::from_millis(200)).is_ok() {
                break;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("app exited before its services started ({status}):\n{}", tail(&root.join("app.log"), 30));
            }
            assert!(Instant::now() < deadline, "app did not start:\n{}", tail(&root.join("app.log"), 30));
        }
        assert!(data.join("agent-tools/endpoint.json").is_file());
        App { child, stdout }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn kill9(mut self) {
        kill(self.pid(), 9);
        let _ = self.child.wait();
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        kill(self.pid(), 15);
        wait_exit(&mut self.child, 30).expect("app did not exit after SIGTERM")
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn wait_exit(child: &mut Child, secs: u64) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn ok(data: &Path, op: &str, args: Value) -> Value {
    ctl(data, "agent-1", op, args.clone()).unwrap_or_else(|e| panic!("{op} {args}: {e}"))
}

fn node_ids(data: &Path) -> HashSet<String> {
    ok(data, "canvas_list", json!({}))
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_owned())
        .collect()
}

fn session_token(data: &Path, node: &str) -> String {
    let v: Value =
        serde_json::from_slice(&std::fs::read(data.join(format!("agent-tools/sessions/{node}.json"))).unwrap())
            .unwrap();
    v["token"].as_str().unwrap().to_owned()
}

fn facade_token(data: &Path) -> String {
    let v: Value = serde_json::from_slice(&std::fs::read(data.join("browser-agent.json")).unwrap()).unwrap();
    v["token"].as_str().unwrap().to_owned()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).mode() & 0o7777
}

/// Every process as pid -> parent pid.
fn process_parents() -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // The comm field may hold spaces or parentheses; the fields after the last ')' do not.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            out.insert(pid, ppid);
        }
    }
    out
}

/// `roots` and all their descendants.
fn with_descendants(roots: &[u32]) -> Vec<u32> {
    let parents = process_parents();
    let mut set: HashSet<u32> = roots.iter().copied().collect();
    loop {
        let before = set.len();
        for (pid, ppid) in &parents {
            if set.contains(ppid) {
                set.insert(*pid);
            }
        }
        if set.len() == before {
            break;
        }
    }
    let mut v: Vec<u32> = set.into_iter().collect();
    v.sort();
    v
}

fn cmdline(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// The tmux server serving `data`'s socket: it daemonises, so it is no
/// descendant of the app; found by the socket path in its argv.
fn tmux_servers(data: &Path) -> Vec<u32> {
    let sock = data.join("tmux/termsprawl.sock").display().to_string();
    process_parents().keys().copied().filter(|p| String::from_utf8_lossy(&cmdline(*p)).contains(&sock)).collect()
}

/// The pid of the tmux server itself (its clients carry the socket in argv too).
fn tmux_server_pid(data: &Path) -> Option<u32> {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(data.join("tmux/termsprawl.sock"))
        .args(["display-message", "-p", "#{pid}"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|c| c.trim().to_owned())
        .collect()
}

/// The app's renderer processes: its own executable, with a "Compositor"
/// thread but not the GPU process's "VizCompositorTh" (as cef-bridge's engine tests).
fn renderers(app: u32) -> Vec<u32> {
    let exe = std::fs::read_link(format!("/proc/{app}/exe")).unwrap();
    with_descendants(&[app])
        .into_iter()
        .filter(|p| *p != app && std::fs::read_link(format!("/proc/{p}/exe")).ok().as_ref() == Some(&exe))
        .filter(|p| {
            let t = thread_names(*p);
            t.iter().any(|n| n == "Compositor") && !t.iter().any(|n| n == "VizCompositorTh")
        })
        .collect()
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state(0) ppid(1) … utime(11) stime(12).
    f.get(11).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// Runs `f` with the tmux servers and mounts cleaned up and the app log shown on failure.
fn guarded(root: &Path, datas: &[&Path], mounts: &[PathBuf], f: impl FnOnce()) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    for d in datas {
        kill_tmux(d);
    }
    for m in mounts.iter().rev() {
        let _ = Command::new("umount").arg("-l").arg(m).stderr(Stdio::null()).status();
    }
    if let Err(p) = result {
        eprintln!("--- app.log (last lines)\n{}", tail(&root.join("app.log"), 60));
        std::panic::resume_unwind(p);
    }
}

fn setup() -> (support::TestRoot, PathBuf, PathBuf) {
    let tmp = support::TestRoot::new();
    let data = tmp.path().join("data");
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(tmp.path().join("home")).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    (tmp, data, proj)
}

// ---------------------------------------------------------------- secrets

#[test]
fn tokens_appear_in_no_log_argv_environment_or_error_body() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    let page = support::serve_page(PAGE);
    guarded(root, &[&data], &[], || {
        let app = App::start(
            root,
            &data,
            &proj,
            Opts {
                extra: &["--agent", "agent-1", "--agent-browser-control", "--cdp"],
                umask000: false,
                rust_log: "debug",
            },
        );
        let session = session_token(&data, "agent-1");
        let facade = facade_token(&data);
        assert_eq!((session.len(), facade.len() >= 32), (64, true), "unexpected token shapes");

        // Every kind of child: a shell in tmux, a browser's renderer, the CDP facade in use.
        let term = ok(&data, "terminal_open", json!({"title": "shell"}))["nodeId"].as_str().unwrap().to_owned();
        ok(&data, "terminal_submit", json!({"nodeId": term, "text": "echo marker-$((6*7)); env | grep -c TERMSPRAWL"}));
        eventually(20, "the shell", || {
            ok(&data, "terminal_read", json!({"nodeId": term}))["text"]
                .as_str()
                .unwrap()
                .contains("marker-42")
                .then_some(())
        });
        let browser = ok(&data, "browser_open", json!({"url": page}));
        assert_eq!(browser["loaded"], true, "{browser}");
        let facade_port = cdp_port(&data);
        let version = http_get(facade_port, "/json/version", Some(&facade));
        assert!(version.starts_with("HTTP/1.1 200"), "the facade with its token: {version}");

        // Error bodies: a refused call, an unauthenticated request and a bad token.
        let e =
            ctl(&data, "agent-1", "browser_navigate", json!({"nodeId": "nope", "url": "javascript:1"})).unwrap_err();
        assert!(e.starts_with("termsprawl-ctl: "), "{e}");
        let e2 = ctl(&data, "agent-1", "terminal_read", json!({"nodeId": term, "maxChars": -5})).unwrap_err();
        let tool_port = tool_port(&data);
        let wrong = format!("{}0", &session[..63]);
        let bodies = [
            e.clone(),
            e2,
            http_post(tool_port, "/call", &wrong, b"{\"operation\":\"canvas_list\",\"args\":{}}"),
            http_post(tool_port, "/call", &session, b"{\"operation\":\"canvas_list\",\"args\":"),
            http_post(tool_port, "/call", &session, b"{\"operation\":\"no_such_op\"}"),
            http_get(facade_port, "/json/version", Some(&wrong)),
            http_get(facade_port, "/json/list", None),
        ];

        let mut pids = with_descendants(&[app.pid()]);
        let tmux = tmux_servers(&data);
        assert!(!tmux.is_empty(), "no tmux server found for the terminal node");
        pids.extend(with_descendants(&tmux));
        pids.sort();
        pids.dedup();
        // The scan must really cover helpers and shells, or it proves nothing.
        let exe = std::fs::read_link(format!("/proc/{}/exe", app.pid())).unwrap();
        let helpers = pids
            .iter()
            .filter(|p| **p != app.pid() && std::fs::read_link(format!("/proc/{p}/exe")).ok().as_ref() == Some(&exe))
            .count();
        let shells = pids.iter().filter(|p| String::from_utf8_lossy(&cmdline(**p)).contains("bash")).count();
        assert!(
            helpers >= 2 && shells >= 1,
            "too few processes to scan: {helpers} CEF helpers, {shells} shells among {pids:?}"
        );

        let mut leaks = Vec::new();
        for pid in &pids {
            for what in ["cmdline", "environ"] {
                let Ok(bytes) = std::fs::read(format!("/proc/{pid}/{what}")) else { continue };
                for (name, t) in [("session token", &session), ("facade token", &facade)] {
                    if contains(&bytes, t.as_bytes()) {
                        leaks.push(format!(
                            "{name} in /proc/{pid}/{what} ({})",
                            String::from_utf8_lossy(&cmdline(*pid)).replace('\0', " ")
                        ));
                    }
                }
            }
        }
        // Every log: the app's stderr at debug level, its stdout, Chromium's own log.
        let stdout = app.stdout.lock().unwrap().join("\n");
        let mut logs = vec![
            ("stdout".to_owned(), stdout.into_bytes()),
            ("app.log".to_owned(), std::fs::read(root.join("app.log")).unwrap()),
        ];
        for entry in walk(&data.join("browser-profile")) {
            if entry.extension().is_some_and(|e| e == "log") {
                logs.push((entry.display().to_string(), std::fs::read(&entry).unwrap_or_default()));
            }
        }
        // The scan needs the debug log really at debug level (tool calls are logged there).
        let app_log = String::from_utf8_lossy(&logs[1].1);
        assert!(
            app_log.contains("DEBUG") && app_log.contains("browser_open"),
            "the app log is not at debug level:\n{app_log}"
        );
        for (name, bytes) in &logs {
            for (tn, t) in [("session token", &session), ("facade token", &facade)] {
                if contains(bytes, t.as_bytes()) {
                    leaks.push(format!("{tn} in log {name}"));
                }
            }
        }
        for (i, body) in bodies.iter().enumerate() {
            for (tn, t) in [("session token", &session), ("facade token", &facade)] {
                if body.contains(t.as_str()) {
                    leaks.push(format!("{tn} in error body #{i}: {body}"));
                }
            }
        }
        assert!(leaks.is_empty(), "token leaks:\n{}", leaks.join("\n"));
        eprintln!("scanned {} processes ({helpers} CEF helpers) and {} logs", pids.len(), logs.len());
        assert!(app.terminate().success());
    });
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(walk(&p)),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
    out
}

fn tool_port(data: &Path) -> u16 {
    let v: Value = serde_json::from_slice(&std::fs::read(data.join("agent-tools/endpoint.json")).unwrap()).unwrap();
    v["url"].as_str().unwrap().rsplit(':').next().unwrap().trim_end_matches('/').parse().unwrap()
}

fn cdp_port(data: &Path) -> u16 {
    let v: Value = serde_json::from_slice(&std::fs::read(data.join("browser-agent.json")).unwrap()).unwrap();
    let url = v["cdp"].as_str().unwrap_or_else(|| panic!("no cdp URL in browser-agent.json: {v}"));
    url.rsplit(':').next().unwrap().trim_end_matches('/').parse().unwrap()
}

fn http(port: u16, request: &[u8]) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn http_get(port: u16, path: &str, token: Option<&str>) -> String {
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    http(port, format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Connection: close\r\n\r\n").as_bytes())
}

fn http_post(port: u16, path: &str, token: &str, body: &[u8]) -> String {
    let mut req = format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).into_bytes();
    req.extend_from_slice(body);
    http(port, &req)
}

// ---------------------------------------------------------------- files

/// Every file under `dirs` as path -> (size, mtime, mode, content): what "touches nothing" compares.
fn snapshot(dirs: &[&Path]) -> BTreeMap<PathBuf, (u64, i64, i64, u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    for d in dirs {
        for p in walk_all(d) {
            let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
            let content = if m.is_file() { std::fs::read(&p).unwrap_or_default() } else { Vec::new() };
            out.insert(p, (m.len(), m.mtime(), m.mtime_nsec(), m.mode(), content));
        }
    }
    out
}

/// Files, links and directories (the directories themselves too: a new entry changes their mtime).
fn walk_all(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(walk_all(&p)),
            // Sockets (tmux) change nothing by being used; files and links are compared.
            Ok(t) if t.is_file() || t.is_symlink() => out.push(p),
            _ => {}
        }
    }
    out
}

#[test]
fn private_files_symlinks_and_a_second_instance() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let page = support::serve_page(PAGE);
    guarded(root, &[&data], &[], || {
        let opts = || Opts {
            extra: &["--agent", "agent-1", "--agent-browser-control", "--cdp"],
            umask000: true,
            rust_log: "info",
        };
        let app = App::start(root, &data, &proj, opts());
        // The umask really is 000 in the app (or the mode checks below prove nothing).
        let status = std::fs::read_to_string(format!("/proc/{}/status", app.pid())).unwrap();
        assert!(
            status.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["Umask:", "0000"]),
            "app umask: {status}"
        );
        let b = ok(&data, "browser_open", json!({"url": page}))["nodeId"].as_str().unwrap().to_owned();
        eventually(10, "browser-owners.json", || {
            std::fs::read_to_string(data.join("agent-tools/browser-owners.json")).ok().filter(|t| t.contains(&b))
        });
        let tools = data.join("agent-tools");
        for d in [tools.clone(), tools.join("sessions")] {
            assert_eq!(mode(&d), 0o700, "{}", d.display());
        }
        for f in [
            tools.join("sessions/agent-1.json"),
            tools.join("endpoint.json"),
            data.join("browser-agent.json"),
            tools.join("browser-owners.json"),
            tools.join("settings.json"),
            tools.join("server.lock"),
        ] {
            assert_eq!(mode(&f), 0o600, "{}", f.display());
        }
        // And nothing else in the private tree is open to group or others.
        for p in walk_all(&tools) {
            assert_eq!(mode(&p) & 0o077, 0, "{} is group/other accessible", p.display());
        }

        // A second instance on the same data dir: refused, clearly, having changed nothing.
        let watched = [data.as_path(), proj.as_path()];
        // The first instance's Chromium writes to its profile on its own schedule (cache, Web
        // Data): freeze it and its helpers (their locks stay held) while the second one runs,
        // so any change seen is the second instance's doing.
        let frozen = with_descendants(&[app.pid()]);
        for p in &frozen {
            signal_quietly(*p, 19);
        }
        let before = snapshot(&watched);
        let tmux_before = tmux_sessions(&data);
        let mut second =
            App::command(root, &data, &proj, &opts()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let status = wait_exit(&mut second, 60);
        let after = snapshot(&watched);
        for p in &frozen {
            signal_quietly(*p, 18);
        }
        let status = status.expect("the second instance kept running");
        let mut err = String::new();
        second.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(!status.success(), "second instance exited {status}");
        // Whichever guard trips first (the browser profile's or the tool server's lock), it must name the cause.
        assert!(err.contains("another termsprawl instance"), "second instance said: {err}");
        eprintln!("the second instance said: {}", err.trim());
        let changed: Vec<_> = before
            .keys()
            .chain(after.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|p| before.get(*p) != after.get(*p))
            .collect();
        assert!(changed.is_empty(), "the refused second instance changed {changed:#?}\nit said: {err}");
        assert_eq!(tmux_sessions(&data), tmux_before, "the second instance changed the tmux sessions");
        assert_eq!(ok(&data, "session_info", json!({}))["identity"]["nodeId"], "agent-1");
        assert!(ok(&data, "browser_inspect", json!({"nodeId": b}))["text"].as_str().unwrap().contains("steady text"));
        assert!(app.terminate().success());

        // A symlink planted where the session file goes: provisioning refuses it, the target is untouched.
        let victim = root.join("victim.json");
        std::fs::write(&victim, b"precious").unwrap();
        let victim_mode = mode(&victim);
        let session_file = tools.join("sessions/agent-1.json");
        std::fs::remove_file(&session_file).unwrap();
        std::os::unix::fs::symlink(&victim, &session_file).unwrap();
        let mut third =
            App::command(root, &data, &proj, &opts()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let status = wait_exit(&mut third, 60).expect("the app with a planted session link kept running");
        let mut err = String::new();
        third.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(!status.success(), "app with a planted link exited {status}: {err}");
        assert!(err.contains("symbolic link") && err.contains(&session_file.display().to_string()), "app said: {err}");
        eprintln!(
            "with a planted session link the app said: {}",
            err.lines().filter(|l| l.starts_with("termsprawl:")).collect::<Vec<_>>().join(" | ")
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(mode(&victim), victim_mode, "the link target's mode changed");
        assert!(std::fs::symlink_metadata(&session_file).unwrap().file_type().is_symlink());
    });
}

fn tmux_sessions(data: &Path) -> String {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(data.join("tmux/termsprawl.sock"))
        .args(["list-sessions", "-F", "#{session_name} #{session_windows} #{session_width}x#{session_height}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes to `dir` until it reports no space left.
fn fill(dir: &Path) {
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    loop {
        match f.write_all(&chunk) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(28) => break,
            Err(e) => panic!("filling {}: {e}", dir.display()),
        }
    }
    // Small writes too, so not even a partial page is left.
    while f.write_all(b"x").is_ok() {}
}

#[test]
fn a_full_disk_keeps_the_previous_files_and_says_so() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    let (tools, layout_dir) = (data.join("agent-tools"), proj.join(".termsprawl"));
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(&layout_dir).unwrap();
    for m in [&tools, &layout_dir] {
        let out = Command::new("mount").args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"]).arg(m).output().unwrap();
        if !out.status.success() {
            let _ = Command::new("umount").arg(&tools).stderr(Stdio::null()).status();
            support::skip_unless_strict(
                "a_full_disk_keeps_the_previous_files_and_says_so",
                &format!(
                    "mount -t tmpfs refused ({}); the disk-full check needs it",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            );
            return;
        }
    }
    let page = support::serve_page(PAGE);
    guarded(root, &[&data], &[tools.clone(), layout_dir.clone()], || {
        let app = App::start(
            root,
            &data,
            &proj,
            Opts {
                extra: &["--agent", "agent-1", "--agent", "agent-2", "--agent-browser-control"],
                umask000: false,
                rust_log: "info",
            },
        );
        let b = ok(&data, "browser_open", json!({"url": page}))["nodeId"].as_str().unwrap().to_owned();
        let sticky =
            ok(&data, "sticky_open", json!({"text": "before the disk filled"}))["nodeId"].as_str().unwrap().to_owned();
        let layout = layout_dir.join("canvas.json");
        let owners = tools.join("browser-owners.json");
        eventually(15, "the layout with the sticky", || {
            std::fs::read_to_string(&layout).ok().filter(|t| t.contains(&sticky))
        });
        eventually(15, "the owners file", || std::fs::read_to_string(&owners).ok().filter(|t| t.contains(&b)));
        let (layout_before, owners_before) = (std::fs::read(&layout).unwrap(), std::fs::read(&owners).unwrap());
        let log_mark = std::fs::read_to_string(root.join("app.log")).unwrap().len();

        fill(&tools);
        fill(&layout_dir);
        ok(&data, "canvas_move", json!({"nodeId": sticky, "x": 777, "y": 0}));
        // The transfer itself succeeds (ownership lives in memory); only its persistence fails.
        assert_eq!(ok(&data, "browser_transfer", json!({"nodeId": b, "agentNodeId": "agent-2"}))["owner"], "agent-2");
        let log = eventually(20, "the failures to be reported", || {
            let text = std::fs::read_to_string(root.join("app.log")).unwrap();
            let new = text[log_mark..].to_owned();
            (new.contains("autosave failed") && new.contains("browser ownership not saved")).then_some(new)
        });
        assert!(log.contains("No space left on device"), "the reports do not say why:\n{log}");
        assert_eq!(std::fs::read(&layout).unwrap(), layout_before, "layout.json changed on a full disk");
        assert_eq!(std::fs::read(&owners).unwrap(), owners_before, "browser-owners.json changed on a full disk");
        for d in [&tools, &layout_dir] {
            let names: Vec<String> =
                std::fs::read_dir(d).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
            assert!(!names.iter().any(|n| n.contains("tmp")), "temp files left in {}: {names:?}", d.display());
        }
        // The app is still up, and once space is back the next change is saved.
        assert_eq!(ok(&data, "session_info", json!({}))["identity"]["nodeId"], "agent-1");
        std::fs::remove_file(tools.join("filler")).unwrap();
        std::fs::remove_file(layout_dir.join("filler")).unwrap();
        ok(&data, "canvas_move", json!({"nodeId": sticky, "x": 888, "y": 0}));
        eventually(15, "the layout to be saved again", || {
            std::fs::read_to_string(&layout).ok().filter(|t| t.contains("888"))
        });
        assert!(app.terminate().success());
    });
}

// ---------------------------------------------------------------- faults

#[test]
fn renderer_shell_and_app_kills_are_survived() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    let page = support::serve_page(PAGE);
    // Another site, so the steady browser gets a renderer of its own.
    let other = page.replace("127.0.0.1", "localhost");
    guarded(root, &[&data], &[], || {
        let opts = || Opts {
            extra: &["--cdp", "--agent", "agent-1", "--agent-browser-control"],
            umask000: false,
            rust_log: "info",
        };
        let app = App::start(root, &data, &proj, opts());
        let steady = ok(&data, "browser_open", json!({"url": other}))["nodeId"].as_str().unwrap().to_owned();
        let spin =
            ok(&data, "browser_open", json!({"url": format!("{page}?spin")}))["nodeId"].as_str().unwrap().to_owned();
        let term = ok(&data, "terminal_open", json!({"title": "survivor"}))["nodeId"].as_str().unwrap().to_owned();
        let victim = ok(&data, "terminal_open", json!({"title": "victim"}))["nodeId"].as_str().unwrap().to_owned();

        // The spinning page's renderer: the one renderer burning a whole core.
        let spinning = eventually(30, "exactly one spinning renderer", || {
            let rs = renderers(app.pid());
            let t0: Vec<u64> = rs.iter().map(|p| cpu_ticks(*p)).collect();
            std::thread::sleep(Duration::from_millis(500));
            let hot: Vec<u32> =
                rs.iter().zip(t0).filter(|(p, t)| cpu_ticks(**p).saturating_sub(*t) >= 30).map(|(p, _)| *p).collect();
            (rs.len() >= 2 && hot.len() == 1).then(|| hot[0])
        });
        // A CDP command the busy renderer can never answer, through the facade.
        let mut ws = cdp_connect(&data);
        let (_, session) =
            cdp_attach(&mut ws, "spinning page", |t| t["url"].as_str().is_some_and(|u| u.ends_with("?spin")));
        let (cdp_tx, cdp_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let reply = cdp_call(&mut ws, 3, Some(&session), "Runtime.evaluate", json!({"expression": "1"}));
            let _ = cdp_tx.send((reply, Instant::now()));
        });
        // A tool call the busy renderer can never answer.
        let (tx, rx) = mpsc::channel();
        let (d, s) = (data.clone(), spin.clone());
        std::thread::spawn(move || {
            let r = ctl(&d, "agent-1", "browser_inspect", json!({"nodeId": s}));
            let _ = tx.send((r, Instant::now()));
        });
        std::thread::sleep(Duration::from_millis(1500));
        assert!(rx.try_recv().is_err(), "browser_inspect answered although the page is spinning");
        let killed = Instant::now();
        kill(spinning, 9);
        let (result, done) = rx.recv_timeout(Duration::from_secs(30)).expect("the pending call never returned");
        let e = result.expect_err("browser_inspect succeeded on a killed renderer");
        let took = done.duration_since(killed);
        eprintln!("pending call failed {took:?} after the kill: {}", e.trim());
        // Well under the 10 s DevTools deadline: the call failed because the renderer died.
        assert!(took < Duration::from_secs(1), "the pending call took {took:?} to fail");
        let (reply, done) =
            cdp_rx.recv_timeout(Duration::from_secs(30)).expect("the pending CDP command never got a reply");
        let took = done.duration_since(killed);
        eprintln!("pending CDP command answered {took:?} after the kill: {reply}");
        assert!(reply.get("error").is_some(), "a command to a dead renderer succeeded: {reply}");
        assert!(took < Duration::from_secs(1), "the pending CDP command took {took:?} to fail");
        let lower = e.to_lowercase();
        assert!(
            ["crash", "renderer", "terminated", "closed", "gone"].iter().any(|w| lower.contains(w)),
            "unclear error: {e}"
        );
        // Others unaffected.
        assert!(ok(&data, "browser_inspect", json!({"nodeId": steady}))["text"]
            .as_str()
            .unwrap()
            .contains("steady text"));
        ok(&data, "terminal_submit", json!({"nodeId": term, "text": "echo still-$((40+2))"}));
        eventually(15, "the other terminal", || {
            ok(&data, "terminal_read", json!({"nodeId": term}))["text"]
                .as_str()
                .unwrap()
                .contains("still-42")
                .then_some(())
        });
        // Reload: the same node loads the page again in a fresh renderer.
        let nav = ok(&data, "browser_navigate", json!({"nodeId": spin, "url": page}));
        assert_eq!((nav["title"].as_str(), nav["loaded"].as_bool()), (Some("hardening page"), Some(true)), "{nav}");
        assert!(ok(&data, "browser_inspect", json!({"nodeId": spin}))["text"]
            .as_str()
            .unwrap()
            .contains("steady text"));

        // kill -9 of a terminal's shell: the node shows it exited, the app stays up.
        let pidfile = root.join("victim.pid");
        ok(&data, "terminal_submit", json!({"nodeId": victim, "text": format!("echo $$ > {}", pidfile.display())}));
        let shell: u32 = eventually(15, "the shell's pid", || {
            std::fs::read_to_string(&pidfile).ok().and_then(|t| t.trim().parse().ok())
        });
        kill(shell, 9);
        let shown = eventually(15, "the terminal to show its exit", || {
            match ctl(&data, "agent-1", "terminal_read", json!({"nodeId": victim})) {
                Ok(v) => v.get("exited").cloned(),
                Err(e) => panic!("terminal_read of the exited terminal failed: {e}"),
            }
        });
        eprintln!("terminal after its shell was killed: exited {shown}");
        // Inside tmux too: the session's wrapper recorded the status.
        assert_eq!(shown["signal"], "Killed", "{shown}");
        let e = ctl(&data, "agent-1", "terminal_submit", json!({"nodeId": victim, "text": "echo x"})).unwrap_err();
        assert!(e.contains("has exited"), "{e}");
        assert_eq!(ok(&data, "session_info", json!({}))["identity"]["nodeId"], "agent-1");

        // kill -9 of the app once its state is saved; the restart restores it all.
        let ids = node_ids(&data);
        let layout = proj.join(".termsprawl/canvas.json");
        eventually(15, "every node in the saved layout", || {
            std::fs::read_to_string(&layout).ok().filter(|t| ids.iter().all(|i| t.contains(i.as_str())))
        });
        let owners_file = data.join("agent-tools/browser-owners.json");
        let owners_before = std::fs::read(&owners_file).unwrap();
        let owners: Value = serde_json::from_slice(&owners_before).unwrap();
        assert_eq!((owners[&steady].as_str(), owners[&spin].as_str()), (Some("agent-1"), Some("agent-1")), "{owners}");
        let token_before = session_token(&data, "agent-1");
        let app_pid = app.pid();
        let helpers = with_descendants(&[app_pid]);
        app.kill9();
        // CEF's helpers notice their parent is gone and exit.
        let alive = |p: &u32| {
            Path::new(&format!("/proc/{p}")).exists()
                && !std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| s.contains(") Z"))
        };
        let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while helpers.iter().any(alive) && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let left: Vec<String> = helpers
            .iter()
            .filter(|p| alive(p))
            .map(|p| format!("{p}: {}", String::from_utf8_lossy(&cmdline(*p)).replace('\0', " ")))
            .collect();
        assert!(left.is_empty(), "the killed app's helpers still run after 20 s: {left:#?}");
        let app = App::start(root, &data, &proj, opts());
        assert_eq!(node_ids(&data), ids, "nodes after the restart");
        assert_eq!(session_token(&data, "agent-1"), token_before, "the session token changed");
        assert_eq!(std::fs::read(&owners_file).unwrap(), owners_before, "browser-owners.json changed");
        let listed = ok(&data, "browser_list", json!({}));
        for b in listed.as_array().unwrap() {
            assert_eq!(b["owner"], "agent-1", "{listed}");
        }
        // The restored page is (re)loading right after the start; a call in that window is refused
        // ("Inspected target navigated or closed"), so wait for a successful one.
        eventually(20, "the restored browser to answer", || {
            ctl(&data, "agent-1", "browser_inspect", json!({"nodeId": steady}))
                .ok()
                .filter(|v| v["text"].as_str().unwrap_or("").contains("steady text"))
        });
        ok(&data, "terminal_submit", json!({"nodeId": term, "text": "echo back-$((50+5))"}));
        eventually(15, "the re-attached terminal", || {
            ok(&data, "terminal_read", json!({"nodeId": term}))["text"]
                .as_str()
                .unwrap()
                .contains("back-55")
                .then_some(())
        });
        assert!(app.terminate().success());
    });
}

// ---------------------------------------------------------------- hostile connections

/// Connections a slowloris client holds against each server in turn.
const FLOOD: usize = 10_000;

/// `n` connections to `port`, each with an unfinished request head, kept open.
fn slowloris(port: u16, n: usize) -> Vec<std::net::TcpStream> {
    (0..n)
        .map(|i| {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port))
                .unwrap_or_else(|e| panic!("slowloris connection {i}: {e}"));
            // A server may already have closed it for a newer one; only the open matters.
            let _ = s.write_all(format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ").as_bytes());
            s
        })
        .collect()
}

/// How many of `conns` the server has closed (EOF or reset), without waiting.
fn closed_by_server(conns: &[std::net::TcpStream]) -> usize {
    conns
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let mut b = [0u8; 1];
            !matches!((&**s).read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        })
        .count()
}

/// One real, authenticated call to each server; panics unless each answers 200. Returns their latencies.
fn real_calls(ports: [u16; 3], tool_token: &str, facade_token: &str) -> [Duration; 3] {
    let [tool, cdp, agent] = ports;
    let timed = |what: &str, f: &dyn Fn() -> String| {
        let t = Instant::now();
        let reply = f();
        assert!(reply.starts_with("HTTP/1.1 200"), "{what}: {}", reply.lines().next().unwrap_or("(no answer)"));
        t.elapsed()
    };
    [
        timed("tool server session_info", &|| http_post(tool, "/call", tool_token, br#"{"operation":"session_info"}"#)),
        timed("CDP facade /json/version", &|| http_get(cdp, "/json/version", Some(facade_token))),
        timed("browser agent server /info", &|| http_get(agent, "/info", Some(facade_token))),
    ]
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Each server in turn under 10,000 idle half-sent requests: real calls on all
/// three keep answering, the app's memory and fds stay bounded (the oldest
/// idle connections are closed to make room), and the app stops cleanly.
#[test]
fn ten_thousand_idle_connections_do_not_lock_out_real_clients() {
    let _serial = serial();
    let limit = rlimit::increase_nofile_limit(u64::MAX).unwrap();
    if (limit as usize) < FLOOD + 512 {
        // An environment limit, not a product failure: outside ./dev test, say so loudly and skip.
        support::skip_unless_strict(
            "ten_thousand_idle_connections_do_not_lock_out_real_clients",
            &format!("this test holds {FLOOD} sockets and the hard open-file limit is {limit} (raise ulimit -Hn)"),
        );
        return;
    }
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    guarded(root, &[&data], &[], || {
        let app = App::start(
            root,
            &data,
            &proj,
            Opts { extra: &["--cdp", "--agent", "agent-1"], umask000: false, rust_log: "warn" },
        );
        let discovery: Value =
            serde_json::from_slice(&std::fs::read(data.join("browser-agent.json")).unwrap()).unwrap();
        let ports = [tool_port(&data), cdp_port(&data), discovery["port"].as_u64().unwrap() as u16];
        let (tool_token, facade_token) = (session_token(&data, "agent-1"), facade_token(&data));
        let calls = |rounds: usize| -> Vec<[Duration; 3]> {
            (0..rounds).map(|_| real_calls(ports, &tool_token, &facade_token)).collect()
        };
        calls(3); // warm-up
        let before = calls(10);
        let (rss0, fds0) = (rss_kib(app.pid()), open_fds(app.pid()));
        for (i, name) in ["tool server", "CDP facade", "browser agent server"].into_iter().enumerate() {
            let flood = slowloris(ports[i], FLOOD);
            std::thread::sleep(Duration::from_millis(500));
            let during = calls(10);
            let (rss, fds) = (rss_kib(app.pid()), open_fds(app.pid()));
            let closed = closed_by_server(&flood);
            for (j, server) in ["tool server", "CDP facade", "browser agent server"].into_iter().enumerate() {
                let (b, d) =
                    (median(before.iter().map(|c| c[j]).collect()), median(during.iter().map(|c| c[j]).collect()));
                let worst = during.iter().map(|c| c[j]).max().unwrap();
                eprintln!("{FLOOD} idle on the {name}: {server} median {b:?} -> {d:?} (worst {worst:?})");
                // Locked out would mean waiting for a 15-30 s header timeout, or no answer at all.
                assert!(
                    worst < Duration::from_secs(3),
                    "{server} took {worst:?} with {FLOOD} idle connections on the {name}"
                );
            }
            eprintln!(
                "{FLOOD} idle on the {name}: app RSS {} -> {} MiB, fds {fds0} -> {fds}, {closed} closed by the server",
                rss0 / 1024,
                rss / 1024
            );
            assert!(closed >= FLOOD - 600, "the {name} kept {} of {FLOOD} idle connections open", FLOOD - closed);
            assert!(fds < fds0 + 600, "the app holds {fds} fds (from {fds0}) under the flood on the {name}");
            assert!(rss < rss0 + 64 * 1024, "app RSS grew from {rss0} to {rss} KiB under the flood on the {name}");
        }
        assert!(app.terminate().success());
    });
}

// ---------------------------------------------------------------- a stalled main thread

/// Stops only the app's main thread (ptrace on its tid, which is the pid);
/// the server threads keep running. Resumes it when dropped. Every ptrace
/// call must come from the thread that attached, so keep it on one thread.
struct StalledMainThread(i32);

impl StalledMainThread {
    /// `None` when this environment forbids ptrace (a container without CAP_SYS_PTRACE).
    fn new(pid: u32) -> Option<Self> {
        let tid = pid as i32;
        // SAFETY: ptrace/waitpid on the app's main thread, a child of this test; no memory is shared.
        unsafe {
            if libc::ptrace(libc::PTRACE_SEIZE, tid, 0, 0) != 0 {
                let e = std::io::Error::last_os_error();
                assert_eq!(e.raw_os_error(), Some(libc::EPERM), "PTRACE_SEIZE: {e}");
                return None;
            }
            assert_eq!(
                libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0),
                0,
                "PTRACE_INTERRUPT: {}",
                std::io::Error::last_os_error()
            );
            let mut status = 0;
            assert_eq!(
                libc::waitpid(tid, &mut status, libc::__WALL),
                tid,
                "waitpid: {}",
                std::io::Error::last_os_error()
            );
            assert!(libc::WIFSTOPPED(status), "the main thread did not stop: status {status:#x}");
        }
        Some(StalledMainThread(tid))
    }
}

impl Drop for StalledMainThread {
    fn drop(&mut self) {
        // SAFETY: detaching the thread this object attached to.
        unsafe { libc::ptrace(libc::PTRACE_DETACH, self.0, 0, 0) };
    }
}

/// The main thread stalls: a mutating tool call fails at 10 s with a clear
/// error and is never applied later; the servers answer meanwhile; the app
/// carries on once the stall ends.
#[test]
fn a_stalled_main_thread_times_tool_calls_out_and_applies_nothing_later() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    guarded(root, &[&data], &[], || {
        let app = App::start(
            root,
            &data,
            &proj,
            Opts { extra: &["--cdp", "--agent", "agent-1"], umask000: false, rust_log: "warn" },
        );
        let (tool, cdp) = (tool_port(&data), cdp_port(&data));
        let facade = facade_token(&data);
        ok(&data, "sticky_open", json!({"text": "before the stall"}));
        let nodes_before = node_ids(&data);

        let Some(stall) = StalledMainThread::new(app.pid()) else {
            assert!(app.terminate().success());
            support::skip_unless_strict(
                "a_stalled_main_thread_times_tool_calls_out_and_applies_nothing_later",
                "ptrace is not permitted here, so the main thread cannot be stalled alone",
            );
            return;
        };
        let (tx, rx) = mpsc::channel();
        let d = data.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            let r = ctl(&d, "agent-1", "sticky_open", json!({"text": "during the stall"}));
            let _ = tx.send((r, t.elapsed()));
        });
        // The servers stay up meanwhile.
        std::thread::sleep(Duration::from_secs(2));
        assert!(http_get(cdp, "/json/version", Some(&facade)).starts_with("HTTP/1.1 200"), "facade during the stall");
        assert!(http_get(tool, "/call", None).starts_with("HTTP/1.1 4"), "tool server during the stall");
        let (result, took) = rx.recv_timeout(Duration::from_secs(30)).expect("the call never returned");
        let e = result.expect_err("sticky_open succeeded on a stalled main thread");
        eprintln!("call on a stalled main thread failed after {took:?}: {}", e.trim());
        assert!(e.contains("did not answer within 10 s") && e.contains("nothing was changed"), "unclear error: {e}");
        assert!(
            took >= Duration::from_secs(9) && took < Duration::from_secs(15),
            "failed after {took:?}, not at the 10 s deadline"
        );
        drop(stall);

        // Once the stall ends, the app answers again, and the timed-out call left no node behind.
        let after = ok(&data, "sticky_open", json!({"text": "after the stall"}))["nodeId"].as_str().unwrap().to_owned();
        let mut expected = nodes_before.clone();
        expected.insert(after);
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(node_ids(&data), expected, "the timed-out sticky_open was applied after all");
        assert!(app.terminate().success());
    });
}

// ---------------------------------------------------------------- kill -9 mid-write

/// What the churn created, and when (so a kill knows what autosave has had time to write).
#[derive(Default)]
struct Churned {
    nodes: Vec<(String, Instant)>,
    /// Browser nodes opened by agent-1 (the owner map must keep them).
    browsers: Vec<(String, Instant)>,
    /// Launched agent nodes and their session tokens.
    agents: Vec<(String, String, Instant)>,
}

/// Mutates the canvas as fast as the app takes it until `stop`: notes, moves,
/// browser opens (owner-map writes) and agent launches (session-file writes).
fn churn(data: PathBuf, page: String, stop: Arc<std::sync::atomic::AtomicBool>, out: Arc<Mutex<Churned>>) {
    let mut i = 0u32;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        i += 1;
        let created = |v: &Value| v["nodeId"].as_str().map(str::to_owned);
        let r = match i % 6 {
            0 => ctl(&data, "agent-1", "browser_open", json!({"url": page})).map(|v| {
                if let Some(id) = created(&v) {
                    out.lock().unwrap().browsers.push((id, Instant::now()));
                }
            }),
            3 => ctl(&data, "agent-1", "agent_launch", json!({"agent": "claude", "title": format!("helper {i}")})).map(
                |v| {
                    if let Some(id) = created(&v) {
                        let token = session_token(&data, &id);
                        out.lock().unwrap().agents.push((id, token, Instant::now()));
                    }
                },
            ),
            1 | 4 => ctl(&data, "agent-1", "sticky_open", json!({"text": format!("note {i}")})).map(|v| {
                if let Some(id) = created(&v) {
                    out.lock().unwrap().nodes.push((id, Instant::now()));
                }
            }),
            _ => {
                let last = out.lock().unwrap().nodes.last().map(|n| n.0.clone());
                match last {
                    Some(id) => {
                        ctl(&data, "agent-1", "canvas_move", json!({"nodeId": id, "x": i * 10, "y": 5})).map(|_| ())
                    }
                    None => Ok(()),
                }
            }
        };
        // Once the app is killed every call fails; that is the point.
        if r.is_err() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Files the loader moved aside as unreadable.
fn quarantined(dirs: &[&Path]) -> Vec<PathBuf> {
    dirs.iter().flat_map(|d| walk_all(d)).filter(|p| p.to_string_lossy().contains(".corrupt-")).collect()
}

/// kill -9 of the app, round after round, while the layout, the owner map and
/// session files are being written and a CDP client is attached: every restart
/// loads cleanly (nothing quarantined, no repairs) and keeps everything that
/// autosave had time to write (its 2 s deadline) before the kill.
#[test]
fn kill_9_during_writes_with_a_cdp_client_attached_loses_nothing_saved() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    let claude = root.join("bin/claude");
    std::fs::write(&claude, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A stand-in login (no real credentials), or agent_launch says "not logged in".
    std::fs::create_dir_all(root.join("home/.claude")).unwrap();
    std::fs::write(root.join("home/.claude/.credentials.json"), "{}").unwrap();
    let page = support::serve_page(PAGE);
    guarded(root, &[&data], &[], || {
        let opts = || Opts {
            extra: &["--cdp", "--agent", "agent-1", "--agent-browser-control"],
            umask000: false,
            rust_log: "warn",
        };
        let mut saved_nodes: HashSet<String> = HashSet::new();
        let mut saved_browsers: HashSet<String> = HashSet::new();
        let mut saved_agents: HashMap<String, String> = HashMap::new();
        let agent_token = {
            let app = App::start(root, &data, &proj, opts());
            let t = session_token(&data, "agent-1");
            app.kill9();
            t
        };
        for round in 0..4u64 {
            let app = App::start(root, &data, &proj, opts());
            assert_eq!(
                quarantined(&[&data, &proj]),
                Vec::<PathBuf>::new(),
                "round {round}: a file was unreadable after kill -9"
            );
            assert!(
                !tail(&root.join("app.log"), 400).contains("repair"),
                "round {round}: the loader had to repair the layout"
            );
            let now = node_ids(&data);
            let lost: Vec<&String> = saved_nodes.iter().filter(|n| !now.contains(*n)).collect();
            assert!(lost.is_empty(), "round {round}: saved nodes lost: {lost:?}");
            let owners: Value = serde_json::from_slice(
                &std::fs::read(data.join("agent-tools/browser-owners.json")).unwrap_or_else(|_| b"{}".to_vec()),
            )
            .unwrap();
            for b in &saved_browsers {
                assert_eq!(owners[b].as_str(), Some("agent-1"), "round {round}: owner of {b} lost: {owners}");
            }
            for (node, token) in &saved_agents {
                assert_eq!(&session_token(&data, node), token, "round {round}: session of {node} changed");
            }
            assert_eq!(session_token(&data, "agent-1"), agent_token);

            // A CDP client attached through the facade, listening to target events.
            let facade = facade_token(&data);
            let version = http_get(cdp_port(&data), "/json/version", Some(&facade));
            let body: Value = serde_json::from_str(version.split("\r\n\r\n").nth(1).unwrap_or("{}")).unwrap();
            let ws_url = body["webSocketDebuggerUrl"]
                .as_str()
                .unwrap_or_else(|| panic!("no webSocketDebuggerUrl: {version}"))
                .to_owned();
            let (mut cdp, _) = tungstenite::connect(ws_url.as_str()).unwrap();
            cdp.send(tungstenite::Message::text(
                r#"{"id":1,"method":"Target.setDiscoverTargets","params":{"discover":true}}"#,
            ))
            .unwrap();

            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let out = Arc::new(Mutex::new(Churned::default()));
            let worker = {
                let (d, p, s, o) = (data.clone(), page.clone(), stop.clone(), out.clone());
                std::thread::spawn(move || churn(d, p, s, o))
            };
            // Kill at a different point of the write cycle each round.
            std::thread::sleep(Duration::from_millis(5000 + round * 700));
            let killed_at = Instant::now();
            app.kill9();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            worker.join().unwrap();
            // The client sees the connection end, not a hang.
            if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = cdp.get_mut() {
                tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            }
            let ended = loop {
                match cdp.read() {
                    Ok(_) => continue,
                    Err(tungstenite::Error::Io(e))
                        if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut =>
                    {
                        break false
                    }
                    Err(_) => break true,
                }
            };
            assert!(ended, "round {round}: the CDP client did not see the app go");
            // Autosave writes within 2 s of a change (plus the write itself, slow on a loaded
            // machine): what is clearly older than that must survive.
            let settled = |t: &Instant| killed_at.duration_since(*t) > Duration::from_millis(3500);
            let o = out.lock().unwrap();
            eprintln!(
                "round {round}: {} notes, {} browsers, {} agents created before the kill",
                o.nodes.len(),
                o.browsers.len(),
                o.agents.len()
            );
            saved_nodes.extend(o.nodes.iter().chain(&o.browsers).filter(|(_, t)| settled(t)).map(|(n, _)| n.clone()));
            saved_nodes.extend(o.agents.iter().filter(|(_, _, t)| settled(t)).map(|(n, _, _)| n.clone()));
            // Owners and sessions belong to their nodes: kept with every node that was saved.
            saved_browsers.extend(o.browsers.iter().filter(|(_, t)| settled(t)).map(|(n, _)| n.clone()));
            saved_agents
                .extend(o.agents.iter().filter(|(_, _, t)| settled(t)).map(|(n, tok, _)| (n.clone(), tok.clone())));
        }
        assert!(
            !saved_nodes.is_empty() && !saved_browsers.is_empty() && !saved_agents.is_empty(),
            "the churn created too little to check"
        );
        let app = App::start(root, &data, &proj, opts());
        assert_eq!(quarantined(&[&data, &proj]), Vec::<PathBuf>::new());
        let now = node_ids(&data);
        assert!(saved_nodes.iter().all(|n| now.contains(n)), "saved nodes lost after the last kill");
        assert!(app.terminate().success());
    });
}

// ---------------------------------------------------------------- kill -9 of tmux

/// kill -9 of the tmux server under every terminal: the nodes show their
/// sessions ended, the app stays up, new terminals work (a new server), and
/// after a restart the old nodes are still on the canvas, usable again.
#[test]
fn kill_9_of_tmux_is_survived() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    guarded(root, &[&data], &[], || {
        let opts = || Opts { extra: &["--agent", "agent-1"], umask000: false, rust_log: "info" };
        let app = App::start(root, &data, &proj, opts());
        let term =
            |title: &str| ok(&data, "terminal_open", json!({"title": title}))["nodeId"].as_str().unwrap().to_owned();
        let read = |node: &str| {
            ctl(&data, "agent-1", "terminal_read", json!({"nodeId": node}))
                .unwrap_or_else(|e| panic!("terminal_read {node}: {e}"))
        };
        let say = |node: &str, n: u32| {
            ok(&data, "terminal_submit", json!({"nodeId": node, "text": format!("echo said-$((1000+{n}))")}));
            let want = format!("said-{}", 1000 + n);
            eventually(20, &format!("{want} in {node}"), || {
                read(node)["text"].as_str().unwrap().contains(&want).then_some(())
            });
        };
        let (a, b) = (term("a"), term("b"));
        say(&a, 1);
        say(&b, 2);
        let server = tmux_server_pid(&data).expect("a tmux server");
        kill(server, 9);
        for node in [&a, &b] {
            let exited = eventually(20, "the terminal to show its session ended", || read(node).get("exited").cloned());
            eprintln!("{node} after tmux was killed: exited {exited}");
        }
        let e = ctl(&data, "agent-1", "terminal_submit", json!({"nodeId": a, "text": "echo x"})).unwrap_err();
        assert!(e.contains("has exited"), "{e}");
        // A new terminal starts a new tmux server.
        let c = term("c");
        say(&c, 3);
        assert!(tmux_server_pid(&data).is_some_and(|p| p != server), "no new tmux server");
        assert!(app.terminate().success());

        // After a restart every node is still there, and each works again.
        let app = App::start(root, &data, &proj, opts());
        let ids = node_ids(&data);
        assert!([&a, &b, &c].iter().all(|n| ids.contains(*n)), "terminal nodes lost: {ids:?}");
        say(&c, 4);
        for (i, node) in [&a, &b].into_iter().enumerate() {
            let r = read(node);
            eprintln!("{node} after the restart: {}", serde_json::to_string(&r.get("exited")).unwrap());
            say(node, 10 + i as u32);
        }
        assert!(app.terminate().success());
    });
}

// ---------------------------------------------------------------- clients vanishing mid-request

type Cdp = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>;

/// A raw CDP client on the facade's browser endpoint.
fn cdp_connect(data: &Path) -> Cdp {
    let version = http_get(cdp_port(data), "/json/version", Some(&facade_token(data)));
    let body: Value = serde_json::from_str(version.split("\r\n\r\n").nth(1).unwrap_or("{}")).unwrap();
    let url = body["webSocketDebuggerUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no webSocketDebuggerUrl: {version}"))
        .to_owned();
    let (ws, _) = tungstenite::connect(url.as_str()).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = ws.get_ref() {
        tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    }
    ws
}

/// Sends one command and returns its reply (events in between are skipped).
/// Attaches (flat) to the first target that `pick` accepts (ids 1 and 2); returns its target and session ids.
fn cdp_attach(ws: &mut Cdp, what: &str, pick: impl Fn(&Value) -> bool) -> (String, String) {
    let targets = cdp_call(ws, 1, None, "Target.getTargets", json!({}));
    let target = targets["result"]["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| pick(t))
        .unwrap_or_else(|| panic!("no {what} target: {targets}"))["targetId"]
        .as_str()
        .unwrap()
        .to_owned();
    let attached = cdp_call(ws, 2, None, "Target.attachToTarget", json!({"targetId": target, "flatten": true}));
    let session = attached["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("attach: {attached}")).to_owned();
    (target, session)
}

fn cdp_call(ws: &mut Cdp, id: u64, session: Option<&str>, method: &str, params: Value) -> Value {
    let mut msg = json!({"id": id, "method": method, "params": params});
    if let Some(s) = session {
        msg["sessionId"] = json!(s);
    }
    ws.send(tungstenite::Message::text(msg.to_string())).unwrap();
    loop {
        // Pings and other control frames are not replies.
        let tungstenite::Message::Text(text) = ws.read().unwrap_or_else(|e| panic!("{method}: {e}")) else { continue };
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method}: {e}: {text}"));
        if v["id"] == id {
            return v;
        }
    }
}

/// HTTP and CDP clients that vanish mid-request (half-sent body, gone while a
/// slow call runs, gone while an evaluate awaits) cost nobody else anything:
/// the app keeps serving, the page keeps working, nothing leaks.
#[test]
fn clients_vanishing_mid_request_cost_nothing() {
    let _serial = serial();
    let (tmp, data, proj) = setup();
    let root = tmp.path();
    let page = support::serve_page(PAGE);
    guarded(root, &[&data], &[], || {
        let app = App::start(
            root,
            &data,
            &proj,
            Opts {
                extra: &["--cdp", "--agent", "agent-1", "--agent-browser-control"],
                umask000: false,
                rust_log: "warn",
            },
        );
        let tool = tool_port(&data);
        let token = session_token(&data, "agent-1");
        let node = ok(&data, "browser_open", json!({"url": page}))["nodeId"].as_str().unwrap().to_owned();
        // Chromium opens profile databases lazily; sockets are what a leak here would be.
        let sockets = |pid: u32| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .unwrap()
                .flatten()
                .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
                .count()
        };
        let sockets0 = sockets(app.pid());

        for round in 0..20 {
            // A body promised but never finished, then gone.
            let mut s = std::net::TcpStream::connect(("127.0.0.1", tool)).unwrap();
            s.write_all(format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{tool}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"operation\"").as_bytes()).unwrap();
            drop(s);
            // A whole call whose client leaves before the answer.
            let mut s = std::net::TcpStream::connect(("127.0.0.1", tool)).unwrap();
            let body = json!({"operation": "browser_inspect", "args": {"nodeId": node}}).to_string();
            s.write_all(format!("POST /call HTTP/1.1\r\nHost: 127.0.0.1:{tool}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap();
            if round % 2 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(s);
        }
        // Others are served as before.
        assert!(ok(&data, "browser_inspect", json!({"nodeId": node}))["text"]
            .as_str()
            .unwrap()
            .contains("steady text"));

        // A CDP client that leaves while its evaluate awaits a 3 s promise, and one that leaves mid-frame.
        let mut ws = cdp_connect(&data);
        let (target, session) = cdp_attach(&mut ws, "page", |t| t["type"] == "page");
        let slow = json!({"id": 3, "sessionId": session, "method": "Runtime.evaluate", "params": {"expression": "new Promise(r => setTimeout(() => r(7), 3000))", "awaitPromise": true}});
        ws.send(tungstenite::Message::text(slow.to_string())).unwrap();
        drop(ws);
        let mut raw = cdp_connect(&data);
        if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = raw.get_mut() {
            // A frame header promising 125 bytes, then nothing.
            tcp.write_all(&[0x81, 0xFD, 1, 2, 3, 4, b'{']).unwrap();
        }
        drop(raw);

        // A new client drives the same page, after the abandoned promise settled too.
        std::thread::sleep(Duration::from_millis(3500));
        let mut ws = cdp_connect(&data);
        let attached =
            cdp_call(&mut ws, 1, None, "Target.attachToTarget", json!({"targetId": target, "flatten": true}));
        let session =
            attached["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("attach again: {attached}")).to_owned();
        let two = cdp_call(
            &mut ws,
            2,
            Some(&session),
            "Runtime.evaluate",
            json!({"expression": "1+1", "returnByValue": true}),
        );
        assert_eq!(two["result"]["result"]["value"], 2, "{two}");
        drop(ws);
        assert!(ok(&data, "browser_inspect", json!({"nodeId": node}))["text"]
            .as_str()
            .unwrap()
            .contains("steady text"));
        // The abandoned connections were all let go.
        let now = eventually(10, "abandoned sockets to close", || {
            let n = sockets(app.pid());
            (n <= sockets0 + 2).then_some(n)
        });
        eprintln!("app sockets: {sockets0} before, {now} after 40 vanished HTTP and 2 CDP clients");
        assert!(app.terminate().success());
    });
}
