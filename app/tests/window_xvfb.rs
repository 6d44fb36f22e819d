//! The window path end to end under Xvfb: the real binary opens a window on a
//! private X display, restores a saved canvas whose browser node shows a page
//! served here, and the X root window is screenshotted (ImageMagick `import`)
//! and compared; then, with the canvas panned and zoomed from the saved
//! camera, a real X click (xdotool) over a page button must reach that button
//! (the page retitles itself, which autosave writes into the layout file).
//! Deleting an agent node by hand revokes its tool session and releases the
//! browsers it owned.
//!
//! Needs Xvfb, xdotool and imagemagick (`./dev setup` installs them).

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use termsprawl::model::persist::{save_layout, save_workspace};
use termsprawl::model::{Camera, Node, NodeId, NodeKind, Project, ProjectId, Rect, Workspace};

/// Window size the app opens with (its default); the Xvfb screen is the same.
const SCREEN: (u32, u32) = (1280, 800);
/// Title bar height of the renderer's theme, in world units.
const TITLE: f64 = 30.0;
/// The page's background: a colour nothing else on the canvas has.
const PAGE_RGB: [u8; 3] = [0xe0, 0x20, 0xc0];
/// The canvas background of the default theme.
const CANVAS_RGB: [u8; 3] = [0x14, 0x16, 0x1b];

/// Serialises the tests: each runs Chromium and a software GPU on few cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn need(tool: &str) {
    let found = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
    assert!(found, "`{tool}` is not installed: run ./dev setup (apt: xvfb xdotool imagemagick)");
}

/// A private Xvfb display, killed on drop.
struct Display {
    number: u32,
    xvfb: Child,
}

impl Display {
    fn start() -> Display {
        Self::start_sized(SCREEN)
    }

