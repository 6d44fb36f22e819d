//! Zero background traffic end to end (issue 16): a session of the real
//! headless app with every feature in use (local pages, a download, a popup,
//! the CDP facade with a client, a terminal, then `termsprawl shot`) runs
//! under `strace -f`, which records every connect() and every datagram sent
//! by the whole process tree. Connect addresses are decoded, and so are the
//! query names of DNS packets. Anything but 127.0.0.1 (and the hosts the test
//! asked for) fails the test, listed. A shot of a page that fetches a host
//! name proves the trap catches a lookup.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/mod.rs"]
mod support;
use support::{ctl, skip_unless_strict};

const APP: &str = env!("CARGO_BIN_EXE_termsprawl");

/// Chromium's IPv6 reachability probe: when its host resolver serves a page
/// load (a loopback one too) it connect()s a UDP socket to this address, port
/// 443, to see whether a route exists. A UDP connect sends no packet; the
/// probe is hard-coded (HostResolverManager) and no switch turns it off, so
/// it is allowed: exactly this address, UDP only.
const IPV6_PROBE: &str = "2001:4860:4860::8888";

/// A host name under the reserved `.invalid` TLD: never resolves, so the
/// negative test sends nothing anywhere but the query itself.
const PROBE_HOST: &str = "termsprawl-privacy-probe.invalid";

// ---------------------------------------------------------------- strace output

/// One destination the traced processes tried to reach.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Destination {
    /// connect() to an IP address and port (of a UDP socket: sends nothing by itself).
    Connect { addr: String, port: u16, udp: bool },
    /// A DNS query for a name (sent to any resolver).
    Lookup(String),
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Destination::Connect { addr, port, udp } => {
                write!(f, "connect {addr} port {port} ({})", if *udp { "UDP" } else { "TCP" })
            }
            Destination::Lookup(name) => write!(f, "DNS lookup {name}"),
        }
    }
}

/// The bytes of strace's `-xx` strings (`"\x41\x42"`) in `s`, in order.
fn hex_strings(s: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("\"\\x") {
        let body = &rest[i + 1..];
        let end = body.find('"').unwrap_or(body.len());
        let bytes: Vec<u8> =
            body[..end].split("\\x").filter(|h| h.len() == 2).filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
        out.push(bytes);
        rest = &body[end.min(body.len())..];
        rest = rest.get(1..).unwrap_or("");
    }
    out
}

/// The query name of a DNS query packet (one question, recursion desired).
fn dns_query_name(p: &[u8]) -> Option<String> {
    // Header: id(2) flags(2) qdcount(2) ancount(2) nscount(2) arcount(2).
    if p.len() < 17 || p[2] & 0x80 != 0 || p[4..6] != [0, 1] || p[6..8] != [0, 0] {
        return None;
    }
    let mut labels = Vec::new();
    let mut i = 12;
    while i < p.len() && p[i] != 0 {
        let n = p[i] as usize;
        if n > 63 || i + 1 + n > p.len() {
            return None;
        }
        labels.push(String::from_utf8_lossy(&p[i + 1..i + 1 + n]).into_owned());
        i += 1 + n;
    }
    (!labels.is_empty() && i + 5 <= p.len()).then(|| labels.join("."))
}

/// The destinations in a strace log (`-f -yy -xx -e trace=connect,sendto,sendmsg,sendmmsg`):
/// `-yy` names each socket (`5<UDP:[10.0.0.2:4000->10.0.0.53:53]>`), so only
/// datagrams sent to port 53 are read as DNS queries.
fn destinations(log: &str) -> BTreeSet<Destination> {
    let mut out = BTreeSet::new();
    for line in log.lines() {
        let Some(call) = line.split_once(' ').map(|(_, c)| c.trim_start()) else { continue };
        if call.starts_with("connect(") {
            let inet = call.contains("sa_family=AF_INET,") || call.contains("sa_family=AF_INET6,");
            if !inet {
                continue;
            }
            let port = call
                .split("_port=htons(")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .and_then(|p| p.parse::<u16>().ok())
                .unwrap_or(0);
            let udp = call.split_once('<').is_some_and(|(_, r)| r.starts_with("UDP"));
            let addr = hex_strings(call).into_iter().next().map(|b| String::from_utf8_lossy(&b).into_owned());
            out.insert(Destination::Connect { addr: addr.unwrap_or_else(|| "?".into()), port, udp });
        } else if call.starts_with("send") {
            let socket = call.split_once("]>").map_or("", |(s, _)| s);
            let to_dns = socket.ends_with(":53") || call.contains("_port=htons(53)");
            if !to_dns {
                continue;
            }
            for packet in hex_strings(call) {
                if let Some(name) = dns_query_name(&packet) {
                    out.insert(Destination::Lookup(name.to_ascii_lowercase()));
                }
            }
        }
    }
    out
}

