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

/// Ends the tmux server the app's terminals ran in (it outlives the app by design).
pub fn kill_tmux(data: &std::path::Path) {
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(data.join("tmux/termsprawl.sock"))
        .arg("kill-server")
        .stderr(std::process::Stdio::null())
        .status();
}
