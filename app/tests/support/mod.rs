//! Shared pieces of the app's end-to-end tests.
#![allow(dead_code)]

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

/// A loopback URL on which nothing listens.
pub fn closed_port_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = l.local_addr().expect("local addr").port();
    drop(l);
    format!("http://127.0.0.1:{port}/")
}
