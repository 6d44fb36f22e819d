//! The agent tool runtime end to end: the real headless app (real CEF, real
//! PTYs) as a child process, every operation driven through the real
//! `termsprawl-ctl` binary, and each effect checked — a moved node's rect, a
//! page's DOM after a click, a terminal's output, a launched agent's tool
//! calls, ownership refusals, browser control off, restart and SIGTERM.
//!
//! One test per surface, each with its own app and its own temp root (data
//! dir, tmux socket, HOME, project, page server), so one failure no longer
//! hides the rest. Nothing is shared between them, so they run side by side.

use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const APP: &str = env!("CARGO_BIN_EXE_termsprawl");

mod support;
use support::{ctl, eventually};

const PAGE: &str = r#"<!doctype html><title>tools page</title>
<h1>Tool test</h1>
<button id=b onclick="n++; document.title='clicked '+n; document.getElementById('out').textContent='clicks: '+n">Press me</button>
<input id=name placeholder="Your name" oninput="document.getElementById('echo').textContent='echo:'+this.value" onkeydown="k++; document.getElementById('keys').textContent='keydowns:'+k">
<div id=out>no clicks</div><div id=echo></div><div id=keys></div>
<script>let n = 0, k = 0;</script>"#;
const SECOND: &str = "<!doctype html><title>second</title><p>page two</p>";

/// The page model's test page: iframes from the same origin, another origin
/// (port `{B}`) and another site (`localhost`), one of each under an overlay
/// of this page, a chain nested deeper than inspect follows, an open
/// shadow root, hidden, covered and removable buttons, an off-page drawer,
/// and a forged ref attribute.
const FRAMES: &str = r#"<!doctype html><title>frames</title>
<nav aria-label="Drawer" style="position:fixed;left:-310px;top:0;width:300px"><a href="/d1">d1</a><a href="/d2">d2</a><a href="/d3">d3</a></nav>
<button id=top onclick="document.getElementById('gone').remove()">Remove</button>
<button id=gone>Soon gone</button>
<button id=hid style="visibility:hidden">Hidden one</button>
<div style="position:relative;width:200px;height:30px"><button id=cov style="width:200px;height:30px">Covered one</button><div style="position:absolute;inset:0"></div></div>
<button data-termsprawl-ref="e1" onclick="document.title='refs:'+document.querySelectorAll('[data-termsprawl-ref]').length">Forged</button>
<div id=host></div>
<script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<button onclick="this.textContent=\'shadow clicked\'">Shadow button</button>';</script>
<iframe title=same src="/inner?same" width=300 height=80></iframe>
<iframe title=origin src="http://127.0.0.1:{B}/inner?origin" width=300 height=80></iframe>
<iframe title=site src="http://localhost:{B}/inner?site" width=300 height=80></iframe>
<div style="position:relative;display:inline-block"><iframe title=under src="/inner?under" width=300 height=80></iframe><div class=veil style="position:absolute;inset:0"></div></div>
<div style="position:relative;display:inline-block"><iframe title=under-origin src="http://127.0.0.1:{B}/inner?under-origin" width=300 height=80></iframe><div class=veil style="position:absolute;inset:0"></div></div>
<div style="position:relative;display:inline-block"><iframe title=under-site src="http://localhost:{B}/inner?under-site" width=300 height=80></iframe><div class=veil style="position:absolute;inset:0"></div></div>
<iframe title=deep src="/nest?4" width=300 height=80></iframe>"#;

/// Frame `n{N}` of the nested chain, holding `/nest?{N-1}` (`/nest?0` is an [`INNER`] page).
const NEST: &str =
    r#"<!doctype html><title>nest</title><iframe title=n{N} src="/nest?{M}" width=260 height=60></iframe>"#;

/// What each iframe of [`FRAMES`] shows: a button and a field named after the frame.
const INNER: &str = r#"<!doctype html><title>inner</title><button onclick="this.textContent='clicked {Q}'">Inner {Q}</button> <input placeholder="Field {Q}">"#;

/// A loopback HTTP server: `/second` serves the second page, `/frames?B`
/// the page model's page (its other-origin frames on port B), `/inner?Q`
/// an iframe's page, `/nest?N` a frame N deep, `/many` 400 links, anything
/// else the first page.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}/", listener.local_addr().unwrap().port());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let path = first.split(' ').nth(1).unwrap_or("/");
                let query = path.split_once('?').map_or("", |(_, q)| q);
                let body = if path.starts_with("/second") {
                    SECOND.to_owned()
                } else if path.starts_with("/frames") {
                    FRAMES.replace("{B}", query)
                } else if path.starts_with("/inner") {
                    INNER.replace("{Q}", query)
                } else if path.starts_with("/nest") {
                    match query.parse::<u32>().unwrap_or(0) {
                        0 => INNER.replace("{Q}", "deep"),
                        n => NEST.replace("{N}", &n.to_string()).replace("{M}", &(n - 1).to_string()),
                    }
                } else if path.starts_with("/many") {
                    let links: String = (0..400).map(|i| format!("<p><a href=\"/l{i}\">link {i}</a>")).collect();
                    format!("<!doctype html><title>many</title>{links}")
                } else {
                    PAGE.to_owned()
                };
                let reply = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                let _ = (&stream).write_all(reply.as_bytes());
            });
        }
    });
    url
}

/// One running app instance.
struct App {
    child: Child,
}