    fn start_sized(size: (u32, u32)) -> Display {
        need("Xvfb");
        need("xdotool");
        need("import");
        let seed = std::process::id()
            ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        for attempt in 0..50 {
            let number = 97 + (seed.wrapping_add(attempt * 7919)) % 400;
            if Path::new(&format!("/tmp/.X{number}-lock")).exists()
                || Path::new(&format!("/tmp/.X11-unix/X{number}")).exists()
            {
                continue;
            }
            let screen = format!("{}x{}x24", size.0, size.1);
            let mut xvfb = Command::new("Xvfb")
                .args([format!(":{number}"), "-screen".into(), "0".into(), screen, "-nolisten".into(), "tcp".into()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start Xvfb");
            let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
            let end = Instant::now() + Duration::from_secs(20);
            while Instant::now() < end {
                if let Ok(Some(_)) = xvfb.try_wait() {
                    break; // lost a race for this display number: try another
                }
                if socket.exists() {
                    return Display { number, xvfb };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = xvfb.kill();
            let _ = xvfb.wait();
        }
        panic!("could not start Xvfb on any free display");
    }

    fn name(&self) -> String {
        format!(":{}", self.number)
    }

    /// The root window as RGB rows.
    fn screenshot(&self) -> Option<Screenshot> {
        let out = Command::new("import")
            .args(["-window", "root", "-depth", "8", "png24:-"])
            .env("DISPLAY", self.name())
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!("import failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        let mut decoder = png::Decoder::new(std::io::Cursor::new(out.stdout));
        // ImageMagick writes few-colour screens as palette or grey PNGs: expand to RGB(A).
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().ok()?;
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).ok()?;
        let channels = match info.color_type {
            png::ColorType::Rgb => 3,
            png::ColorType::Rgba => 4,
            other => {
                eprintln!("unexpected screenshot colour type {other:?}");
                return None;
            }
        };
        Some(Screenshot { width: info.width, height: info.height, channels, data: buf[..info.buffer_size()].to_vec() })
    }

    fn xdotool(&self, args: &[&str]) {
        let status = Command::new("xdotool").args(args).env("DISPLAY", self.name()).status().expect("run xdotool");
        assert!(status.success(), "xdotool {args:?} failed");
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        // SIGTERM lets Xvfb remove its lock file and socket.
        let _ = Command::new("kill").arg("-TERM").arg(self.xvfb.id().to_string()).status();
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.xvfb.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}

struct Screenshot {
    width: u32,
    height: u32,
    channels: usize,
    data: Vec<u8>,
}

impl Screenshot {
    fn rgb(&self, x: u32, y: u32) -> [u8; 3] {
        let i = (y as usize * self.width as usize + x as usize) * self.channels;
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }

    /// Fraction of pixels in the rectangle within `tol` of `rgb` on every channel.
    fn share(&self, (x0, y0, x1, y1): (u32, u32, u32, u32), rgb: [u8; 3], tol: u8) -> f64 {
        let (mut hit, mut all) = (0u64, 0u64);
        for y in y0..y1.min(self.height) {
            for x in x0..x1.min(self.width) {
                let p = self.rgb(x, y);
                all += 1;
                if p.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) <= tol) {
                    hit += 1;
                }
            }
        }
        if all == 0 {
            0.0
        } else {
            hit as f64 / all as f64
        }
    }
}

/// The app in a window on `display`, stopped with SIGTERM (SIGKILL as a last resort) on drop.
struct App {
    child: Child,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl App {
    fn start(display: &Display, data: &Path, project: &Path, runtime_dir: &Path) -> App {
        Self::start_with_env(display, data, project, runtime_dir, &[])
    }

    fn start_with_env(
        display: &Display,
        data: &Path,
        project: &Path,
        runtime_dir: &Path,
        env: &[(&str, &Path)],
    ) -> App {
        Self::start_with_args(display, data, project, runtime_dir, env, &[])
    }

    fn start_with_args(
        display: &Display,
        data: &Path,
        project: &Path,
        runtime_dir: &Path,
        env: &[(&str, &Path)],
        args: &[&str],
    ) -> App {
        let mut child = Command::new(env!("CARGO_BIN_EXE_termsprawl"))
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .args(args)
            .arg("--data-dir")
            .arg(data)
            .arg("--project")
            .arg(project)
            .env("DISPLAY", display.name())
            .env("XDG_RUNTIME_DIR", runtime_dir)
            // Every presented frame is logged at debug level on this target.
            .env("RUST_LOG", "termsprawl=info,termsprawl::frames=debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start termsprawl");
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        for stream in [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let log = log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if let Ok(mut l) = log.lock() {
                        l.push(line);
                    }
                }
            });
        }
        App { child, log }
    }

    fn log_tail(&self) -> String {
        let l = self.log.lock().map(|l| l.clone()).unwrap_or_default();
        let kept: Vec<&String> = l.iter().filter(|s| !s.contains("bus.cc") && !s.contains("object_proxy")).collect();
        kept[kept.len().saturating_sub(25)..].iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    }

    /// Frames the window has presented so far.
    fn frames(&self) -> usize {
        self.log.lock().map(|l| l.iter().filter(|s| s.contains("termsprawl::frames")).count()).unwrap_or(0)
    }

    fn still_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A data dir and a project folder whose saved layout holds one browser node at `url`.
fn fixture(url: &str, rect: Rect, camera: Camera) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    fixture_with(|_| NodeKind::browser(url).unwrap(), rect, camera)
}

/// A data dir and a project folder whose saved layout holds one node of the kind `kind(folder)` makes.
fn fixture_with(
    kind: impl FnOnce(&Path) -> NodeKind,
    rect: Rect,
    camera: Camera,
) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let folder = dir.path().join("project");
    let runtime = dir.path().join("xdg");
    for d in [&data, &folder, &runtime] {
        std::fs::create_dir_all(d).expect("create dir");
    }
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("chmod runtime dir");
    let node = Node {
        id: NodeId::new("page").unwrap(),
        kind: kind(&folder),
        title: "page".into(),
        rect,
        z: 1,
        colour: None,
        links: Default::default(),
    };
    let (project, _) =
        Project::from_nodes(ProjectId::new("proj").unwrap(), "project", &folder, camera, vec![node], 2).unwrap();
    save_layout(&project, None).expect("save layout");
    let ws = Workspace::from_projects(vec![project], Some(ProjectId::new("proj").unwrap())).unwrap();
    save_workspace(&data, &ws, None).expect("save workspace");
    (dir, data, folder, runtime)
}

/// The screen rectangle of a node's body under a camera (x0, y0, x1, y1).
fn body_on_screen(rect: Rect, cam: Camera) -> (f64, f64, f64, f64) {
    let (bx, by, bw, bh) = (rect.x + 1.0, rect.y + TITLE, rect.w - 2.0, rect.h - TITLE - 1.0);
    let x0 = (bx - cam.x) * cam.zoom;
    let y0 = (by - cam.y) * cam.zoom;
    (x0, y0, x0 + bw * cam.zoom, y0 + bh * cam.zoom)
}