/// What is not allowed: loopback connects, resolver connects (judged by their
/// query names), the IPv6 probe, and lookups of `asked` hosts pass. A
/// resolver connect whose query never showed (the process may end, or send it
/// some other way, before strace sees a name) is a lookup too: reported as
/// undecoded unless some query was decoded to judge by.
fn unexpected(found: &BTreeSet<Destination>, asked: &[&str]) -> Vec<String> {
    let decoded = found.iter().any(|d| matches!(d, Destination::Lookup(_)));
    found
        .iter()
        .filter_map(|d| match d {
            Destination::Connect { addr, port: 53, .. } if addr != "127.0.0.1" && !decoded => {
                Some(format!("{UNDECODED_LOOKUP} via {addr}"))
            }
            Destination::Connect { addr, port, udp } => {
                (addr != "127.0.0.1" && *port != 53 && !(*udp && addr == IPV6_PROBE)).then(|| d.to_string())
            }
            Destination::Lookup(name) => (!asked.contains(&name.as_str())).then(|| d.to_string()),
        })
        .collect()
}

/// How [`unexpected`] names a resolver contact whose query name was not seen.
const UNDECODED_LOOKUP: &str = "DNS lookup (query not decoded)";

#[test]
fn strace_lines_decode_to_destinations() {
    let log = concat!(
        r#"29216 connect(20<UDP:[3314653]>, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("\x31\x30\x2e\x30\x2e\x30\x2e\x35\x33")}, 16) = 0"#,
        "\n",
        r#"29216 sendto(20<UDP:[192.0.2.2:43293->10.0.0.53:53]>, "\x4d\xb7\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07\x65\x78\x61\x6d\x70\x6c\x65\x03\x63\x6f\x6d\x00\x00\x1c\x00\x01", 29, 0, NULL, 0) = 29"#,
        "\n",
        r#"29155 sendmmsg(115<UDP:[192.0.2.2:43294->10.0.0.53:53]>, [{msg_hdr={msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="\x5e\xca\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03\x77\x77\x77\x07\x65\x78\x61\x6d\x70\x6c\x65\x03\x6f\x72\x67\x00\x00\x01\x00\x01", iov_len=33}]}}], 1, MSG_NOSIGNAL) = 1"#,
        "\n",
        r#"29216 connect(21<TCPv6:[3314660]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "\x32\x30\x30\x31\x3a\x64\x62\x38\x3a\x3a\x31", &sin6_addr), sin6_scope_id=0}, 28) = 0"#,
        "\n",
        r#"29216 connect(24<UDPv6:[3314661]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "\x32\x30\x30\x31\x3a\x34\x38\x36\x30\x3a\x34\x38\x36\x30\x3a\x3a\x38\x38\x38\x38", &sin6_addr), sin6_scope_id=0}, 28) = 0"#,
        "\n",
        r#"29216 connect(22<TCP:[3314662]>, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("\x31\x32\x37\x2e\x30\x2e\x30\x2e\x31")}, 16) = -1 EINPROGRESS"#,
        "\n",
        r#"29216 connect(23<UNIX-STREAM:[3314663]>, {sa_family=AF_UNIX, sun_path="\x2f\x74\x6d\x70"}, 110) = 0"#,
        "\n",
        // A mojo message on a socket pair is no DNS query, even when its bytes look like one.
        r#"29186 sendto(14<UNIX-SEQPACKET:[3314664]>, "\x10\x00\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03\x77\x77\x77\x00\x00\x01\x00\x01", 21, MSG_NOSIGNAL, NULL, 0) = 21"#,
    );
    let found = destinations(log);
    let want: BTreeSet<Destination> = [
        Destination::Connect { addr: "10.0.0.53".into(), port: 53, udp: true },
        Destination::Lookup("example.com".into()),
        Destination::Lookup("www.example.org".into()),
        Destination::Connect { addr: "2001:db8::1".into(), port: 443, udp: false },
        Destination::Connect { addr: IPV6_PROBE.into(), port: 443, udp: true },
        Destination::Connect { addr: "127.0.0.1".into(), port: 8080, udp: false },
    ]
    .into_iter()
    .collect();
    assert_eq!(found, want);
    assert_eq!(
        unexpected(&found, &["example.com"]),
        vec!["connect 2001:db8::1 port 443 (TCP)".to_string(), "DNS lookup www.example.org".to_string()]
    );
    // A resolver contact whose query was never seen still counts as a lookup.
    let only_connect: BTreeSet<Destination> =
        [Destination::Connect { addr: "10.0.0.53".into(), port: 53, udp: true }].into_iter().collect();
    assert_eq!(unexpected(&only_connect, &["example.com"]), vec![format!("{UNDECODED_LOOKUP} via 10.0.0.53")]);
}

