//! Shared pieces of the real-CEF tests: a local page server and an event log.
#![allow(dead_code)]

use cef_bridge::{BrowserEvent, Engine, EngineHost};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

/// A tiny HTTP/1.1 server on 127.0.0.1 serving fixed pages (Connection: close).
pub struct PageServer {
    /// Base URL, e.g. http://127.0.0.1:41234
    pub base: String,
}

/// One fixed response.
#[derive(Clone)]
pub struct Page {
    /// Content type.
    pub content_type: &'static str,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Page {
    /// An HTML page.
    pub fn html(body: &str) -> Self {
        Page { content_type: "text/html; charset=utf-8", headers: vec![], body: body.as_bytes().to_vec() }
    }
}

impl PageServer {
    /// Starts serving `pages` (path → page) on a random loopback port.
    pub fn start(pages: HashMap<&'static str, Page>) -> PageServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let pages = Arc::new(pages);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let pages = pages.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(match stream.try_clone() {
                        Ok(s) => s,
                        Err(_) => return,
                    });
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    let path = path.split('?').next().unwrap_or("/").to_string();
                    let mut out = stream;
                    let resp = match pages.get(path.as_str()) {
                        Some(p) => {
                            let mut head = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                                p.content_type,
                                p.body.len()
                            );
                            for (k, v) in &p.headers {
                                head.push_str(&format!("{k}: {v}\r\n"));
                            }
                            head.push_str("\r\n");
                            let mut bytes = head.into_bytes();
                            bytes.extend_from_slice(&p.body);
                            bytes
                        }
                        None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found"
                            .to_vec(),
                    };
                    let _ = out.write_all(&resp);
                });
            }
        });
        PageServer { base }
    }

    /// Absolute URL of a path.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

/// Records every browser event.
#[derive(Default)]
pub struct EventLog {
    /// Events in arrival order.
    pub events: Mutex<Vec<BrowserEvent>>,
}

impl EngineHost for EventLog {
    fn schedule_pump(&self, _delay: Duration) {}
    fn browser_event(&self, event: BrowserEvent) {
        self.events.lock().push(event);
    }
}

impl EventLog {
    /// Index to search from for later waits.
    pub fn mark(&self) -> usize {
        self.events.lock().len()
    }

    /// Pumps until an event after `from` matches, returning it.
    pub fn wait(
        &self,
        engine: &Engine,
        from: usize,
        timeout: Duration,
        mut pred: impl FnMut(&BrowserEvent) -> bool,
    ) -> Option<BrowserEvent> {
        let mut found = None;
        engine.pump_until(timeout, || {
            let ev = self.events.lock();
            found = ev[from.min(ev.len())..].iter().find(|e| pred(e)).cloned();
            found.is_some()
        });
        found
    }
}
