//! `termsprawl shot` end to end: the real binary, real CEF, no X server.

mod support;

use std::path::Path;
use std::process::Command;
use support::{closed_port_url, serve_page};

const PAGE: &str = r#"<!doctype html><title>shot</title>
<style>html,body{margin:0;background:rgb(18,52,86)}#box{position:absolute;left:40px;top:30px;width:120px;height:60px;background:rgb(250,20,30)}#tall{height:2000px}</style>
<div id=box></div><div id=tall></div>
<script>window.addEventListener('load', () => setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.style.cssText = 'position:absolute;left:0;top:200px;width:50px;height:50px;background:rgb(0,200,0)'; document.body.appendChild(d); }, 100));</script>"#;

/// Two requests after load, 300 ms apart (under the 500 ms quiet period), then a green square.
const BUSY_AFTER_LOAD: &str = r#"<!doctype html><title>busy</title><style>html,body{margin:0;background:rgb(18,52,86)}</style>
<script>const later = ms => new Promise(r => setTimeout(r, ms));
window.addEventListener('load', async () => {
  await later(300); await fetch('/one');
  await later(300); await fetch('/two');
  const d = document.createElement('div'); d.style.cssText = 'position:absolute;left:0;top:0;width:50px;height:50px;background:rgb(0,200,0)'; document.body.appendChild(d);
});</script>"#;

fn shot(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_termsprawl")).arg("shot").args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb: Vec<u8> = buf[..info.buffer_size()].chunks(channels).flat_map(|p| p[..3].to_vec()).collect();
    (info.width, info.height, rgb)
}

fn px(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let i = ((y * img.0 + x) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 2)
}

#[test]
fn captures_viewport_full_page_selector_and_delay() {
    let base = serve_page(PAGE);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("view.png");
    let (ok, err) = shot(&[&base, "-o", out.to_str().unwrap(), "--size", "320x240"]);
    assert!(ok, "{err}");
    let img = decode(&out);
    assert_eq!((img.0, img.1), (320, 240));
    assert!(close(px(&img, 100, 60), [250, 20, 30]), "box colour {:?}", px(&img, 100, 60));
    assert!(close(px(&img, 300, 200), [18, 52, 86]), "background {:?}", px(&img, 300, 200));
    assert!(close(px(&img, 316, 5), [18, 52, 86]), "scrollbar visible: {:?}", px(&img, 316, 5));

    let full = dir.path().join("full.png");
    let (ok, err) = shot(&[&base, "-o", full.to_str().unwrap(), "--size", "320x240", "--full-page"]);
    assert!(ok, "{err}");
    let img = decode(&full);
    assert_eq!((img.0, img.1), (320, 2000));

    let el = dir.path().join("el.png");
    let (ok, err) = shot(&[&base, "-o", el.to_str().unwrap(), "--selector", "#box"]);
    assert!(ok, "{err}");
    let img = decode(&el);
    assert_eq!((img.0, img.1), (120, 60));
    assert!(close(px(&img, 60, 30), [250, 20, 30]));

    let late = dir.path().join("late.png");
    let (ok, err) = shot(&[&base, "-o", late.to_str().unwrap(), "--size", "320x300", "--wait", "800"]);
    assert!(ok, "{err}");
    assert!(close(px(&decode(&late), 25, 225), [0, 200, 0]), "element added 100 ms after load missing with --wait 800");
}

#[test]
fn networkidle_waits_for_requests_made_after_load() {
    let base = serve_page(BUSY_AFTER_LOAD);
    let dir = tempfile::tempdir().unwrap();
    let (load, idle) = (dir.path().join("load.png"), dir.path().join("idle.png"));
    let (ok, err) = shot(&[&base, "-o", load.to_str().unwrap(), "--size", "200x100", "--wait", "load"]);
    assert!(ok, "{err}");
    assert!(close(px(&decode(&load), 25, 25), [18, 52, 86]), "at load the page has not fetched yet");
    let (ok, err) = shot(&[&base, "-o", idle.to_str().unwrap(), "--size", "200x100", "--wait", "networkidle"]);
    assert!(ok, "{err}");
    assert!(
        close(px(&decode(&idle), 25, 25), [0, 200, 0]),
        "networkidle returned before the page's second fetch finished: {:?}",
        px(&decode(&idle), 25, 25)
    );
}

#[test]
fn failures_exit_non_zero_with_one_line_and_write_nothing() {
    let base = serve_page(PAGE);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.png");
    let o = out.to_str().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["javascript:alert(1)".into()], "refused"),
        (vec!["file:///etc/passwd".into()], "refused"),
        (vec!["data:text/html,hi".into()], "refused"),
        (vec!["http://".into()], "malformed address"),
        (vec!["not a url at all".into()], "malformed address"),
        (vec![closed_port_url()], "ERR_CONNECTION_REFUSED"),
        (vec!["http://no-such-host.invalid/".into()], "ERR_NAME_NOT_RESOLVED"),
        (vec![base.clone(), "--selector".into(), "#missing".into()], "matched no visible element"),
        (vec![base.clone(), "--size".into(), "0x10".into()], "size"),
        (vec![base.clone(), "--wait".into(), "soon".into()], "--wait"),
    ];
    for (args, expect) in cases {
        let mut full: Vec<&str> = args.iter().map(String::as_str).collect();
        full.extend(["-o", o]);
        let (ok, err) = shot(&full);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(expect), "{args:?}: stderr {err:?} lacks {expect:?}");
        let reason_lines = err.lines().filter(|l| l.starts_with("termsprawl:") || l.starts_with("error:")).count();
        assert_eq!(reason_lines, 1, "{args:?}: want one reason line, got {err:?}");
        assert!(!out.exists(), "{args:?} wrote a file");
    }
}