// ---------------------------------------------------------------- the traced session

fn strace_available() -> Result<(), String> {
    let out = Command::new("strace").args(["-f", "-qq", "-e", "trace=connect", "-o", "/dev/null", "true"]).output();
    match out {
        Err(e) => Err(format!("strace is not installed ({e}); ./dev setup installs it")),
        Ok(o) if !o.status.success() => {
            Err(format!("strace cannot trace here (ptrace refused?): {}", String::from_utf8_lossy(&o.stderr).trim()))
        }
        Ok(_) => Ok(()),
    }
}

/// `cmd` run under strace, the trace written to `trace`.
fn traced(trace: &Path, cmd: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-yy", "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-s", "512", "-xx", "-o"]);
    c.arg(trace).arg("--").args(cmd);
    c
}

/// Loopback pages: `/` (links to other hosts, a popup opener), `/file.bin` (a download), `/popup`.
fn serve_site() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let base = format!("http://{}/", listener.local_addr().expect("local addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
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
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let (kind, extra, body): (&str, &str, String) = match path.as_str() {
                    "/file.bin" => (
                        "application/octet-stream",
                        "Content-Disposition: attachment; filename=\"file.bin\"\r\n",
                        "0123456789".repeat(100),
                    ),
                    "/popup" => ("text/html", "", "<!doctype html><title>popup</title><p>popup page</p>".into()),
                    _ => (
                        "text/html",
                        "",
                        format!(
                            "<!doctype html><title>privacy</title><p>privacy page</p>\
                         <a href='http://link-target.test/'>a link to another host</a>\
                         <a href='https://www.wikipedia.org/'>and another</a>\
                         <form><input name=email autocomplete=email><input type=password name=pw></form>\
                         <textarea>misspeled wrods</textarea>\
                         <button id=pop onclick=\"window.open('{path}popup')\">popup</button>"
                        ),
                    ),
                };
                let mut s = stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    base
}

fn ok(data: &Path, op: &str, args: Value) -> Value {
    ctl(data, "agent-1", op, args.clone()).unwrap_or_else(|e| panic!("{op} {args}: {e}"))
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

/// The first child process of `parent`.
fn child_of(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse::<u32>().ok()?;
        (ppid == parent).then_some(pid)
    })
}

