//! Shared pieces of the app's end-to-end tests.
#![allow(dead_code)]

pub mod claude_api;
pub mod junit;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

/// Serves `page` as text/html at every path on a random loopback port; returns `http://127.0.0.1:PORT/`.
pub fn serve_page(page: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let base = format!("http://{}/", listener.local_addr().expect("local addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let Ok(read_half) = stream.try_clone() else { return };
                let mut reader = BufReader::new(read_half);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let mut s = stream;
                let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}", page.len());
            });
        }
    });
    base
}

/// One path a [`serve_routes`] server answers: its content type, extra header lines and body.
pub struct Route {
    /// The request path (`/`, `/b`).
    pub path: &'static str,
    /// The Content-Type.
    pub content_type: &'static str,
    /// Extra header lines, each ending in `\r\n` (empty for none).
    pub headers: &'static str,
    /// The body.
    pub body: &'static str,
}

/// Serves `routes` on a random loopback port (404 for any other path, nothing
/// cached); returns `http://127.0.0.1:PORT/` and a hit count per route.
pub fn serve_routes(routes: &'static [Route]) -> (String, std::sync::Arc<Vec<std::sync::atomic::AtomicUsize>>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let base = format!("http://{}/", listener.local_addr().expect("local addr"));
    let hits = std::sync::Arc::new(routes.iter().map(|_| AtomicUsize::new(0)).collect::<Vec<_>>());
    let counters = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let hits = counters.clone();
            std::thread::spawn(move || {
                let Ok(read_half) = stream.try_clone() else { return };
                let mut reader = BufReader::new(read_half);
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let mut s = stream;
                let Some(i) = routes.iter().position(|r| r.path == path) else {
                    let _ = write!(s, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    return;
                };
                hits[i].fetch_add(1, Ordering::SeqCst);
                let r = &routes[i];
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: {}\r\n{}Cache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    r.content_type,
                    r.headers,
                    r.body.len(),
                    r.body
                );
            });
        }
    });
    (base, hits)
}

/// A loopback URL on which nothing listens.
pub fn closed_port_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = l.local_addr().expect("local addr").port();
    drop(l);
    format!("http://127.0.0.1:{port}/")
}

/// `termsprawl-ctl --data-dir D --node N call OP ARGS`: the value, or the full stderr of a failed call.
pub fn ctl(data: &std::path::Path, node: &str, op: &str, args: serde_json::Value) -> Result<serde_json::Value, String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_termsprawl-ctl"))
        .arg("--data-dir")
        .arg(data)
        .args(["--node", node, "call", op, &args.to_string()])
        .env_remove("TERMSPRAWL_NODE_ID")
        .env_remove("TERMSPRAWL_DATA_DIR")
        .output()
        .unwrap();
    match out.status.code() {
        Some(0) => Ok(serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{op}: bad JSON {e}: {}", String::from_utf8_lossy(&out.stdout)))),
        Some(1) => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        other => panic!("{op}: ctl exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

/// Reports a test that cannot run here (a missing tool or a refused
/// privilege). Under `./dev test` (TERMSPRAWL_TEST_STRICT) setup provided
/// everything, so there it fails instead of skipping.
pub fn skip_unless_strict(test: &str, why: &str) {
    assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "{test} cannot run: {why}");
    println!("SKIPPED {test}: {why}");
    eprintln!("SKIPPED {test}: {why}");
}

/// Polls `f` every 100 ms until it yields, for at most `secs`.
pub fn eventually<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(std::time::Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A test's temp dir whose tmux servers end with it. The app's terminals run
/// in a tmux server per data dir that outlives the app by design (that is
/// their persistence), so a test that starts the app must end that server,
/// whether it passes or fails: dropping a `TestRoot` ends every server whose
/// socket (`tmux/termsprawl.sock`) lies below it, then removes the dir.
pub struct TestRoot(tempfile::TempDir);

impl TestRoot {
    /// A fresh dir under the system's temp dir.
    pub fn new() -> TestRoot {
        TestRoot(tempfile::tempdir().expect("temp dir"))
    }

    /// A fresh dir `/tmp/<prefix>XXXXXX`, short enough for a tmux socket path (104 bytes at most).
    pub fn short(prefix: &str) -> TestRoot {
        TestRoot(tempfile::Builder::new().prefix(prefix).tempdir_in("/tmp").expect("temp dir"))
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Drop for TestRoot {
    fn drop(&mut self) {
        // Data dirs sit a few levels down (root/data, root/a/data-off…).
        fn kill_servers(dir: &std::path::Path, depth: usize) {
            if dir.join("tmux/termsprawl.sock").exists() {
                kill_tmux(dir);
            }
            let Ok(entries) = std::fs::read_dir(dir) else { return };
            for e in entries.flatten() {
                if depth > 0 && e.file_type().is_ok_and(|t| t.is_dir()) {
                    kill_servers(&e.path(), depth - 1);
                }
            }
        }
        // A tmux command the app forked just before it ended can still start
        // a server after the first kill (seen: 18 servers left by one run of
        // the suite): until two looks in a row find none, the servers are
        // ended and any process naming this dir (a tmux server or client) is killed.
        let root = self.0.path().to_string_lossy().into_owned();
        let mut clean = 0;
        for _ in 0..50 {
            kill_servers(self.0.path(), 4);
            let left = processes_naming(&root);
            if left.is_empty() {
                clean += 1;
                if clean == 2 {
                    break;
                }
            } else {
                clean = 0;
                for pid in left {
                    let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Processes (other than this one) whose command line names `needle`.
fn processes_naming(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(needle))
        })
        .collect()
}

/// Ends the tmux server the app's terminals ran in (it outlives the app by design).
pub fn kill_tmux(data: &std::path::Path) {
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(data.join("tmux/termsprawl.sock"))
        .arg("kill-server")
        .stderr(std::process::Stdio::null())
        .status();
}
