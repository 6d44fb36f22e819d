//! Hostile HTTP/1.1 requests and a strict response reader, shared by the
//! property tests that throw raw bytes at the loopback servers
//! (`tool-server/tests/fuzz_http.rs`, `cdp-facade/tests/fuzz_http.rs`; both
//! include this file with `#[path]`, so it has no crate of its own).
//!
//! The request shapes are the ones behind real HTTP/1 desync bugs (hyper's
//! CVE-2021-32714/32715, Node's inspector fixes): conflicting framing, signed
//! or duplicated lengths, chunk sizes that overflow, obs-fold, absolute-form
//! targets, invalid UTF-8, deeply nested JSON, plus random bytes and random
//! mutations of a valid request.

#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;

/// Bounded run size for `cargo test`; `PROPTEST_CASES` (set by `fuzz/run`) overrides it.
pub fn cases(bounded: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(bounded)
}

/// What a well-formed request to the server under test looks like; shapes are built around it.
#[derive(Debug, Clone)]
pub struct Template {
    pub method: String,
    pub path: String,
    /// `127.0.0.1:<port>`.
    pub host: String,
    /// Extra header lines (each ending in CRLF), e.g. the Authorization header.
    pub headers: String,
    /// Builds a JSON body carrying `marker`, so the test can tell which request the server acted on.
    pub body: fn(&str) -> String,
}

impl Template {
    fn head(&self, framing: &str) -> String {
        format!("{} {} HTTP/1.1\r\nHost: {}\r\n{}{}", self.method, self.path, self.host, self.headers, framing)
    }

    /// A complete, valid request whose body carries `marker`.
    pub fn valid(&self, marker: &str) -> Vec<u8> {
        let body = (self.body)(marker);
        format!("{}Content-Length: {}\r\n\r\n{body}", self.head(""), body.len()).into_bytes()
    }
}