fn http_get(port: u16, path: &str, token: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// Drives one CDP client through the facade: lists targets, attaches, evaluates.
fn use_the_facade(data: &Path) {
    let disc: Value = serde_json::from_slice(&std::fs::read(data.join("browser-agent.json")).unwrap()).unwrap();
    let token = disc["token"].as_str().unwrap().to_owned();
    let cdp = disc["cdp"].as_str().unwrap_or_else(|| panic!("no cdp URL in browser-agent.json: {disc}"));
    let port: u16 = cdp.rsplit(':').next().unwrap().trim_end_matches('/').parse().unwrap();
    let version = http_get(port, "/json/version", &token);
    let body: Value = serde_json::from_str(version.split("\r\n\r\n").nth(1).unwrap_or("{}")).unwrap();
    let url = body["webSocketDebuggerUrl"].as_str().unwrap_or_else(|| panic!("no webSocketDebuggerUrl: {version}"));
    let (mut ws, _) = tungstenite::connect(url).unwrap();
    let mut call = |id: u64, session: Option<&str>, method: &str, params: Value| -> Value {
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        ws.send(tungstenite::Message::text(msg.to_string())).unwrap();
        loop {
            let tungstenite::Message::Text(text) = ws.read().unwrap() else { continue };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    let targets = call(1, None, "Target.getTargets", json!({}));
    // The main page (navigated to `?again`), which has the popup button.
    let page = targets["result"]["targetInfos"]
        .as_array()
        .and_then(|t| {
            t.iter().find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.ends_with("?again")))
        })
        .unwrap_or_else(|| panic!("no main page target: {targets}"))["targetId"]
        .clone();
    let attached = call(2, None, "Target.attachToTarget", json!({"targetId": page, "flatten": true}));
    let session = attached["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("attach: {attached}")).to_owned();
    let v = call(3, Some(&session), "Runtime.evaluate", json!({"expression": "document.title", "returnByValue": true}));
    assert!(v["result"]["result"]["value"].is_string(), "evaluate: {v}");
    // A real popup: a click with a user gesture opens it.
    let v = call(
        4,
        Some(&session),
        "Runtime.evaluate",
        json!({"expression": "document.getElementById('pop').click(), 'clicked'", "userGesture": true, "returnByValue": true}),
    );
    assert_eq!(v["result"]["result"]["value"], "clicked", "click: {v}");
}

/// Every feature in one traced session; only loopback is reached.
#[test]
fn a_full_session_reaches_only_loopback() {
    if let Err(why) = strace_available() {
        return skip_unless_strict("a_full_session_reaches_only_loopback", &why);
    }
    let tmp = support::TestRoot::new();
    let root = tmp.path();
    let (data, proj, home) = (root.join("data"), root.join("proj"), root.join("home"));
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let site = serve_site();
    let trace = root.join("app.trace");
    let args: Vec<&std::ffi::OsStr> = vec![
        APP.as_ref(),
        "--headless".as_ref(),
        "--data-dir".as_ref(),
        data.as_os_str(),
        "--project".as_ref(),
        proj.as_os_str(),
        "--agent".as_ref(),
        "agent-1".as_ref(),
        "--agent-browser-control".as_ref(),
        "--cdp".as_ref(),
    ];
    let log = std::fs::File::create(root.join("app.log")).unwrap();
    let mut app = traced(&trace, &args)
        .env("HOME", &home)
        .env("SHELL", "/bin/bash")
        .env("RUST_LOG", "warn")
        .env_remove("TERMSPRAWL_DATA_DIR")
        .env_remove("TERMSPRAWL_NODE_ID")
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .unwrap();
    let out = BufReader::new(app.stdout.take().unwrap());
    let mut lines = out.lines().map_while(Result::ok);
    let deadline = Instant::now() + Duration::from_secs(90);
    for line in lines.by_ref() {
        if line.contains("browser agent server") {
            break;
        }
        assert!(Instant::now() < deadline, "the traced app did not start");
    }
    std::thread::spawn(move || lines.for_each(drop));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let b = ok(&data, "browser_open", json!({"url": site}))["nodeId"].as_str().unwrap().to_owned();
        assert!(ok(&data, "browser_inspect", json!({"nodeId": b}))["text"].as_str().unwrap().contains("privacy page"));
        // A download and a popup.
        let _ = ok(&data, "browser_open", json!({"url": format!("{site}file.bin")}));
        let _ = ok(&data, "browser_open", json!({"url": format!("{site}popup")}));
        let _ = ctl(&data, "agent-1", "browser_navigate", json!({"nodeId": b, "url": format!("{site}?again")}));
        // A terminal.
        let t = ok(&data, "terminal_open", json!({"title": "shell"}))["nodeId"].as_str().unwrap().to_owned();
        let _ = ok(&data, "terminal_submit", json!({"nodeId": t, "text": "echo privacy-$((6*7))"}));
        // A CDP client on the facade; it also opens a popup from the main page.
        use_the_facade(&data);
        let pages = ok(&data, "browser_list", json!({}));
        eprintln!("browsers after the popup: {pages}");
        // Background services that wait a little after start-up get their chance.
        std::thread::sleep(Duration::from_secs(8));
    }));
    // The app is strace's child; strace exits once the app and its helpers have.
    if let Some(pid) = child_of(app.id()) {
        // SAFETY: kill(2) on the app this test started.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
    let status = wait_exit(&mut app, 60);
    if status.is_none() {
        let _ = app.kill();
        let _ = app.wait();
    }
    if let Err(p) = result {
        eprintln!("--- app.log\n{}", std::fs::read_to_string(root.join("app.log")).unwrap_or_default());
        std::panic::resume_unwind(p);
    }
    let app_found = destinations(&std::fs::read_to_string(&trace).unwrap());

    // And a shot of the same page.
    let shot_trace = root.join("shot.trace");
    let png = root.join("shot.png");
    let shot_args: Vec<&std::ffi::OsStr> =
        vec![APP.as_ref(), "shot".as_ref(), site.as_ref(), "-o".as_ref(), png.as_os_str()];
    let shot = traced(&shot_trace, &shot_args).output().unwrap();
    assert!(shot.status.success(), "shot: {}", String::from_utf8_lossy(&shot.stderr));
    let shot_found = destinations(&std::fs::read_to_string(&shot_trace).unwrap());

    eprintln!("destinations: app {app_found:?}, shot {shot_found:?}");
    let bad: Vec<String> = unexpected(&app_found, &[]).into_iter().chain(unexpected(&shot_found, &[])).collect();
    assert!(bad.is_empty(), "the app reached beyond loopback:\n{}", bad.join("\n"));
    // Name lookups of any host at all (none was asked for) would show as port-53 connects.
    assert!(
        !app_found
            .iter()
            .chain(&shot_found)
            .any(|d| matches!(d, Destination::Connect { port: 53, .. }) || matches!(d, Destination::Lookup(_))),
        "a DNS lookup happened: {app_found:?} {shot_found:?}"
    );
}