/// Screenshots until `ok` holds or `timeout` passes; returns the last screenshot.
fn wait_for_screen(
    display: &Display,
    app: &mut App,
    timeout: Duration,
    ok: impl Fn(&Screenshot) -> bool,
) -> Screenshot {
    let end = Instant::now() + timeout;
    loop {
        assert!(app.still_running(), "the app exited early:\n{}", app.log_tail());
        let shot = display.screenshot();
        if let Some(s) = &shot {
            if ok(s) {
                return shot.unwrap_or_else(|| unreachable!());
            }
        }
        if Instant::now() >= end {
            return shot.unwrap_or_else(|| panic!("no screenshot of the X display could be taken"));
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn save_failure(shot: &Screenshot, name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("termsprawl-{name}-{}.png", std::process::id()));
    if let Ok(f) = std::fs::File::create(&path) {
        let mut enc = png::Encoder::new(std::io::BufWriter::new(f), shot.width, shot.height);
        enc.set_color(if shot.channels == 4 { png::ColorType::Rgba } else { png::ColorType::Rgb });
        enc.set_depth(png::BitDepth::Eight);
        if let Ok(mut w) = enc.write_header() {
            let _ = w.write_image_data(&shot.data);
        }
    }
    path
}

#[test]
fn window_shows_the_restored_browser_page_on_the_canvas() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let page = "<html><head><title>magenta</title></head><body style='margin:0;background:#e020c0'></body></html>";
    let url = support::serve_page(page);
    let rect = Rect::new(100.0, 80.0, 640.0, 420.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (_dir, data, folder, runtime) = fixture(&url, rect, camera);
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    // The inner part of the body (away from rounded corners and edges).
    let inner = ((x0 + 12.0) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| s.share(inner, PAGE_RGB, 6) > 0.98);
    let page_share = shot.share(inner, PAGE_RGB, 6);
    let saved = if page_share > 0.98 { None } else { Some(save_failure(&shot, "window-page")) };
    assert!(
        page_share > 0.98,
        "the page's colour covers only {:.1} % of the node body (screenshot: {saved:?})\n{}",
        page_share * 100.0,
        app.log_tail()
    );
    // Outside the node: the canvas, not the page (the view is composited where the node is, nowhere else).
    let right_of_node = ((x1 + 60.0) as u32, 100, SCREEN.0 - 20, SCREEN.1 - 100);
    assert!(shot.share(right_of_node, PAGE_RGB, 6) < 0.001, "page pixels outside the node");
    assert!(shot.share(right_of_node, CANVAS_RGB, 12) > 0.8, "the canvas background is not where it should be");
    // The title bar above the body is chrome, not page.
    let title_bar = ((x0 + 40.0) as u32, (y0 - 20.0) as u32, (x1 - 40.0) as u32, (y0 - 8.0) as u32);
    assert!(shot.share(title_bar, PAGE_RGB, 6) < 0.01, "the title bar is covered by the page");
    // Damage-driven: with a static page and no input the window stops presenting frames.
    // (A loop that rendered every turn would never have a quiet stretch.)
    let quiet = Duration::from_secs(3);
    let end = Instant::now() + Duration::from_secs(60);
    let (mut last, mut since) = (app.frames(), Instant::now());
    let mut went_quiet = false;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(250));
        let now = app.frames();
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= quiet {
            went_quiet = true;
            break;
        }
    }
    assert!(last > 0, "no frame was ever logged:\n{}", app.log_tail());
    assert!(went_quiet, "the idle canvas kept rendering ({last} frames so far)");
}

