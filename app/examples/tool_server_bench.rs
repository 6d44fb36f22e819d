//! Benchmark (run by `bench/tool-server`, not a test): the running app's agent
//! tool server against a bare hyper "hello" server started here, in the same
//! run and on the same machine.
//!
//! - `session_info` throughput and p50/p99 latency with 16 keep-alive clients,
//!   and the same load on the hello server (same request bytes, same
//!   single-threaded tokio runtime on its own thread as the tool server);
//! - `canvas_move` round trip p50/p99 (one client, sequential: HTTP, queue,
//!   main-thread command, reply).
//!
//! Usage: `tool_server_bench --data-dir DIR --node NODE_ID [--seconds N]`.
//! The token is read from the node's session file and never printed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLIENTS: usize = 16;

/// One keep-alive HTTP/1.1 connection speaking just enough of the protocol.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(20)))?;
        Ok(Conn { stream, buf: Vec::with_capacity(4096) })
    }

    /// Sends one request and reads one response; returns (status, body).
    fn roundtrip(&mut self, request: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
        self.stream.write_all(request)?;
        let mut chunk = [0u8; 8192];
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_string();
                let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.split_once(':')
                            .filter(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                    })
                    .unwrap_or(0);
                let total = end + 4 + len;
                while self.buf.len() < total {
                    let n = self.stream.read(&mut chunk)?;
                    if n == 0 {
                        return Err(std::io::ErrorKind::UnexpectedEof.into());
                    }
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                let body = self.buf[end + 4..total].to_vec();
                self.buf.drain(..total);
                return Ok((status, body));
            }
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn request(port: u16, token: &str, body: &str) -> Vec<u8> {
    format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The baseline: hyper answering "hello" to everything, on one current-thread runtime.
fn start_hello() -> SocketAddr {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind hello server");
    let addr = listener.local_addr().expect("hello address");
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                        // Read the body like the tool server does, then answer.
                        let _ = req.into_body().collect().await;
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"hello"))))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    addr
}

struct Load {
    requests: usize,
    seconds: f64,
    p50: Duration,
    p99: Duration,
    errors: usize,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// `CLIENTS` keep-alive clients sending `req` as fast as answers come, for `secs`.
fn load(addr: SocketAddr, req: Vec<u8>, secs: f64) -> Load {
    let stop = Arc::new(AtomicBool::new(false));
    let req = Arc::new(req);
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (stop, req) = (stop.clone(), req.clone());
            std::thread::spawn(move || {
                let mut lat = Vec::with_capacity(100_000);
                let mut errors = 0;
                let Ok(mut conn) = Conn::open(addr) else { return (lat, 1) };
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    match conn.roundtrip(&req) {
                        Ok((200, _)) => lat.push(t.elapsed()),
                        Ok(_) => errors += 1,
                        Err(_) => {
                            errors += 1;
                            match Conn::open(addr) {
                                Ok(c) => conn = c,
                                Err(_) => break,
                            }
                        }
                    }
                }
                (lat, errors)
            })
        })
        .collect();
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let mut all = vec![];
    let mut errors = 0;
    for t in threads {
        let (lat, e) = t.join().unwrap_or_default();
        all.extend(lat);
        errors += e;
    }
    let seconds = start.elapsed().as_secs_f64();
    all.sort();
    Load { requests: all.len(), seconds, p50: percentile(&all, 0.5), p99: percentile(&all, 0.99), errors }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut data, mut node, mut secs) = (None, None, 3.0);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--data-dir" => data = args.next().map(PathBuf::from),
            "--node" => node = args.next(),
            "--seconds" => secs = args.next().and_then(|s| s.parse().ok()).unwrap_or(secs),
            _ => {
                eprintln!("usage: tool_server_bench --data-dir DIR --node NODE_ID [--seconds N]");
                std::process::exit(2);
            }
        }
    }
    let (Some(data), Some(node)) = (data, node) else {
        eprintln!("usage: tool_server_bench --data-dir DIR --node NODE_ID [--seconds N]");
        std::process::exit(2);
    };
    let tools = data.join("agent-tools");
    let endpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tools.join("endpoint.json")).expect("endpoint.json"))
            .expect("endpoint JSON");
    let session: serde_json::Value = serde_json::from_slice(
        &std::fs::read(tools.join("sessions").join(format!("{node}.json"))).expect("session file"),
    )
    .expect("session JSON");
    let token = session["token"].as_str().expect("token").to_owned();
    let url = endpoint["url"].as_str().expect("url");
    let tool_addr: SocketAddr = url.trim_start_matches("http://").parse().expect("endpoint address");
    let hello_addr = start_hello();
    let body = r#"{"operation":"session_info"}"#;

    // Warm both up, then measure the baseline and the tool server back to back.
    load(hello_addr, request(hello_addr.port(), &token, body), 0.5);
    load(tool_addr, request(tool_addr.port(), &token, body), 0.5);
    let hello = load(hello_addr, request(hello_addr.port(), &token, body), secs);
    let tool = load(tool_addr, request(tool_addr.port(), &token, body), secs);

    // canvas_move round trips: one client, the agent moving its own node.
    let mut conn = Conn::open(tool_addr).expect("connect");
    let mut lat = vec![];
    let mut move_errors = 0;
    for i in 0..300 {
        let body = format!(r#"{{"operation":"canvas_move","args":{{"nodeId":"{node}","x":{},"y":0}}}}"#, (i % 7) * 10);
        let t = Instant::now();
        match conn.roundtrip(&request(tool_addr.port(), &token, &body)) {
            Ok((200, _)) => lat.push(t.elapsed()),
            Ok((status, b)) => {
                move_errors += 1;
                if move_errors == 1 {
                    eprintln!("canvas_move failed: {status} {}", String::from_utf8_lossy(&b));
                }
            }
            Err(e) => panic!("canvas_move: {e}"),
        }
    }
    lat.sort();

    let rps = |l: &Load| l.requests as f64 / l.seconds;
    println!("{CLIENTS} keep-alive clients, {secs} s each");
    println!("{:<28} {:>10} {:>9} {:>9} {:>7}", "", "req/s", "p50 ms", "p99 ms", "errors");
    println!(
        "{:<28} {:>10.0} {:>9.3} {:>9.3} {:>7}",
        "hyper hello (baseline)",
        rps(&hello),
        ms(hello.p50),
        ms(hello.p99),
        hello.errors
    );
    println!(
        "{:<28} {:>10.0} {:>9.3} {:>9.3} {:>7}",
        "tool server session_info",
        rps(&tool),
        ms(tool.p50),
        ms(tool.p99),
        tool.errors
    );
    println!("throughput ratio session_info / hello: {:.2}x (goal >= 0.5x)", rps(&tool) / rps(&hello).max(1.0));
    println!(
        "p99 ratio session_info / hello: {:.2}x; session_info p99 {:.3} ms (goal < 5 ms)",
        ms(tool.p99) / ms(hello.p99).max(1e-6),
        ms(tool.p99)
    );
    println!(
        "canvas_move round trip ({} calls, {} failed): p50 {:.3} ms, p99 {:.3} ms ({:.1}x the session_info p50)",
        lat.len(),
        move_errors,
        ms(percentile(&lat, 0.5)),
        ms(percentile(&lat, 0.99)),
        ms(percentile(&lat, 0.5)) / ms(tool.p50).max(1e-6)
    );
}