/// The trap catches a page that fetches a host name: the lookup is listed,
/// and is accepted only once the test says it asked for that host.
#[test]
fn a_page_that_fetches_a_host_name_is_caught() {
    if let Err(why) = strace_available() {
        return skip_unless_strict("a_page_that_fetches_a_host_name_is_caught", &why);
    }
    let tmp = support::TestRoot::new();
    let page = support::serve_page(Box::leak(
        format!("<!doctype html><title>probe</title><p>probe</p><img src='http://{PROBE_HOST}/pixel.png'>")
            .into_boxed_str(),
    ));
    let trace: PathBuf = tmp.path().join("shot.trace");
    let png = tmp.path().join("probe.png");
    let args: Vec<&std::ffi::OsStr> = vec![
        APP.as_ref(),
        "shot".as_ref(),
        page.as_ref(),
        "--wait".as_ref(),
        "4000".as_ref(),
        "-o".as_ref(),
        png.as_os_str(),
    ];
    let out = traced(&trace, &args).output().unwrap();
    assert!(out.status.success(), "shot: {}", String::from_utf8_lossy(&out.stderr));
    let found = destinations(&std::fs::read_to_string(&trace).unwrap());
    let bad = unexpected(&found, &[]);
    let named = bad.contains(&format!("DNS lookup {PROBE_HOST}"));
    // Under load the shot can end between the resolver connect and the query.
    let undecoded = bad.iter().any(|b| b.starts_with(UNDECODED_LOOKUP));
    assert!(named || undecoded, "the lookup of {PROBE_HOST} was not caught; found {found:?}");
    if named {
        assert_eq!(unexpected(&found, &[PROBE_HOST]), Vec::<String>::new(), "found {found:?}");
    }
}