#[test]
fn a_click_on_the_panned_and_zoomed_canvas_reaches_the_page_button_under_it() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A button at page pixels (300..500, 200..320). A click anywhere else retitles the page with where it landed.
    let page = "<html><head><title>waiting</title></head><body style='margin:0;background:#e020c0;height:100vh'>\
        <button id='b' style='position:absolute;left:300px;top:200px;width:200px;height:120px;background:#20e040;border:0'></button>\
        <script>document.addEventListener('mousedown', e => { document.title = e.target.id === 'b' ? 'button clicked' : 'missed at ' + e.clientX + ',' + e.clientY; });</script>\
        </body></html>";
    let url = support::serve_page(page);
    let rect = Rect::new(200.0, 100.0, 800.0, 600.0);
    // Panned and at 75 %: a mapping that ignored the pan or the zoom would miss the button.
    let camera = Camera { x: 60.0, y: -40.0, zoom: 0.75 };
    let (_dir, data, folder, runtime) = fixture(&url, rect, camera);
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    let inner = ((x0 + 12.0) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| s.share(inner, PAGE_RGB, 6) > 0.5);
    assert!(
        shot.share(inner, PAGE_RGB, 6) > 0.5,
        "the page never appeared (screenshot: {:?})\n{}",
        save_failure(&shot, "window-click"),
        app.log_tail()
    );
    // The page lays out in the body's world units (CSS px) at any zoom and is
    // painted at the zoom's scale: on screen, CSS px × zoom from the body's corner.
    let (cx, cy) = (400.0, 260.0); // the button's centre in CSS pixels
    let sx = x0 + cx * camera.zoom;
    let sy = y0 + cy * camera.zoom;
    // Sanity of the setup: the green button is drawn where the click goes.
    let button_shot = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| {
        s.share((sx as u32 - 4, sy as u32 - 4, sx as u32 + 4, sy as u32 + 4), [0x20, 0xe0, 0x40], 8) > 0.9
    });
    assert!(
        button_shot.share((sx as u32 - 4, sy as u32 - 4, sx as u32 + 4, sy as u32 + 4), [0x20, 0xe0, 0x40], 8) > 0.9,
        "the button is not drawn at ({sx:.0}, {sy:.0}) (screenshot: {:?})",
        save_failure(&button_shot, "window-button")
    );
    display.xdotool(&["mousemove", &format!("{}", sx.round()), &format!("{}", sy.round())]);
    display.xdotool(&["click", "1"]);
    // The page retitles itself; the app records the title in the node and autosaves the layout.
    let layout = folder.join(".termsprawl").join("canvas.json");
    let end = Instant::now() + Duration::from_secs(30);
    let mut text = String::new();
    while Instant::now() < end {
        text = std::fs::read_to_string(&layout).unwrap_or_default();
        if text.contains("button clicked") || text.contains("missed at") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        text.contains("button clicked"),
        "the click did not reach the button; layout:\n{text}\nlog:\n{}",
        app.log_tail()
    );
    // The camera the test saved is the one the window used (nothing re-fitted it).
    let ws = std::fs::read_to_string(data.join("workspace.json")).unwrap_or_default();
    assert!(ws.contains("0.75"), "the saved camera changed: {ws}");
}

/// Ctrl+click on an OSC 8 hyperlink in a terminal node opens it in a new
/// browser node. The terminal runs without tmux (Debian's tmux 3.3 drops
/// OSC 8): the app gets a PATH holding only bash and sleep.
#[test]
fn ctrl_click_on_a_terminal_hyperlink_opens_a_browser_node() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let url = support::serve_page("<html><head><title>linked page</title></head><body>linked</body></html>");
    // Three lines of 70 linked characters, then the shell waits.
    let script = format!("for i in 1 2 3; do printf '\\e]8;;{url}\\e\\\\%s\\e]8;;\\e\\\\\\n' \"$(printf 'L%.0s' $(seq 70))\"; done; exec sleep 600");
    let rect = Rect::new(100.0, 100.0, 800.0, 400.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let kind = |folder: &Path| NodeKind::Terminal {
        cwd: folder.to_path_buf(),
        command: Some(vec!["bash".into(), "-c".into(), script.clone()]),
        tmux_session: None,
    };
    let (dir, data, folder, runtime) = fixture_with(kind, rect, camera);
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["bash", "sleep", "seq"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} not found"));
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    let display = Display::start();
    let mut app = App::start_with_env(&display, &data, &folder, &runtime, &[("PATH", bin.as_path())]);
    let (x0, y0, _, _) = body_on_screen(rect, camera);
    // Inside the linked text: 100 px in, on the second of its three lines.
    let (sx, sy) = ((x0 + 100.0).round(), (y0 + 24.0).round());
    let layout = folder.join(".termsprawl").join("canvas.json");
    let end = Instant::now() + Duration::from_secs(60);
    let mut text = String::new();
    while Instant::now() < end {
        assert!(app.still_running(), "the app exited early:\n{}", app.log_tail());
        if app.frames() > 0 {
            // No window manager gives the window the keyboard focus the Ctrl press needs.
            display.xdotool(&["search", "--onlyvisible", "--name", "termsprawl", "windowfocus"]);
            display.xdotool(&["mousemove", &sx.to_string(), &sy.to_string()]);
            display.xdotool(&["keydown", "ctrl", "click", "1", "keyup", "ctrl"]);
        }
        std::thread::sleep(Duration::from_secs(2));
        text = std::fs::read_to_string(&layout).unwrap_or_default();
        if text.contains("\"browser\"") {
            break;
        }
    }
    if !text.contains("\"browser\"") {
        let shot = display.screenshot().map(|s| save_failure(&s, "window-osc8"));
        panic!("no browser node for the link (screenshot: {shot:?}); layout:\n{text}\nlog:\n{}", app.log_tail());
    }
    assert!(text.contains(&url), "the browser node is not at the link's URL:\n{text}");
    // A plain click (no Ctrl) on the link opens nothing more.
    let browsers = text.matches("\"browser\"").count();
    display.xdotool(&["click", "1"]);
    std::thread::sleep(Duration::from_secs(3));
    let after = std::fs::read_to_string(&layout).unwrap_or_default();
    assert_eq!(after.matches("\"browser\"").count(), browsers, "a click without Ctrl opened a link");
}