/// How a hostile request is framed.
#[derive(Debug, Clone)]
pub enum Shape {
    /// A valid request (so mutations and pipelining start from something real).
    Valid,
    /// Both Content-Length and `Transfer-Encoding: chunked`, with a second request hidden after the chunked body.
    ClAndTe { cl_covers_all: bool, te: &'static str },
    /// Two Content-Length headers (equal or not), the smuggled request behind the shorter one.
    DuplicateCl { same: bool },
    /// A Content-Length that is not a plain decimal (`+3`, `-1`, `0x10`, ` 3`, overflow…).
    OddCl(&'static str),
    /// A chunked body whose size line is hostile.
    OddChunk(&'static str),
    /// A header continued on the next line (obs-fold).
    ObsFold { header: &'static str },
    /// `POST http://host/path HTTP/1.1`.
    AbsoluteForm { authority: &'static str },
    /// Invalid UTF-8 in one place of an otherwise valid request.
    InvalidUtf8 { place: Utf8Place, bytes: Vec<u8> },
    /// A body of `depth` nested arrays or objects.
    DeepJson { depth: usize, objects: bool },
    /// Lines ended with a bare LF (or bare CR).
    BareLineEnds { cr_only: bool },
    /// Version other than HTTP/1.1.
    Version(&'static str),
    /// Many or very long headers.
    BigHeaders { count: usize, len: usize },
    /// Two valid requests back to back.
    Pipelined,
    /// Random bytes.
    Random(Vec<u8>),
}

/// Where [`Shape::InvalidUtf8`] puts its bytes.
#[derive(Debug, Clone, Copy)]
pub enum Utf8Place {
    Target,
    HeaderValue,
    HeaderName,
    Body,
    JsonString,
}

/// A byte-level edit applied after the shape is built.
#[derive(Debug, Clone)]
pub enum Mutation {
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

/// One generated input: a shape plus up to a few byte edits.
#[derive(Debug, Clone)]
pub struct Hostile {
    pub shape: Shape,
    pub mutations: Vec<Mutation>,
}

impl Hostile {
    /// True for shapes whose embedded second request must never run (framing a correct peer rejects,
    /// or after which RFC 9112 §6.1 requires closing). Byte edits void the promise.
    pub fn forbids_smuggled(&self) -> bool {
        self.mutations.is_empty()
            && matches!(
                self.shape,
                Shape::ClAndTe { .. } | Shape::DuplicateCl { same: false } | Shape::OddCl(_) | Shape::OddChunk(_)
            )
    }

    /// The bytes to send; `outer` and `smuggled` are the markers of the visible and hidden request.
    pub fn bytes(&self, t: &Template, outer: &str, smuggled: &str) -> Vec<u8> {
        let mut out = build(&self.shape, t, outer, smuggled);
        for m in &self.mutations {
            let len = out.len();
            match m {
                Mutation::Set(at, b) if len > 0 => out[at % len] = *b,
                Mutation::Insert(at, bytes) => {
                    let at = at % (len + 1);
                    out.splice(at..at, bytes.iter().copied());
                }
                Mutation::Delete(at, n) if len > 0 => {
                    let at = at % len;
                    let end = (at + n).min(len);
                    out.drain(at..end);
                }
                Mutation::Truncate(at) => out.truncate(at % (len + 1)),
                _ => {}
            }
        }
        out
    }
}

fn chunked(body: &str) -> String {
    format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len())
}

fn build(shape: &Shape, t: &Template, outer: &str, smuggled: &str) -> Vec<u8> {
    let body = (t.body)(outer);
    let hidden = String::from_utf8(t.valid(smuggled)).expect("templates are ASCII");
    match shape {
        Shape::Valid => t.valid(outer),
        Shape::ClAndTe { cl_covers_all, te } => {
            let chunks = chunked(&body);
            let cl = if *cl_covers_all { chunks.len() + hidden.len() } else { 5 };
            format!("{}Content-Length: {cl}\r\nTransfer-Encoding: {te}\r\n\r\n{chunks}{hidden}", t.head(""))
                .into_bytes()
        }
        Shape::DuplicateCl { same } => {
            let long = body.len() + hidden.len();
            let first = if *same { long } else { body.len() };
            format!("{}Content-Length: {first}\r\nContent-Length: {long}\r\n\r\n{body}{hidden}", t.head(""))
                .into_bytes()
        }
        Shape::OddCl(value) => format!("{}Content-Length: {value}\r\n\r\n{body}{hidden}", t.head("")).into_bytes(),
        Shape::OddChunk(size) => {
            format!("{}Transfer-Encoding: chunked\r\n\r\n{size}\r\n{body}\r\n0\r\n\r\n{hidden}", t.head(""))
                .into_bytes()
        }
        Shape::ObsFold { header } => {
            let folded = match *header {
                "host" => format!("{} {} HTTP/1.1\r\nHost:\r\n {}\r\n{}", t.method, t.path, t.host, t.headers),
                "content-length" => t.head(""),
                _ => format!(
                    "{} {} HTTP/1.1\r\nHost: {}\r\nX-Folded: a\r\n\tb\r\n{}",
                    t.method, t.path, t.host, t.headers
                ),
            };
            let framing = if *header == "content-length" {
                format!("Content-Length:\r\n {}\r\n", body.len())
            } else {
                format!("Content-Length: {}\r\n", body.len())
            };
            format!("{folded}{framing}\r\n{body}").into_bytes()
        }
        Shape::AbsoluteForm { authority } => {
            let authority = if authority.is_empty() { t.host.as_str() } else { authority };
            format!(
                "{} http://{authority}{} HTTP/1.1\r\nHost: {}\r\n{}Content-Length: {}\r\n\r\n{body}",
                t.method,
                t.path,
                t.host,
                t.headers,
                body.len()
            )
            .into_bytes()
        }
        Shape::InvalidUtf8 { place, bytes } => {
            let mut out = Vec::new();
            let target: Vec<u8> = match place {
                Utf8Place::Target => [t.path.as_bytes(), bytes].concat(),
                _ => t.path.clone().into_bytes(),
            };
            out.extend_from_slice(t.method.as_bytes());
            out.push(b' ');
            out.extend_from_slice(&target);
            out.extend_from_slice(format!(" HTTP/1.1\r\nHost: {}\r\n{}", t.host, t.headers).as_bytes());
            match place {
                Utf8Place::HeaderValue => out.extend_from_slice(&[b"X-Bytes: ".as_slice(), bytes, b"\r\n"].concat()),
                Utf8Place::HeaderName => out.extend_from_slice(&[b"X-".as_slice(), bytes, b": v\r\n"].concat()),
                _ => {}
            }
            let payload: Vec<u8> = match place {
                Utf8Place::Body => bytes.clone(),
                Utf8Place::JsonString => {
                    let text = body.replacen(outer, "\u{1}", 1);
                    let (a, b) = text.split_once('\u{1}').unwrap_or((&text, ""));
                    [a.as_bytes(), bytes, b.as_bytes()].concat()
                }
                _ => body.clone().into_bytes(),
            };
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", payload.len()).as_bytes());
            out.extend_from_slice(&payload);
            out
        }
        Shape::DeepJson { depth, objects } => {
            let (open, close) = if *objects { ("{\"a\":", "}") } else { ("[", "]") };
            let nested = format!("{}1{}", open.repeat(*depth), close.repeat(*depth));
            let body = body.replacen(&format!("\"{outer}\""), &nested, 1);
            let body = if body.contains(&nested) { body } else { nested };
            format!("{}Content-Length: {}\r\n\r\n{body}", t.head(""), body.len()).into_bytes()
        }
        Shape::BareLineEnds { cr_only } => {
            let text = String::from_utf8(t.valid(outer)).expect("templates are ASCII");
            text.replace("\r\n", if *cr_only { "\r" } else { "\n" }).into_bytes()
        }
        Shape::Version(version) => {
            let text = String::from_utf8(t.valid(outer)).expect("templates are ASCII");
            text.replacen("HTTP/1.1", version, 1).into_bytes()
        }
        Shape::BigHeaders { count, len } => {
            let extra: String = (0..*count).map(|i| format!("X-H{i}: {}\r\n", "v".repeat(*len))).collect();
            format!("{}{extra}Content-Length: {}\r\n\r\n{body}", t.head(""), body.len()).into_bytes()
        }
        Shape::Pipelined => [t.valid(outer), t.valid(smuggled)].concat(),
        Shape::Random(bytes) => bytes.clone(),
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let te = prop::sample::select(vec![
        "chunked",
        "Chunked",
        "chunked, identity",
        "identity, chunked",
        " chunked",
        "\tchunked",
        "xchunked",
        "chunked\r\nTransfer-Encoding: chunked",
    ]);
    let odd_cl = prop::sample::select(vec![
        "+3",
        "-1",
        "0x10",
        " 3",
        "3 ",
        "3, 3",
        "3,4",
        "1e3",
        "00000000000000000000000000000003",
        "99999999999999999999999",
        "18446744073709551616",
        "",
    ]);
    let odd_chunk = prop::sample::select(vec![
        "ffffffffffffffffffff",
        "10000000000000000",
        "fffffffffffffff0",
        "-1",
        "0x10",
        "+10",
        " 10",
        "10;ext=\"x\"",
        "10 ;",
        "g",
        "",
    ]);
    let place = prop::sample::select(vec![
        Utf8Place::Target,
        Utf8Place::HeaderValue,
        Utf8Place::HeaderName,
        Utf8Place::Body,
        Utf8Place::JsonString,
    ]);
    let invalid = prop_oneof![
        Just(vec![0xff]),
        Just(vec![0xc0, 0xaf]),
        Just(vec![0xed, 0xa0, 0x80]),
        Just(vec![0xf4, 0x90, 0x80, 0x80]),
        Just(vec![0xe2, 0x82]),
        vec(any::<u8>(), 1..8),
    ];
    prop_oneof![
        3 => Just(Shape::Valid),
        2 => (any::<bool>(), te).prop_map(|(cl_covers_all, te)| Shape::ClAndTe { cl_covers_all, te }),
        1 => any::<bool>().prop_map(|same| Shape::DuplicateCl { same }),
        2 => odd_cl.prop_map(Shape::OddCl),
        2 => odd_chunk.prop_map(Shape::OddChunk),
        1 => prop::sample::select(vec!["host", "content-length", "other"]).prop_map(|header| Shape::ObsFold { header }),
        1 => prop::sample::select(vec!["", "evil.test", "127.0.0.1:1", "[::1]"])
            .prop_map(|authority| Shape::AbsoluteForm { authority }),
        2 => (place, invalid).prop_map(|(place, bytes)| Shape::InvalidUtf8 { place, bytes }),
        1 => (prop_oneof![1usize..200, 200usize..20_000], any::<bool>())
            .prop_map(|(depth, objects)| Shape::DeepJson { depth, objects }),
        1 => any::<bool>().prop_map(|cr_only| Shape::BareLineEnds { cr_only }),
        1 => prop::sample::select(vec!["HTTP/1.0", "HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "HTTP/1.1 x", "http/1.1", ""])
            .prop_map(Shape::Version),
        1 => prop_oneof![(1usize..300, 1usize..64), (1usize..4, 1000usize..120_000)]
            .prop_map(|(count, len)| Shape::BigHeaders { count, len }),
        1 => Just(Shape::Pipelined),
        2 => vec(any::<u8>(), 0..512).prop_map(Shape::Random),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let special = prop::sample::select(vec![b'\r', b'\n', b' ', b':', b'\0', 0x7f, 0xff, b'0', b'{', b'"']);
    prop_oneof![
        (any::<usize>(), prop_oneof![any::<u8>(), special]).prop_map(|(at, b)| Mutation::Set(at, b)),
        (any::<usize>(), vec(any::<u8>(), 1..16)).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        (any::<usize>(), 1usize..32).prop_map(|(at, n)| Mutation::Delete(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// A hostile request: most are unmutated shapes (so their framing promises can be checked), some edited.
pub fn hostile() -> impl Strategy<Value = Hostile> {
    (shape(), prop_oneof![2 => Just(Vec::new()), 1 => vec(mutation(), 1..4)])
        .prop_map(|(shape, mutations)| Hostile { shape, mutations })
}

/// One parsed response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// Whether the status is one a correct HTTP/1.1 peer may answer a hostile request with.
    fn has_expected_status(&self) -> bool {
        matches!(self.status, 200 | 400 | 401 | 403 | 404 | 405 | 408 | 413 | 414 | 431 | 501 | 505)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// What came back on one connection.
#[derive(Debug)]
pub struct Exchange {
    pub replies: Vec<Reply>,
    /// The connection ended with a reset (the server closed with our bytes unread), so the last
    /// response may have been cut off by the kernel.
    pub reset: bool,
}

impl Exchange {
    /// Fails the case when a reply has a status no correct peer would answer `sent` with.
    pub fn check_statuses(&self, sent: &[u8]) -> Result<(), TestCaseError> {
        for reply in &self.replies {
            prop_assert!(
                reply.has_expected_status(),
                "unexpected status {} for {:?}",
                reply.status,
                String::from_utf8_lossy(sent)
            );
        }
        Ok(())
    }
}

/// Sends `bytes` on a fresh connection, half-closes, and reads until the server closes.
///
/// Panics (failing the case) if what came back is not a sequence of well-formed HTTP/1.1
/// responses; a reset may truncate only the tail.
pub fn exchange(port: u16, bytes: &[u8], patience: Duration) -> Exchange {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server under test");
    stream.set_read_timeout(Some(patience)).unwrap();
    stream.set_write_timeout(Some(patience)).unwrap();
    // The server may answer and close before reading everything; a failed write is fine.
    let _ = stream.write_all(bytes);
    let _ = stream.shutdown(Shutdown::Write);
    let mut received = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let reset = loop {
        match stream.read(&mut chunk) {
            Ok(0) => break false,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break true,
            Err(e) => panic!("server neither answered nor closed within {patience:?}: {e}"),
        }
    };
    let replies = match parse_replies(&received) {
        Ok(replies) => replies,
        Err((replies, why)) if reset => {
            let _ = why;
            replies
        }
        Err((_, why)) => panic!("malformed response stream ({why}): {:?}", String::from_utf8_lossy(&received)),
    };
    Exchange { replies, reset }
}

/// Parses a byte stream that must consist of complete, Content-Length framed responses.
/// On error returns what parsed before the problem.
pub fn parse_replies(mut data: &[u8]) -> Result<Vec<Reply>, (Vec<Reply>, String)> {
    let mut replies = Vec::new();
    while !data.is_empty() {
        let Some(head_end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
            return Err((replies, "unterminated head".into()));
        };
        let Ok(head) = std::str::from_utf8(&data[..head_end]) else {
            return Err((replies, "head is not UTF-8".into()));
        };
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let mut parts = status_line.splitn(3, ' ');
        // An HTTP/1.0 request is answered in HTTP/1.0.
        if !matches!(parts.next(), Some("HTTP/1.1" | "HTTP/1.0")) {
            return Err((replies, format!("bad status line {status_line:?}")));
        }
        let Some(status) = parts.next().filter(|s| s.len() == 3).and_then(|s| s.parse::<u16>().ok()) else {
            return Err((replies, format!("bad status code in {status_line:?}")));
        };
        if !(100..600).contains(&status) {
            return Err((replies, format!("status {status} out of range")));
        }
        let mut headers = Vec::new();
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                return Err((replies, format!("bad header line {line:?}")));
            };
            if name.is_empty() || name.bytes().any(|b| b <= b' ' || b >= 0x7f) {
                return Err((replies, format!("bad header name {name:?}")));
            }
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        data = &data[head_end + 4..];
        let lengths: Vec<&String> =
            headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("content-length")).map(|(_, v)| v).collect();
        if headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding")) {
            return Err((replies, "the servers frame every response with Content-Length".into()));
        }
        let length = match (status, lengths.as_slice()) {
            (100..=199 | 204 | 304, []) => 0,
            (_, [one]) => match one.parse::<usize>() {
                Ok(n) => n,
                Err(_) => return Err((replies, format!("bad Content-Length {one:?}"))),
            },
            _ => return Err((replies, format!("{} Content-Length headers", lengths.len()))),
        };
        if data.len() < length {
            return Err((replies, "body shorter than its Content-Length".into()));
        }
        replies.push(Reply { status, headers, body: data[..length].to_vec() });
        data = &data[length..];
    }
    Ok(replies)
}