impl App {
    fn start(root: &Path, data: &Path, extra: &[&str]) -> App {
        let mut cmd = Command::new(APP);
        cmd.args(["--headless", "--data-dir"]).arg(data).arg("--project").arg(root.join("proj")).args(extra);
        cmd.env("HOME", root.join("home"))
            .env("SHELL", "/bin/bash")
            .env("PATH", format!("{}:/usr/bin:/bin", root.join("bin").display()));
        cmd.env_remove("TERMSPRAWL_DATA_DIR").env_remove("TERMSPRAWL_NODE_ID");
        // No desktop: terminal_external falls back to the canvas unless preferences name a terminal.
        cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
        cmd.env_remove("VISUAL").env("EDITOR", "fake-editor --wait");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(root.join("app.log")).unwrap();
        cmd.stdout(Stdio::piped()).stderr(log).env("RUST_LOG", "termsprawl=info,tool_server=info");
        let mut child = cmd.spawn().unwrap();
        // The tool endpoint line on stdout says the services are up.
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "app exited before its tool server started: {:?}",
                child.try_wait()
            );
            if line.contains("agent tool server http://127.0.0.1:") {
                assert!(line.contains(&data.display().to_string()), "{line}");
                break;
            }
            assert!(Instant::now() < deadline, "app did not start");
        }
        // Keep draining stdout so the app never blocks on a full pipe.
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        });
        assert!(data.join("agent-tools/endpoint.json").is_file());
        App { child }
    }

    /// SIGTERM, and the exit status.
    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id() as i32;
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc_kill(pid, 15) }, 0);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "app did not exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

impl Drop for App {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn ok(data: &Path, node: &str, op: &str, args: Value) -> Value {
    ctl(data, node, op, args.clone()).unwrap_or_else(|e| panic!("{op} {args}: {e}"))
}

fn err(data: &Path, node: &str, op: &str, args: Value) -> String {
    match ctl(data, node, op, args.clone()) {
        Ok(v) => panic!("{op} {args} should fail, got {v}"),
        Err(e) => e,
    }
}

/// The ref of the first element line of a page model that reads `rest` after its ref.
fn element_ref(model: &Value, rest: &str) -> Option<String> {
    model["elements"].as_str()?.lines().find_map(|line| {
        let (r, tail) = line.trim_start().split_once(' ')?;
        (tail == rest || tail.starts_with(&format!("{rest} "))).then(|| r.to_owned())
    })
}

fn node<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list.as_array().unwrap().iter().find(|n| n["id"] == id)
}

fn read_terminal(data: &Path, id: &str) -> String {
    ok(data, "agent-1", "terminal_read", json!({"nodeId": id}))["text"].as_str().unwrap().to_owned()
}