#[test]
fn deleting_an_agent_node_revokes_its_session_and_releases_its_browsers() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let url = support::serve_page("<html><head><title>owned</title></head><body>owned</body></html>");
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (_dir, data, folder, runtime) =
        fixture_with(|_| NodeKind::Sticky { text: String::new() }, Rect::new(900.0, 600.0, 200.0, 120.0), camera);
    let display = Display::start();
    let mut app = App::start_with_args(
        &display,
        &data,
        &folder,
        &runtime,
        &[],
        &["--agent", "agent-9", "--agent-browser-control"],
    );
    let session = data.join("agent-tools/sessions/agent-9.json");
    support::eventually(90, "the agent's session", || session.exists().then_some(()));
    let ok = |op: &str, args: serde_json::Value| {
        support::ctl(&data, "agent-9", op, args).unwrap_or_else(|e| panic!("{op}: {e}\n{}", app.log_tail()))
    };
    let browser = ok("browser_open", serde_json::json!({"url": url}))["nodeId"].as_str().unwrap().to_owned();
    let owners = data.join("agent-tools/browser-owners.json");
    assert!(std::fs::read_to_string(&owners).unwrap().contains(&browser), "the opener owns the browser");
    // Put the agent node where a click lands on its title bar, then select and delete it by hand.
    ok("canvas_move", serde_json::json!({"nodeId": "agent-9", "x": 100, "y": 100}));
    let layout = folder.join(".termsprawl").join("canvas.json");
    let end = Instant::now() + Duration::from_secs(60);
    while session.exists() && Instant::now() < end {
        assert!(app.still_running(), "the app exited early:\n{}", app.log_tail());
        if app.frames() > 0 {
            display.xdotool(&["search", "--onlyvisible", "--name", "termsprawl", "windowfocus"]);
            display.xdotool(&["mousemove", "160", "115", "click", "1"]);
            std::thread::sleep(Duration::from_millis(300));
            display.xdotool(&["key", "Delete"]);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(!session.exists(), "the session file outlived its node; log:\n{}", app.log_tail());
    // The ctl finds no session file to read a token from any more.
    let e = support::ctl(&data, "agent-9", "session_info", serde_json::json!({})).unwrap_err();
    assert!(e.contains("no tool session for this node"), "{e}");
    support::eventually(10, "the browser released", || {
        (!std::fs::read_to_string(&owners).unwrap_or_default().contains(&browser)).then_some(())
    });
    support::eventually(10, "the layout without the agent", || {
        std::fs::read_to_string(&layout).ok().filter(|t| !t.contains("agent-9") && t.contains(&browser))
    });
}

#[test]
fn project_tabs_switch_on_click_and_ctrl_tab_and_close_on_middle_click() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let runtime = dir.path().join("xdg");
    for d in [&data, &runtime] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let mut projects = vec![];
    for (id, colour) in [("one", "#e020c0"), ("two", "#20c040")] {
        let folder = dir.path().join(id);
        std::fs::create_dir_all(&folder).unwrap();
        let mut note = Node::new(NodeKind::Sticky { text: String::new() }, id, Rect::new(100.0, 100.0, 400.0, 300.0));
        note.colour = Some(termsprawl::model::Colour::new(colour).unwrap());
        let (p, _) = Project::from_nodes(
            ProjectId::new(id).unwrap(),
            id,
            &folder,
            Camera { x: 0.0, y: 0.0, zoom: 1.0 },
            vec![note],
            1,
        )
        .unwrap();
        save_layout(&p, None).unwrap();
        projects.push(p);
    }
    let first = dir.path().join("one");
    let ws = Workspace::from_projects(projects, Some(ProjectId::new("one").unwrap())).unwrap();
    save_workspace(&data, &ws, None).unwrap();
    let display = Display::start();
    let mut app = App::start(&display, &data, &first, &runtime);
    let workspace = termsprawl::model::persist::workspace_path(&data);
    let active = || -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&workspace).ok()?).ok()?;
        v["active"].as_str().map(str::to_owned)
    };
    let open = || -> usize {
        let v: serde_json::Value =
            std::fs::read(&workspace).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        v["projects"].as_array().map_or(0, Vec::len)
    };
    support::eventually(90, "the window's first frame", || (app.frames() > 0).then_some(()));
    assert_eq!(active().as_deref(), Some("one"));
    display.xdotool(&["search", "--onlyvisible", "--name", "termsprawl", "windowfocus"]);
    // Tabs are 220 px wide from x = 6, 6 px apart, in the top 30 px: the second spans 232..452.
    display.xdotool(&["mousemove", "340", "15", "click", "1"]);
    support::eventually(20, "the second tab active", || (active().as_deref() == Some("two")).then_some(()));
    display.xdotool(&["key", "ctrl+Tab"]);
    support::eventually(20, "Ctrl+Tab back to the first", || (active().as_deref() == Some("one")).then_some(()));
    display.xdotool(&["mousemove", "340", "15", "click", "2"]);
    support::eventually(20, "the second tab closed", || (open() == 1).then_some(()));
    assert_eq!(active().as_deref(), Some("one"));
    assert!(dir.path().join("two/.termsprawl/canvas.json").exists(), "closing a tab keeps its layout");
    assert!(app.still_running(), "{}", app.log_tail());
}

#[test]
fn a_hidpi_screen_draws_the_canvas_at_its_scale() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let rect = Rect::new(100.0, 100.0, 400.0, 300.0);
    let (_dir, data, folder, runtime) = fixture_with(|_| NodeKind::Sticky { text: String::new() }, rect, camera);
    // The fixture's node gets the page colour, so its body is easy to find.
    let layout = folder.join(".termsprawl").join("canvas.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&layout).unwrap()).unwrap();
    v["nodes"][0]["colour"] = serde_json::json!("#e020c0");
    std::fs::write(&layout, serde_json::to_vec(&v).unwrap()).unwrap();
    // A 2x screen: the window's 1280×800 logical pixels are 2560×1600 on it.
    let display = Display::start_sized((2560, 1600));
    let mut app =
        App::start_with_env(&display, &data, &folder, &runtime, &[("WINIT_X11_SCALE_FACTOR", Path::new("2"))]);
    // At 100 % a world unit is one logical pixel, two screen pixels: the body spans
    // x 2·(100+1)..2·(500−1), y 2·(100+30)..2·(400−1).
    let inside = (260, 320, 940, 740);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(60), |s| s.share(inside, PAGE_RGB, 8) > 0.95);
    let share = shot.share(inside, PAGE_RGB, 8);
    assert!(
        share > 0.95,
        "the node body is not drawn at twice its size ({:.1} % there; screenshot: {:?})\n{}",
        share * 100.0,
        save_failure(&shot, "window-hidpi"),
        app.log_tail()
    );
    // Just outside where a 1x drawing would end, the 2x body goes on.
    assert!(shot.share((520, 320, 900, 700), PAGE_RGB, 8) > 0.95, "the body stops at its 1x size");
    assert!(shot.share((1010, 100, 2500, 1500), PAGE_RGB, 8) < 0.001, "body colour beyond the 2x node");
    assert!(app.still_running(), "{}", app.log_tail());
}