fn write_exe(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The flags of the main instance: two agents, browser control on.
const MAIN_FLAGS: &[&str] = &["--agent", "agent-1", "--agent", "agent-2", "--agent-browser-control"];

/// One test's world: a temp root holding `bin/` (the stand-in `claude` and
/// the user's editor), `proj/`, the data dir, and a page server. Dropped
/// after the test's apps: it ends their tmux servers and, when the test
/// failed, prints the apps' log tails.
struct World {
    root: PathBuf,
    data: PathBuf,
    proj: PathBuf,
    page: String,
    // Last, so the directory outlives the clean-up in `drop`.
    _tmp: support::TestRoot,
}

impl World {
    fn new() -> World {
        let tmp = support::TestRoot::new();
        let root = tmp.path().to_owned();
        let data = root.join("data");
        let proj = root.join("proj");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        // A stand-in `claude` on PATH: it records how it was launched and uses the
        // tools exactly as a real agent would, through $TERMSPRAWL_CTL, then
        // reports a failed command (OSC 133;D), which tmux does not pass on.
        write_exe(
            &root.join("bin/claude"),
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$TERMSPRAWL_DATA_DIR/claude-args.txt\"\nenv | grep '^TERMSPRAWL_' > \"$TERMSPRAWL_DATA_DIR/claude-env.txt\"\n\"$TERMSPRAWL_CTL\" call sticky_open '{\"text\":\"hello from claude\"}' > \"$TERMSPRAWL_DATA_DIR/claude-out.txt\" 2>&1\nprintf '\\033]133;D;3\\007'\nexec sleep 600\n",
        );
        // A stand-in login for it (no real credentials), and a stand-in codex that is not logged in.
        std::fs::create_dir_all(root.join("home/.claude")).unwrap();
        std::fs::write(root.join("home/.claude/.credentials.json"), "{}").unwrap();
        write_exe(&root.join("bin/codex"), "#!/bin/sh\nexec sleep 600\n");
        // The user's editor, as artifact editor views run it ($EDITOR through sh).
        write_exe(
            &root.join("bin/fake-editor"),
            "#!/bin/sh\necho \"EDITING $*\"\nshift\ncat -n \"$1\"\nexec sleep 600\n",
        );
        let page = serve();
        World { root, data, proj, page, _tmp: tmp }
    }

    /// The main instance, on this world's data dir.
    fn start(&self) -> App {
        App::start(&self.root, &self.data, MAIN_FLAGS)
    }

    /// `ok` as agent-1 on this world's data dir.
    fn ok(&self, op: &str, args: Value) -> Value {
        ok(&self.data, "agent-1", op, args)
    }

    /// A new sticky's node id.
    fn sticky(&self, text: &str) -> String {
        self.ok("sticky_open", json!({"text": text}))["nodeId"].as_str().unwrap().to_owned()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // The tmux servers of both data dirs end with `_tmp` (a `TestRoot`).
        if std::thread::panicking() {
            for log in [self.root.join("app.log"), self.root.join("off/app.log")] {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(40).collect();
                eprintln!(
                    "--- {} (last lines)\n{}",
                    log.display(),
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
        }
    }
}

#[test]
fn discovery_and_canvas() {
    let w = World::new();
    let _app = w.start();
    let data = &w.data;
    // Discovery.
    let info = ok(data, "agent-1", "session_info", json!({}));
    assert_eq!(info["identity"]["nodeId"], "agent-1");
    assert_eq!(info["browserControl"], true);
    // The folder artifact_open's absolute paths must lie in, as the app opened it.
    let folder = info["projectFolder"].as_str().expect("session_info names the project folder");
    assert_eq!(std::fs::canonicalize(folder).unwrap(), std::fs::canonicalize(&w.proj).unwrap());
    let guide = ok(data, "agent-1", "guide_read", json!({"topic": "browser"}));
    assert!(guide.to_string().contains("untrusted"), "the browser guide states the trust rule: {guide}");
    assert!(err(data, "agent-1", "guide_read", json!({"topic": "nope"})).contains("topic"));

    // Canvas.
    let list = ok(data, "agent-1", "canvas_list", json!({}));
    assert_eq!(node(&list, "agent-1").unwrap()["kind"], "agent");
    assert_eq!(node(&list, "agent-1").unwrap()["agent"], "external");
    let sticky = ok(data, "agent-1", "sticky_open", json!({"text": "plan: test everything"}))["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let moved = ok(data, "agent-1", "canvas_move", json!({"nodeId": sticky, "x": 1234, "y": -567}));
    assert_eq!(moved["bounds"]["x"], 1234.0);
    let list = ok(data, "agent-1", "canvas_list", json!({}));
    let s = node(&list, &sticky).unwrap();
    assert_eq!(
        (s["x"].as_f64(), s["y"].as_f64(), s["kind"].as_str(), s["text"].as_str()),
        (Some(1234.0), Some(-567.0), Some("sticky"), Some("plan: test everything"))
    );
    let resized = ok(data, "agent-1", "canvas_resize", json!({"nodeId": sticky, "width": 300, "height": 250}));
    assert_eq!((resized["bounds"]["width"].as_f64(), resized["bounds"]["x"].as_f64()), (Some(300.0), Some(1234.0)));
    assert_eq!(ok(data, "agent-1", "canvas_select", json!({"nodeIds": [sticky]}))["selected"], json!([sticky]));
    assert!(err(data, "agent-1", "canvas_select", json!({"nodeIds": ["nope"]})).contains("no node nope"));
    let group = ok(data, "agent-1", "canvas_group", json!({"nodeIds": [sticky, "agent-2"], "title": "pair"}))["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let list = ok(data, "agent-1", "canvas_list", json!({}));
    assert_eq!(node(&list, &group).unwrap()["kind"], "group");
    assert_eq!(node(&list, &sticky).unwrap()["group"], group.as_str());
}

#[test]
fn artifacts() {
    let w = World::new();
    let _app = w.start();
    let (data, proj) = (&w.data, &w.proj);
    std::fs::write(proj.join("notes.md"), "# notes\n").unwrap();
    std::fs::write(proj.join("blob.bin"), b"a\0b").unwrap();
    std::fs::write(proj.join("pic.png"), b"\x89PNG").unwrap();
    let art = ok(data, "agent-1", "artifact_open", json!({"path": proj.join("notes.md")}))["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let list = ok(data, "agent-1", "canvas_list", json!({}));
    assert_eq!(node(&list, &art).unwrap()["kind"], "artifact");
    assert_eq!(node(&list, &art).unwrap()["view"], "editor");
    // The editor view runs the user's editor on the file, in the node's terminal.
    let shown = eventually(15, "the editor view", || {
        let text = ok(data, "agent-1", "terminal_read", json!({"nodeId": art}))["text"].as_str().unwrap().to_owned();
        text.contains("# notes").then_some(text)
    });
    assert!(
        shown.contains(&format!("EDITING --wait {}", proj.join("notes.md").display())) && shown.contains("# notes"),
        "{shown}"
    );
    assert!(
        err(data, "agent-1", "terminal_submit", json!({"nodeId": art, "text": "x"})).contains("not a terminal"),
        "artifact views are read-only to agents"
    );
    // The diff view shows the file's changes against HEAD.
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(proj)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "notes.md"]);
    git(&["commit", "-qm", "notes"]);
    std::fs::write(proj.join("notes.md"), "# notes, revised\n").unwrap();
    let diff = ok(data, "agent-1", "artifact_open", json!({"path": proj.join("notes.md"), "view": "diff"}))["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(node(&ok(data, "agent-1", "canvas_list", json!({})), &diff).unwrap()["view"], "diff");
    eventually(15, "the diff view", || {
        let text = ok(data, "agent-1", "terminal_read", json!({"nodeId": diff}))["text"].as_str().unwrap().to_owned();
        (text.contains("-# notes") && text.contains("+# notes, revised")).then_some(())
    });
    assert!(err(data, "agent-1", "artifact_open", json!({"path": proj.join("blob.bin")})).contains("binary"));
    assert!(err(data, "agent-1", "artifact_open", json!({"path": proj.join("pic.png"), "view": "diff"}))
        .contains("image diffs"));
    assert!(err(data, "agent-1", "artifact_open", json!({"path": proj.join("../data/agent-tools/endpoint.json")}))
        .contains("outside the project"));
    assert!(err(data, "agent-1", "artifact_open", json!({"path": "notes.md"})).contains("absolute"));
}

/// The page model on a page with frames, a shadow root and traps; a large page a page at a time.
#[test]
fn page_model() {
    let world = World::new();
    let _app = world.start();
    let data = &world.data;
    let other = serve();
    let port = other.trim_end_matches('/').rsplit(':').next().unwrap().to_owned();
    let url = format!("{}frames?{port}", world.page);
    let b = ok(data, "agent-1", "browser_open", json!({"url": url}))["nodeId"].as_str().unwrap().to_owned();
    // Frames load after the top document: wait until every frame's elements are listed.
    let end = Instant::now() + Duration::from_secs(15);
    let m = loop {
        let m = ok(data, "agent-1", "browser_inspect", json!({"nodeId": b}));
        let read = [
            "button Inner same",
            "button Inner origin",
            "button Inner site",
            "button Inner under",
            "button Inner under-origin",
            "button Inner under-site",
            "frame ! n1",
        ]
        .iter()
        .all(|e| element_ref(&m, e).is_some());
        if read {
            break m;
        }
        assert!(Instant::now() < end, "not every frame was read: {m:#}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let elements = m["elements"].as_str().unwrap();
    eprintln!("page model:\n{elements}");
    for e in ["button Remove", "button Soon gone", "button Covered one", "button Forged", "button Shadow button"] {
        assert!(element_ref(&m, e).is_some(), "{e} in {m}");
    }
    assert!(
        !elements.contains("Hidden one") && !elements.contains("d1"),
        "hidden and off-page elements are not listed: {m}"
    );
    assert!(m["offscreen"].as_str().unwrap().starts_with("3 elements outside the page"), "{m}");
    assert!(m["offscreen"].as_str().unwrap().contains("navigation Drawer 3"), "{m}");
    assert!(m.get("more").is_none(), "a small page comes whole: {m}");
    // A frame nested deeper than inspect follows is named, with why and how to read it.
    let unread = m["unreadFrames"].as_array().unwrap_or_else(|| panic!("no unreadFrames in {m}"));
    assert_eq!(unread.len(), 1, "{m}");
    assert!(unread[0].as_str().unwrap().starts_with("! n1 (not read: nested more than 4 frames deep"), "{m}");
    assert!(element_ref(&m, "button Inner deep").is_none(), "{m}");
    let n1 = element_ref(&m, "frame ! n1").unwrap();
    let deep = ok(data, "agent-1", "browser_inspect", json!({"nodeId": b, "within": n1}));
    assert!(element_ref(&deep, "button Inner deep").is_some(), "within reads it: {deep}");
    // The forged attribute names nothing: refs are app-side, and inspect wrote no attribute.
    let forged = element_ref(&m, "button Forged").unwrap();
    assert_ne!(forged, "e1");
    ok(data, "agent-1", "browser_click", json!({"nodeId": b, "ref": forged}));
    eventually(10, "the forged button's click", || {
        (ok(data, "agent-1", "browser_inspect", json!({"nodeId": b}))["title"] == "refs:1").then_some(())
    });
    // Click and type in the shadow root and in every frame.
    ok(data, "agent-1", "browser_click", json!({"nodeId": b, "ref": element_ref(&m, "button Shadow button").unwrap()}));
    for q in ["same", "origin", "site"] {
        let button = element_ref(&m, &format!("button Inner {q}")).unwrap();
        ok(data, "agent-1", "browser_click", json!({"nodeId": b, "ref": button}));
        let field = element_ref(&m, &format!("textbox Field {q}")).unwrap();
        ok(data, "agent-1", "browser_type", json!({"nodeId": b, "ref": field, "text": format!("hi {q}")}));
    }
    // In a frame under an overlay of the page around it (same origin, another origin,
    // another site): covered, so neither the click nor the typing happens (checked
    // below, once the other frames' clicks show).
    for q in ["under", "under-origin", "under-site"] {
        let button = element_ref(&m, &format!("button Inner {q}")).unwrap_or_else(|| panic!("{q} in {m}"));
        let e = err(data, "agent-1", "browser_click", json!({"nodeId": b, "ref": button}));
        assert!(
            e.contains("covered by div.veil of the page around its frame") && e.contains("nothing was done"),
            "{q}: {e}"
        );
        let field = element_ref(&m, &format!("textbox Field {q}")).unwrap();
        let e = err(data, "agent-1", "browser_type", json!({"nodeId": b, "ref": field, "text": "x"}));
        assert!(e.contains("covered by div.veil of the page around its frame"), "{q}: {e}");
    }
    let after = eventually(10, "clicks and typing in the frames", || {
        let m = ok(data, "agent-1", "browser_inspect", json!({"nodeId": b}));
        let done = element_ref(&m, "button shadow clicked").is_some()
            && ["same", "origin", "site"].iter().all(|q| {
                element_ref(&m, &format!("button clicked {q}")).is_some()
                    && element_ref(&m, &format!("textbox Field {q} =hi {q}")).is_some()
            });
        done.then_some(m)
    });
    assert_eq!(element_ref(&after, "button Forged"), Some(forged), "refs are stable across calls");
    let listed = after["elements"].as_str().unwrap();
    for q in ["under", "under-origin", "under-site"] {
        assert!(
            element_ref(&after, &format!("button Inner {q}")).is_some() && !listed.contains(&format!("clicked {q}")),
            "the covered button's handler never ran: {after}"
        );
        assert!(!listed.contains(&format!("Field {q} =")), "nothing was typed into the covered field: {after}");
    }
    // Hidden, covered and gone elements fail clearly, and nothing is clicked.
    let e = err(data, "agent-1", "browser_click", json!({"nodeId": b, "selector": "#hid"}));
    assert!(e.contains("not visible"), "{e}");
    let e = err(data, "agent-1", "browser_type", json!({"nodeId": b, "selector": "#hid", "text": "x"}));
    assert!(e.contains("not visible") && e.contains("nothing was done"), "{e}");
    let e = err(
        data,
        "agent-1",
        "browser_type",
        json!({"nodeId": b, "ref": element_ref(&m, "button Covered one").unwrap(), "text": "x"}),
    );
    assert!(e.contains("covered by div"), "{e}");
    let e = err(
        data,
        "agent-1",
        "browser_click",
        json!({"nodeId": b, "ref": element_ref(&m, "button Covered one").unwrap()}),
    );
    assert!(e.contains("covered by div"), "{e}");
    let gone = element_ref(&m, "button Soon gone").unwrap();
    ok(data, "agent-1", "browser_click", json!({"nodeId": b, "ref": element_ref(&m, "button Remove").unwrap()}));
    eventually(10, "the removal", || {
        element_ref(&ok(data, "agent-1", "browser_inspect", json!({"nodeId": b})), "button Soon gone")
            .is_none()
            .then_some(())
    });
    let e = err(data, "agent-1", "browser_click", json!({"nodeId": b, "ref": gone}));
    assert!(e.contains("it was removed or the page changed"), "{e}");
    let e = err(data, "agent-1", "browser_type", json!({"nodeId": b, "ref": gone, "text": "x"}));
    assert!(e.contains("it was removed or the page changed"), "{e}");

    // A large page: 150 elements, then the rest a page at a time; nothing dropped.
    ok(data, "agent-1", "browser_navigate", json!({"nodeId": b, "url": format!("{}many", world.page)}));
    let first = ok(data, "agent-1", "browser_inspect", json!({"nodeId": b}));
    assert!(first["more"].as_str().unwrap().starts_with("elements 1-150 of 400; next: page 2 of 3"), "{first}");
    let mut seen = std::collections::BTreeSet::new();
    for page in 1..=3 {
        let m = ok(data, "agent-1", "browser_inspect", json!({"nodeId": b, "page": page}));
        for line in m["elements"].as_str().unwrap().lines() {
            assert!(seen.insert(line.to_owned()), "listed twice: {line}");
        }
    }
    assert_eq!(seen.len(), 400);
    assert!(seen.iter().any(|l| l.ends_with(" link link 399 → l399")), "hrefs are relative");
    let e = err(data, "agent-1", "browser_inspect", json!({"nodeId": b, "page": 4}));
    assert!(e.contains("past the last page (3)"), "{e}");
}

#[test]
fn browser() {
    let world = World::new();
    let _app = world.start();
    let (data, page) = (&world.data, world.page.as_str());
    // A node that is not an agent, to transfer the browser to.
    let sticky = world.sticky("plan: test everything");
    let opened = ok(data, "agent-1", "browser_open", json!({"url": page}));
    let browser = opened["nodeId"].as_str().unwrap().to_owned();
    assert_eq!((opened["title"].as_str(), opened["loaded"].as_bool()), (Some("tools page"), Some(true)), "{opened}");
    let browsers = ok(data, "agent-1", "browser_list", json!({}));
    assert_eq!(browsers[0]["owner"], "agent-1");
    let model = ok(data, "agent-1", "browser_inspect", json!({"nodeId": browser}));
    let bref = element_ref(&model, "button Press me").unwrap_or_else(|| panic!("no button in {model}"));
    let iref = element_ref(&model, "textbox Your name").unwrap_or_else(|| panic!("no input in {model}"));
    assert!(model["text"].as_str().unwrap().contains("no clicks"));
    // Refs are stable across calls.
    let again = ok(data, "agent-1", "browser_inspect", json!({"nodeId": browser}));
    assert_eq!(element_ref(&again, "button Press me").as_ref(), Some(&bref), "{again}");
    ok(data, "agent-1", "browser_click", json!({"nodeId": browser, "ref": bref}));
    eventually(10, "the click to change the page", || {
        let m = ok(data, "agent-1", "browser_inspect", json!({"nodeId": browser}));
        (m["title"] == "clicked 1" && m["text"].as_str().unwrap().contains("clicks: 1")).then_some(())
    });
    ok(data, "agent-1", "browser_click", json!({"nodeId": browser, "selector": "#b"}));
    eventually(10, "the second click", || {
        (ok(data, "agent-1", "browser_inspect", json!({"nodeId": browser}))["title"] == "clicked 2").then_some(())
    });
    ok(data, "agent-1", "browser_type", json!({"nodeId": browser, "ref": iref, "text": "typed-text"}));
    let m = eventually(10, "typed text", || {
        let m = ok(data, "agent-1", "browser_inspect", json!({"nodeId": browser, "selector": "body"}));
        m["text"].as_str().unwrap().contains("echo:typed-text").then_some(m)
    });
    assert!(
        m["text"].as_str().unwrap().contains("keydowns:10"),
        "browser_type sends a real key press per character: {m}"
    );
    assert!(element_ref(&m, "textbox Your name =typed-text").as_ref() == Some(&iref), "{m}");
    assert!(err(data, "agent-1", "browser_click", json!({"nodeId": browser, "ref": "e9999"}))
        .contains("no element with ref"));
    let shot = ok(data, "agent-1", "browser_screenshot", json!({"nodeId": browser}));
    let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap()).unwrap();
    let decoded = png::Decoder::new(std::io::Cursor::new(&png)).read_info().unwrap();
    let (w, h) = (decoded.info().width, decoded.info().height);
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64(), shot["mimeType"].as_str()),
        (Some(w as u64), Some(h as u64), Some("image/png"))
    );
    let bnode = node(&ok(data, "agent-1", "canvas_list", json!({})), &browser).cloned().unwrap();
    // The page's view fills the node's body (frame and title bar excluded).
    let title_bar = f64::from(canvas_render::Theme::default().title_height);
    assert_eq!(
        (w as f64, h as f64),
        (bnode["width"].as_f64().unwrap() - 2.0, bnode["height"].as_f64().unwrap() - title_bar - 1.0)
    );
    let saved = PathBuf::from(shot["path"].as_str().unwrap());
    assert!(saved.starts_with(data.join("screenshots")));
    assert_eq!(std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777, 0o600, "screenshots are private");
    assert_eq!(std::fs::metadata(data.join("screenshots")).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::read(&saved).unwrap(), png);
    let with_shot =
        ok(data, "agent-1", "browser_inspect", json!({"nodeId": browser, "screenshot": true, "maxChars": 5}));
    assert_eq!(with_shot["screenshot"]["mimeType"], "image/png");
    assert_eq!(with_shot["text"].as_str().unwrap().chars().count(), 5);
    let nav = ok(data, "agent-1", "browser_navigate", json!({"nodeId": browser, "url": format!("{page}second")}));
    assert_eq!((nav["title"].as_str(), nav["loaded"].as_bool()), (Some("second"), Some(true)), "{nav}");
    assert!(err(data, "agent-1", "browser_navigate", json!({"nodeId": browser, "url": "javascript:alert(1)"}))
        .to_lowercase()
        .contains("javascript"));
    // Ownership: agent-2 may neither drive nor take agent-1's browser.
    assert!(err(data, "agent-2", "browser_navigate", json!({"nodeId": browser, "url": page}))
        .contains("owned by agent agent-1"));
    assert!(err(data, "agent-2", "browser_claim", json!({"nodeId": browser})).contains("owned by agent agent-1"));
    assert!(err(data, "agent-2", "browser_inspect", json!({"nodeId": browser})).contains("owned by agent agent-1"));
    assert!(err(data, "agent-1", "browser_transfer", json!({"nodeId": browser, "agentNodeId": sticky}))
        .contains("not an agent node"));
    assert_eq!(
        ok(data, "agent-1", "browser_transfer", json!({"nodeId": browser, "agentNodeId": "agent-2"}))["owner"],
        "agent-2"
    );
    assert!(err(data, "agent-1", "browser_type", json!({"nodeId": browser, "text": "x"}))
        .contains("owned by agent agent-2"));
    assert_eq!(
        ok(data, "agent-2", "browser_claim", json!({"nodeId": browser}))["owner"],
        "agent-2",
        "claiming one's own browser succeeds"
    );
    let owners: Value =
        serde_json::from_slice(&std::fs::read(data.join("agent-tools/browser-owners.json")).unwrap()).unwrap();
    assert_eq!(owners[&browser], "agent-2");
    let back = ok(data, "agent-2", "browser_navigate", json!({"nodeId": browser, "url": page}));
    assert_eq!(back["title"], "tools page");
}

#[test]
fn terminals() {
    let w = World::new();
    let _app = w.start();
    let (root, data, proj) = (&w.root, &w.data, &w.proj);
    // A node that is not a terminal, for terminal_close to refuse.
    let sticky = w.sticky("plan: test everything");
    let term = ok(data, "agent-1", "terminal_open", json!({"title": "t1"}))["nodeId"].as_str().unwrap().to_owned();
    ok(data, "agent-1", "terminal_submit", json!({"nodeId": term, "text": "echo hello-$((6*7))"}));
    eventually(15, "hello-42", || read_terminal(data, &term).contains("hello-42").then_some(()));
    ok(data, "agent-1", "terminal_submit", json!({"nodeId": term, "text": "sleep 100"}));
    std::thread::sleep(Duration::from_millis(300));
    ok(data, "agent-1", "terminal_interrupt", json!({"nodeId": term}));
    ok(data, "agent-1", "terminal_submit", json!({"nodeId": term, "text": "echo after-$((1+1))"}));
    // Only reachable once `sleep 100` was interrupted.
    eventually(15, "the shell after Ctrl+C", || read_terminal(data, &term).contains("after-2").then_some(()));
    ok(data, "agent-1", "terminal_input", json!({"nodeId": term, "text": "echo raw-$((2+3))\r"}));
    eventually(15, "raw input", || read_terminal(data, &term).contains("raw-5").then_some(()));
    let tail = ok(data, "agent-1", "terminal_read", json!({"nodeId": term, "maxChars": 10}))["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(tail.chars().count() <= 10, "{tail:?}");
    let cmd = ok(data, "agent-1", "terminal_open", json!({"command": "echo opened-$((8*8))", "title": "t2"}))["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    eventually(15, "command of terminal_open", || read_terminal(data, &cmd).contains("opened-64").then_some(()));
    let ext = ok(data, "agent-1", "terminal_external", json!({"command": "echo ext-$((3+4)); sleep 60"}));
    assert_eq!(
        (ext["where"].as_str(), ext["reason"].as_str()),
        (Some("canvas"), Some("there is no display to open a desktop terminal on")),
        "{ext}"
    );
    let ext = ext["nodeId"].as_str().unwrap().to_owned();
    eventually(15, "terminal_external output", || read_terminal(data, &ext).contains("ext-7").then_some(()));
    // With a desktop terminal in preferences.json the command runs there, in the project folder.
    let fake_term = root.join("bin/fake-term");
    write_exe(
        &fake_term,
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {args}\nshift\necho | \"$@\" > {screen} 2>&1\n",
            args = root.join("term-args.txt").display(),
            screen = root.join("term-screen.txt").display()
        ),
    );
    let prefs = data.join("agent-tools/preferences.json");
    std::fs::write(&prefs, r#"{"externalTerminal": {"executable": "fake-term", "args": ["-e"]}}"#).unwrap();
    let launched = ok(
        data,
        "agent-1",
        "terminal_external",
        json!({"command": "echo login-$((5*5)) in $PWD", "title": "gh auth login"}),
    );
    assert_eq!(launched["where"], "external", "{launched}");
    assert_eq!(launched["terminal"].as_str(), Some(fake_term.to_str().unwrap()));
    let screen = eventually(15, "the external terminal's output", || {
        std::fs::read_to_string(root.join("term-screen.txt")).ok().filter(|s| s.contains("press Enter"))
    });
    assert!(screen.contains(&format!("login-25 in {}", proj.display())), "{screen:?}");
    assert!(screen.contains("[gh auth login exited with status 0; press Enter to close]"), "{screen:?}");
    std::fs::write(&prefs, r#"{"externalTerminal": {"executable": "no-such-terminal"}}"#).unwrap();
    let e = err(data, "agent-1", "terminal_external", json!({"command": "true"}));
    assert!(e.contains("\"no-such-terminal\", was not found"), "{e}");
    std::fs::remove_file(&prefs).unwrap();
    assert!(err(data, "agent-1", "terminal_close", json!({"nodeId": sticky})).contains("terminal nodes only"));
    ok(data, "agent-1", "terminal_close", json!({"nodeId": term}));
    assert!(node(&ok(data, "agent-1", "canvas_list", json!({})), &term).is_none());
    assert!(err(data, "agent-1", "terminal_read", json!({"nodeId": term})).contains("no node"));
}

/// The tty of node `id`'s pane on the app's private tmux socket.
fn pane_tty(data: &Path, id: &str) -> String {
    let prefix: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(40).collect();
    let out = Command::new("tmux")
        .arg("-S")
        .arg(data.join("tmux/termsprawl.sock"))
        .args(["list-panes", "-a", "-F", "#{session_name} #{pane_tty}"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text.lines().find(|l| l.starts_with(&format!("ts-{prefix}-"))).unwrap_or_else(|| panic!("{id}: {text}"));
    line.rsplit(' ').next().unwrap().to_owned()
}

/// Launches the stand-in claude as agent-1 would and waits until it has used
/// its tools (its sticky is on the canvas); the claude's node id.
fn launch_claude(w: &World) -> String {
    let launched = w.ok("agent_launch", json!({"agent": "claude", "title": "helper", "text": "do the thing"}));
    let claude = launched["nodeId"].as_str().unwrap().to_owned();
    eventually(20, "the launched agent's sticky", || {
        let list = w.ok("canvas_list", json!({}));
        list.as_array().unwrap().iter().any(|n| n["text"] == "hello from claude").then_some(())
    });
    claude
}

/// Writes a Claude Code transcript for the project (its layout under HOME)
/// whose one assistant line says "parser finished".
fn write_claude_transcript(w: &World) {
    let escaped: String =
        w.proj.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let tdir = w.root.join("home/.claude/projects").join(escaped);
    std::fs::create_dir_all(&tdir).unwrap();
    std::fs::write(tdir.join("s.jsonl"), format!("{}\n", json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "parser finished"}]}}))).unwrap();
}

#[test]
fn agents_and_context() {
    let w = World::new();
    let _app = w.start();
    let data = &w.data;
    let e = err(data, "agent-1", "agent_launch", json!({"agent": "gemini"}));
    assert!(e.contains("needs setup") && e.contains("gemini"), "{e}");
    let e = err(data, "agent-1", "agent_launch", json!({"agent": "codex"}));
    assert!(e.contains("needs setup: codex is not logged in") && e.contains("`codex login`"), "{e}");
    let claude = launch_claude(&w);
    let args = std::fs::read_to_string(data.join("claude-args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(args[0], "--mcp-config");
    assert!(args[1].ends_with(&format!("agent-tools/launch/{claude}/mcp.json")), "{args:?}");
    assert_eq!(args.last(), Some(&"do the thing"));
    let env = std::fs::read_to_string(data.join("claude-env.txt")).unwrap();
    assert!(env.contains(&format!("TERMSPRAWL_NODE_ID={claude}")), "{env}");
    assert!(env.contains("TERMSPRAWL_PROJECT_ID=") && env.contains("TERMSPRAWL_CTL=/"), "{env}");
    let session: Value =
        serde_json::from_slice(&std::fs::read(data.join(format!("agent-tools/sessions/{claude}.json"))).unwrap())
            .unwrap();
    let token = session["token"].as_str().unwrap();
    assert!(
        !env.contains(token) && !args.iter().any(|a| a.contains(token)),
        "token leaked into the agent's env or argv"
    );
    let status = ok(data, "agent-1", "agent_status", json!({"nodeId": claude}));
    assert_eq!(status["agents"][0]["status"]["state"], "ready");
    // The signal the claude printed inside its tmux session reached the app.
    let status = eventually(20, "the claude's OSC 133 report", || {
        let s = ok(data, "agent-1", "agent_status", json!({"nodeId": claude}));
        (s["agents"][0]["source"] == "terminal").then_some(s)
    });
    let entry = &status["agents"][0];
    assert_eq!((entry["state"].as_str(), entry["detail"].as_str()), (Some("error"), Some("exit 3")), "{status}");
    // context_read: the launched claude's transcript (Claude Code's layout under HOME).
    write_claude_transcript(&w);
    // Only the user links nodes, and nothing is linked to agent-1: the claude's
    // transcript is not readable to it (linking is covered by the runtime's tests
    // and the window test).
    let ctx = ok(data, "agent-1", "context_read", json!({}));
    assert_eq!(
        (ctx["reader"].as_str(), &ctx["peers"], ctx["text"].as_str()),
        (Some("claude-jsonl"), &json!([]), Some("")),
        "{ctx}"
    );
    assert!(ctx["note"].as_str().unwrap().contains("only the user links nodes"), "{ctx}");
}

#[test]
fn browser_control_off() {
    let w = World::new();
    // A second instance without browser control refuses browser operations.
    let off_data = w.root.join("data-off");
    let off_root = w.root.join("off");
    std::fs::create_dir_all(off_root.join("bin")).unwrap();
    let off = App::start(&off_root, &off_data, &["--agent", "agent-x"]);
    assert_eq!(ok(&off_data, "agent-x", "session_info", json!({}))["browserControl"], false);
    assert!(err(&off_data, "agent-x", "browser_open", json!({"url": w.page})).contains("Enable agent browser control"));
    assert!(err(&off_data, "agent-x", "browser_list", json!({})).contains("Enable agent browser control"));
    assert!(off.terminate().success());
}

#[test]
fn sigterm_and_restarts() {
    let w = World::new();
    let app = w.start();
    let (data, proj) = (&w.data, &w.proj);
    // The state the restarts must keep: agent-1's token, a moved sticky, a
    // launched claude with a transcript.
    let token_before = std::fs::read_to_string(data.join("agent-tools/sessions/agent-1.json")).unwrap();
    let sticky = w.sticky("plan: test everything");
    w.ok("canvas_move", json!({"nodeId": sticky, "x": 1234, "y": -567}));
    let claude = launch_claude(&w);
    write_claude_transcript(&w);

    // SIGTERM: a clean exit that removes the endpoint file.
    let status = app.terminate();
    assert!(status.success(), "{status:?}");
    assert!(!data.join("agent-tools/endpoint.json").exists());
    assert!(ctl(data, "agent-1", "session_info", json!({})).is_err());

    // The user links agent-1 to the claude (here in the saved layout, as the
    // palette's Link would have saved it).
    let layout_path = proj.join(".termsprawl/canvas.json");
    let mut layout: Value = serde_json::from_slice(&std::fs::read(&layout_path).unwrap()).unwrap();
    for n in layout["nodes"].as_array_mut().unwrap() {
        let peer = match n["id"].as_str().unwrap() {
            "agent-1" => claude.clone(),
            id if id == claude => "agent-1".to_owned(),
            _ => continue,
        };
        n["links"] = json!([peer]);
    }
    std::fs::write(&layout_path, serde_json::to_vec_pretty(&layout).unwrap()).unwrap();
    // The claude's tmux session lives on, but its credentials are gone: at the
    // restart it is warm and predates them, so it needs a fresh launch.
    std::fs::remove_file(data.join(format!("agent-tools/sessions/{claude}.json"))).unwrap();

    // A restart without the flag keeps the token, the setting and the canvas.
    let app = App::start(&w.root, data, &["--agent", "agent-1"]);
    let ctx = ok(data, "agent-1", "context_read", json!({}));
    assert_eq!(ctx["peers"], json!([claude]), "{ctx}");
    assert!(
        ctx["text"].as_str().unwrap().contains("assistant: parser finished"),
        "the linked claude's transcript: {ctx}"
    );
    assert_eq!(node(&ok(data, "agent-1", "canvas_list", json!({})), "agent-1").unwrap()["links"], json!([claude]));
    let status = eventually(20, "the warm claude's status", || {
        // Until the node's terminal is back, the session does not exist yet.
        let s = ctl(data, "agent-1", "agent_status", json!({"nodeId": claude})).ok()?;
        (s["agents"][0]["status"]["state"] == "needs-setup").then_some(s)
    });
    assert!(status["agents"][0]["status"]["detail"].as_str().unwrap().contains("launch a fresh one"), "{status}");
    // Re-attached, its pane's output still reaches the app's signal pass: an
    // OSC 133;D written to the pane's tty (as its program would) is its state.
    let tty = pane_tty(data, &claude);
    std::fs::OpenOptions::new().write(true).open(&tty).unwrap().write_all(b"\x1b]133;D;5\x07").unwrap();
    eventually(20, "the re-attached claude's OSC 133 report", || {
        let s = ctl(data, "agent-1", "agent_status", json!({"nodeId": claude})).ok()?;
        (s["agents"][0]["source"] == "terminal" && s["agents"][0]["detail"] == "exit 5").then_some(())
    });
    // The file written to report it is not credentials: a further restart says the same.
    assert!(app.terminate().success());
    let app = App::start(&w.root, data, &["--agent", "agent-1"]);
    eventually(20, "the warm claude still needing setup", || {
        let s = ctl(data, "agent-1", "agent_status", json!({"nodeId": claude})).ok()?;
        (s["agents"][0]["status"]["state"] == "needs-setup").then_some(())
    });
    assert_eq!(std::fs::read_to_string(data.join("agent-tools/sessions/agent-1.json")).unwrap(), token_before);
    let info = ok(data, "agent-1", "session_info", json!({}));
    assert_eq!(info["browserControl"], true);
    let list = ok(data, "agent-1", "canvas_list", json!({}));
    assert_eq!(node(&list, &sticky).unwrap()["x"], 1234.0);
    assert!(node(&list, "agent-2").is_some());
    let status = app.terminate();
    assert!(status.success(), "{status:?}");
}
