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

    /// Focuses the app's window. `xdotool search` walks every window and fails
    /// with BadWindow when one (a transient of Chromium's) goes away meanwhile:
    /// a failed try is tried again.
    fn focus_app(&self) {
        for _ in 0..20 {
            let status = Command::new("xdotool")
                .args(["search", "--onlyvisible", "--name", "termsprawl", "windowfocus"])
                .env("DISPLAY", self.name())
                .status()
                .expect("run xdotool");
            if status.success() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the app's window could not be focused");
    }

    fn xdotool(&self, args: &[&str]) {
        let status = Command::new("xdotool").args(args).env("DISPLAY", self.name()).status().expect("run xdotool");
        assert!(status.success(), "xdotool {args:?} failed");
    }

    /// The desktop clipboard's text as another program reads it (`xclip -o`),
    /// `None` when its owner does not answer within 3 s.
    fn clipboard(&self) -> Option<String> {
        let out = Command::new("timeout")
            .args(["3", "xclip", "-o", "-selection", "clipboard"])
            .env("DISPLAY", self.name())
            .stderr(Stdio::null())
            .output()
            .expect("run xclip");
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Puts `text` on the desktop clipboard as another program would (xclip
    /// keeps serving it until someone else owns the clipboard).
    fn set_clipboard(&self, text: &str) {
        use std::io::Write;
        let mut child = Command::new("xclip")
            .args(["-selection", "clipboard"])
            .env("DISPLAY", self.name())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run xclip");
        child.stdin.take().expect("xclip's stdin").write_all(text.as_bytes()).expect("write to xclip");
        assert!(child.wait().expect("xclip").success(), "xclip could not take the clipboard");
    }

    /// Gives the window under the pointer the keyboard, as a window manager's click would.
    fn focus_window_under_pointer(&self) {
        let status = Command::new("sh")
            .args(["-c", "eval \"$(xdotool getmouselocation --shell)\" && xdotool windowfocus --sync \"$WINDOW\""])
            .env("DISPLAY", self.name())
            .status()
            .expect("run xdotool");
        assert!(status.success(), "could not give the window the keyboard");
    }

    /// Moves the pointer to (`x`, `y`) and clicks the left button.
    fn click_at(&self, x: f64, y: f64) {
        self.xdotool(&["mousemove", &format!("{}", x.round()), &format!("{}", y.round())]);
        self.xdotool(&["click", "1"]);
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
fn fixture(url: &str, rect: Rect, camera: Camera) -> (support::TestRoot, PathBuf, PathBuf, PathBuf) {
    fixture_with(|_| NodeKind::browser(url).unwrap(), rect, camera)
}

/// A data dir and a project folder whose saved layout holds one node of the kind `kind(folder)` makes.
fn fixture_with(
    kind: impl FnOnce(&Path) -> NodeKind,
    rect: Rect,
    camera: Camera,
) -> (support::TestRoot, PathBuf, PathBuf, PathBuf) {
    let dir = support::TestRoot::new();
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
        name: None,
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
            display.focus_app();
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
            display.focus_app();
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
    let dir = support::TestRoot::new();
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
    display.focus_app();
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

/// Runs git in `dir` (with an identity, for commits) and returns its stdout.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Opens the palette, filters it by `filter`, runs the first entry, then (for a
/// sub-list) filters that by `then` and runs its first entry.
fn palette(display: &Display, filter: &str, then: Option<&str>) {
    display.xdotool(&["key", "ctrl+k"]);
    std::thread::sleep(Duration::from_millis(400));
    display.xdotool(&["type", "--delay", "30", filter]);
    display.xdotool(&["key", "Return"]);
    if let Some(then) = then {
        std::thread::sleep(Duration::from_millis(400));
        display.xdotool(&["type", "--delay", "30", then]);
        display.xdotool(&["key", "Return"]);
    }
    std::thread::sleep(Duration::from_millis(600));
}

#[test]
fn agents_start_from_the_palette_in_the_folder_and_in_a_new_worktree_which_closing_keeps_and_outside_git_is_refused() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (dir, data, folder, runtime) =
        fixture_with(|_| NodeKind::Sticky { text: "notes".into() }, Rect::new(40.0, 60.0, 240.0, 160.0), camera);
    git_in(&folder, &["init", "-q", "-b", "main"]);
    std::fs::write(folder.join("README.md"), "hello\n").unwrap();
    git_in(&folder, &["add", "README.md"]);
    git_in(&folder, &["commit", "-q", "-m", "first"]);
    // The stand-in agent (the custom agent of preferences.json; the real CLIs
    // other than claude are not installed here): it answers --version, then
    // records where it runs and as which node, and stays up.
    let ran = dir.path().join("ran.txt");
    let agent = dir.path().join("stand-in-agent");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'stand-in 0.1'; exit 0; }}\n\
             echo \"$TERMSPRAWL_NODE_ID $(pwd) $(git rev-parse --abbrev-ref HEAD)\" >> '{}'\n\
             echo 'stand-in agent ready'; exec sleep 600\n",
            ran.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let tools = data.join("agent-tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::set_permissions(&tools, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(tools.join("preferences.json"), serde_json::json!({"custom": {"executable": agent}}).to_string())
        .unwrap();
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);
    support::eventually(90, "the first frame", || (app.frames() > 0).then_some(()));
    display.focus_app();
    let ran_lines = || std::fs::read_to_string(&ran).unwrap_or_default();

    // In the project folder, through the same launch as agent_launch (a tool session).
    palette(&display, "new agent", Some("custom"));
    let first = support::eventually(60, "the agent started in the project folder", || {
        ran_lines().lines().next().map(str::to_owned)
    });
    let (node, rest) = first.split_once(' ').unwrap();
    assert_eq!(rest, format!("{} main", folder.display()), "{first}");
    support::eventually(30, "its tool session", || tools.join(format!("sessions/{node}.json")).exists().then_some(()));
    display.xdotool(&["key", "Escape"]);

    // In a new worktree: branch agent/custom-1 under the git-ignored .worktrees/.
    palette(&display, "git worktree", Some("custom"));
    let wt = folder.join(".worktrees/custom-1");
    let second =
        support::eventually(60, "the agent started in its worktree", || ran_lines().lines().nth(1).map(str::to_owned));
    assert!(second.ends_with(&format!("{} agent/custom-1", wt.display())), "{second}\n{}", app.log_tail());
    assert_eq!(
        git_in(&folder, &["for-each-ref", "--format=%(refname:short)", "refs/heads/agent/"]).trim(),
        "agent/custom-1"
    );
    assert_eq!(git_in(&folder, &["status", "--porcelain", "--", ".worktrees"]), "", "the worktrees are git-ignored");
    assert!(!folder.join(".gitignore").exists());
    let layout = folder.join(".termsprawl").join("canvas.json");
    support::eventually(10, "the worktree saved with the node", || {
        std::fs::read_to_string(&layout)
            .ok()
            .filter(|t| t.contains("\"branch\": \"agent/custom-1\"") || t.contains("\"branch\":\"agent/custom-1\""))
    });
    std::thread::sleep(Duration::from_secs(1));
    if let Some(shot) = display.screenshot() {
        println!("screenshot: {}", save_failure(&shot, "agent-worktree").display());
    }

    // Closing it asks; "k" keeps the worktree and its branch.
    display.xdotool(&["key", "Escape"]);
    display.xdotool(&["key", "Delete"]);
    let asked = |what: &str| app.log.lock().map(|l| l.iter().any(|s| s.contains(what))).unwrap_or(false);
    support::eventually(10, "the close question", || asked("asking \"Close — keep the worktree?\"").then_some(()));
    std::thread::sleep(Duration::from_millis(600));
    if let Some(shot) = display.screenshot() {
        println!("screenshot: {}", save_failure(&shot, "agent-close-dialog").display());
    }
    display.xdotool(&["key", "k"]);
    support::eventually(10, "the layout without the worktree agent", || {
        std::fs::read_to_string(&layout).ok().filter(|t| !t.contains("agent/custom-1"))
    });
    assert!(wt.join("README.md").is_file(), "kept: the folder is still there");
    assert_eq!(
        git_in(&folder, &["for-each-ref", "--format=%(refname:short)", "refs/heads/agent/"]).trim(),
        "agent/custom-1"
    );

    // A dirty base asks first; Escape refuses, and nothing is made.
    std::fs::write(folder.join("README.md"), "edited\n").unwrap();
    palette(&display, "git worktree", Some("custom"));
    let asked = |what: &str| app.log.lock().map(|l| l.iter().any(|s| s.contains(what))).unwrap_or(false);
    support::eventually(30, "the dirty-base question", || asked("main has uncommitted changes").then_some(()));
    display.xdotool(&["key", "Escape"]);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        git_in(&folder, &["for-each-ref", "--format=%(refname:short)", "refs/heads/agent/"]).trim(),
        "agent/custom-1",
        "no second branch"
    );
    assert!(!folder.join(".worktrees/custom-2").exists());

    // A project outside git: the worktree entry says so and makes nothing.
    let plain = dir.path().join("not-a-repo");
    std::fs::create_dir_all(&plain).unwrap();
    palette(&display, "open a project", Some(&plain.display().to_string()));
    support::eventually(30, "the second project's layout", || plain.join(".termsprawl").exists().then_some(()));
    palette(&display, "git worktree", None);
    let asked = |what: &str| app.log.lock().map(|l| l.iter().any(|s| s.contains(what))).unwrap_or(false);
    support::eventually(10, "the reason", || {
        asked("No worktree: the project folder is not in a git repository.").then_some(())
    });
    assert!(!plain.join(".worktrees").exists() && !plain.join(".git").exists());
    assert!(app.still_running(), "{}", app.log_tail());
}

/// Kills the app's private tmux server under a data dir when dropped: the
/// terminals a test opens must not outlive it.
struct TmuxServerGuard(PathBuf);

impl Drop for TmuxServerGuard {
    fn drop(&mut self) {
        let socket = self.0.join("tmux").join("termsprawl.sock");
        if socket.exists() {
            let _ = Command::new("tmux").arg("-S").arg(&socket).arg("kill-server").output();
        }
    }
}

/// The nodes of a project's saved layout (`canvas.json`).
fn saved_nodes(folder: &Path) -> Vec<serde_json::Value> {
    let layout = folder.join(".termsprawl").join("canvas.json");
    let v: serde_json::Value =
        std::fs::read(layout).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    v["nodes"].as_array().cloned().unwrap_or_default()
}

/// A saved node's frame (x, y, w, h).
fn saved_rect(n: &serde_json::Value) -> (f64, f64, f64, f64) {
    let r = &n["rect"];
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    (f("x"), f("y"), f("w"), f("h"))
}

#[test]
fn an_empty_canvas_hints_new_nodes_never_overlap_and_a_title_double_click_renames() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = support::TestRoot::new();
    let (data, folder, runtime) = (dir.path().join("data"), dir.path().join("project"), dir.path().join("xdg"));
    for d in [&data, &folder, &runtime] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (project, _) =
        Project::from_nodes(ProjectId::new("proj").unwrap(), "project", &folder, camera, vec![], 0).unwrap();
    save_layout(&project, None).unwrap();
    let ws = Workspace::from_projects(vec![project], Some(ProjectId::new("proj").unwrap())).unwrap();
    save_workspace(&data, &ws, None).unwrap();
    let _tmux = TmuxServerGuard(data.clone());
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);

    // The hint: a bar centred in the window on an otherwise empty canvas.
    let (cx, cy) = (SCREEN.0 / 2, SCREEN.1 / 2);
    let bar = (cx - 150, cy - 6, cx + 150, cy + 6);
    // Above it, the canvas: its background and sparse dot grid (a black screen is no window yet).
    let above = (cx - 150, cy - 120, cx + 150, cy - 60);
    let drawn = |s: &Screenshot| s.share(above, CANVAS_RGB, 6) > 0.8;
    let shot =
        wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| drawn(s) && s.share(bar, CANVAS_RGB, 6) < 0.5);
    assert!(
        drawn(&shot) && shot.share(bar, CANVAS_RGB, 6) < 0.5,
        "no hint in the middle of the empty canvas (screenshot: {:?})\n{}",
        save_failure(&shot, "empty-canvas-hint"),
        app.log_tail()
    );

    // Three nodes from the palette, one after the other: each goes to free space.
    display.focus_app();
    for (i, item) in ["sticky", "terminal", "sticky"].iter().enumerate() {
        display.xdotool(&["key", "ctrl+k"]);
        display.xdotool(&["type", "--delay", "30", item]);
        display.xdotool(&["key", "Return"]);
        support::eventually(30, "the new node saved", || (saved_nodes(&folder).len() == i + 1).then_some(()));
    }
    let mut nodes = saved_nodes(&folder);
    // In the order they were added (each new node goes on top).
    nodes.sort_by_key(|n| n["z"].as_i64());
    let rects: Vec<_> = nodes.iter().map(saved_rect).collect();
    for (i, a) in rects.iter().enumerate() {
        for b in &rects[i + 1..] {
            let apart = a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1;
            assert!(apart, "nodes overlap: {a:?} and {b:?}");
        }
    }
    let first = &rects[0];
    assert_eq!(
        (first.0 + first.2 / 2.0, first.1 + first.3 / 2.0),
        (f64::from(cx), f64::from(cy)),
        "the first node is centred in the view"
    );

    // The terminal's program ends: its trace stays; R, with the node focused, runs it again.
    let term = nodes.iter().position(|n| n["kind"]["type"] == "terminal").expect("the terminal");
    let t = &rects[term];
    let term_id = NodeId::new(nodes[term]["id"].as_str().unwrap()).unwrap();
    let snapshot = || {
        let name =
            termsprawl::runtime::terminals::session_name(&termsprawl::model::persist::normalise(&folder), &term_id);
        let path = termsprawl::runtime::terminals::snapshot_path(&data, &name);
        std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
    };
    let (x, y) = ((t.0 + t.2 / 2.0) as i64, (t.1 + t.3 / 2.0) as i64);
    display.xdotool(&["mousemove", &x.to_string(), &y.to_string(), "click", "1"]);
    display.xdotool(&["type", "--delay", "30", "echo about to fail; exit 3"]);
    display.xdotool(&["key", "Return"]);
    let exit_line = "— exited 3 · Enter or R to restart —";
    support::eventually(60, "the exit line in the terminal's grid", || {
        let s = snapshot();
        (s.contains(exit_line) && s.contains("about to fail")).then_some(())
    });
    display.xdotool(&["key", "r"]);
    support::eventually(60, "the restarted program on a fresh screen", || {
        let s = snapshot();
        (!s.is_empty() && !s.contains(exit_line)).then_some(())
    });
    display.xdotool(&["key", "Escape"]);

    // A double-click on the first note's title bar renames it in place.
    let (x, y) = ((first.0 + 60.0) as i64, (first.1 + TITLE / 2.0) as i64);
    display.xdotool(&["mousemove", &x.to_string(), &y.to_string()]);
    display.xdotool(&["click", "--repeat", "2", "--delay", "120", "1"]);
    display.xdotool(&["key", "--repeat", "8", "--delay", "20", "BackSpace"]);
    display.xdotool(&["type", "--delay", "30", "plan B"]);
    display.xdotool(&["key", "Return"]);
    let id = nodes[0]["id"].as_str().unwrap().to_owned();
    let name_of = |folder: &Path| {
        saved_nodes(folder).iter().find(|n| n["id"] == id.as_str()).and_then(|n| n["name"].as_str().map(str::to_owned))
    };
    support::eventually(20, "the name saved", || (name_of(&folder).as_deref() == Some("plan B")).then_some(()));
    let shot = display.screenshot().expect("a screenshot");
    eprintln!("after the rename: {:?}", save_failure(&shot, "renamed"));
    // Escape gives the keyboard back to the canvas; Ctrl+Z undoes the rename.
    display.xdotool(&["key", "Escape"]);
    display.xdotool(&["key", "ctrl+z"]);
    support::eventually(20, "the rename undone", || name_of(&folder).is_none().then_some(()));
    assert!(app.still_running(), "{}", app.log_tail());
}

/// The attention colour of badges and the tab strip's count (`terminals::ATTENTION`).
const ATTENTION_RGB: [u8; 3] = [0xe0, 0xaf, 0x68];
/// The right end of the first tab on screen (x0, y0, x1, y1), where its count pill sits
/// (tabs are 220 px wide from x = 6 and 30 px tall).
const FIRST_TAB: (u32, u32, u32, u32) = (160, 0, 226, 30);
/// The share of [`FIRST_TAB`] the pill's dot covers in the attention colour.
const PILL_SHARE: f64 = 0.003;

/// A private D-Bus session bus (`dbus-daemon --session`), killed on drop.
struct SessionBus {
    daemon: Child,
    address: String,
}

impl SessionBus {
    fn start() -> Option<SessionBus> {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut line = String::new();
        BufReader::new(daemon.stdout.take()?).read_line(&mut line).ok()?;
        let address = line.trim().to_owned();
        (!address.is_empty()).then_some(SessionBus { daemon, address })
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// A child process killed on drop (the notification server, the bus monitor).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines a child prints, collected by a thread.
fn collect_lines(child: &mut Child) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    if let Some(out) = child.stdout.take() {
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(mut l) = sink.lock() {
                    l.push(line);
                }
            }
        });
    }
    lines
}

/// A terminal node whose shell waits for the file `go` in the project folder,
/// then prints, rings the bell, and copies what is typed into `typed.txt`.
fn bell_terminal(folder: &Path) -> NodeKind {
    // Its program names itself (OSC 2) a moment before the bell: the title a notification carries.
    let script = "while [ ! -e go ]; do sleep 0.2; done; printf '\\033]2;bell maker\\007'; sleep 0.5; \
                  printf 'ready\\a\\n'; cat > typed.txt";
    NodeKind::Terminal {
        cwd: folder.to_path_buf(),
        command: Some(vec!["bash".into(), "-c".into(), script.into()]),
        tmux_session: None,
    }
}

/// The saved camera of project `id` in workspace.json.
fn saved_camera(data: &Path, id: &str) -> Option<Camera> {
    let bytes = std::fs::read(termsprawl::model::persist::workspace_path(data)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let p = v["projects"].as_array()?.iter().find(|p| p["id"] == id)?;
    serde_json::from_value(p["camera"].clone()).ok()
}

/// Whether `camera` shows the centre of `rect` in the middle of the 1280×800 window.
fn centred_on(camera: Camera, rect: Rect) -> bool {
    let mid = camera.screen_to_world(640.0, 400.0);
    (mid.x - (rect.x + rect.w / 2.0)).abs() < 1.0 && (mid.y - (rect.y + rect.h / 2.0)).abs() < 1.0
}

/// Types `text` and Enter into the focused window and waits for the node's `cat` to write it out.
fn typed_reaches(display: &Display, app: &App, file: &Path, text: &str) {
    display.xdotool(&["type", "--delay", "30", text]);
    display.xdotool(&["key", "Return"]);
    let ok = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        std::fs::read_to_string(file).is_ok_and(|t| t.contains(text))
    });
    assert!(ok, "the node did not get the keyboard: {:?}\n{}", std::fs::read_to_string(file), app.log_tail());
}

#[test]
fn a_bell_while_the_window_is_away_notifies_the_desktop_and_activating_it_shows_the_node() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for tool in ["dbus-daemon", "dbus-monitor", "dunst", "dunstctl", "tmux"] {
        if !std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file())) {
            return support::skip_unless_strict("desktop notifications", &format!("`{tool}` is not installed"));
        }
    }
    // Off centre and at an unreadable zoom: the jump must move and zoom in.
    let rect = Rect::new(2400.0, 1400.0, 720.0, 440.0);
    let camera = Camera { x: 1700.0, y: 1000.0, zoom: 0.5 };
    let (_dir, data, folder, runtime) = fixture_with(bell_terminal, rect, camera);
    let display = Display::start();
    let bus = SessionBus::start().expect("start a session bus");
    let server = Command::new("dunst")
        .env("DISPLAY", display.name())
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dunst");
    let _server = Killed(server);
    let mut monitor = Command::new("dbus-monitor")
        .args(["--address", &bus.address, "interface='org.freedesktop.Notifications',member='Notify'"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dbus-monitor");
    let calls = collect_lines(&mut monitor);
    let _monitor = Killed(monitor);
    let address = PathBuf::from(&bus.address);
    let mut app = App::start_with_env(&display, &data, &folder, &runtime, &[("DBUS_SESSION_BUS_ADDRESS", &address)]);
    support::eventually(90, "the window's first frame", || (app.frames() > 0).then_some(()));
    support::eventually(30, "notifications ready", || {
        app.log.lock().ok()?.iter().any(|l| l.contains("desktop notifications go out")).then_some(())
    });
    let before = wait_for_screen(&display, &mut app, Duration::from_secs(5), |_| true);
    assert_eq!(before.share(FIRST_TAB, ATTENTION_RGB, 10), 0.0, "nothing needs the person yet");
    std::fs::write(folder.join("go"), "").unwrap();
    // The window never had the keyboard (no window manager gives it): the bell goes to the desktop.
    let notify = support::eventually(30, "the Notify call on the bus", || {
        let l = calls.lock().ok()?;
        let at = l.iter().position(|s| s.contains("member=Notify"))?;
        let text: Vec<String> = l[at..].iter().take(12).cloned().collect();
        text.iter().any(|s| s.contains("rang the bell")).then(|| text.join("\n"))
    });
    assert!(notify.contains("string \"termsprawl\""), "the app names itself:\n{notify}");
    // The summary is the node's title as the window shows it: the one its program set.
    let summary = notify.lines().nth(4).unwrap_or_default().trim();
    assert_eq!(summary, "string \"bell maker\"", "the summary is the node's title:\n{notify}");
    assert!(notify.contains("string \"rang the bell — project\""), "the body is the reason and project:\n{notify}");
    assert!(notify.contains("string \"default\""), "it can be activated:\n{notify}");
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| {
        s.share(FIRST_TAB, ATTENTION_RGB, 10) > PILL_SHARE
    });
    assert!(
        shot.share(FIRST_TAB, ATTENTION_RGB, 10) > PILL_SHARE,
        "the tab shows no count (screenshot: {:?})",
        save_failure(&shot, "attention-tab")
    );
    // The person clicks the notification: the server emits ActionInvoked.
    let acted = Command::new("dunstctl")
        .args(["action", "0"])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .status()
        .expect("run dunstctl");
    assert!(acted.success());
    let cam = support::eventually(20, "the view on the node", || {
        saved_camera(&data, "proj").filter(|c| centred_on(*c, rect))
    });
    assert_eq!(cam.zoom, 1.0, "50 % is unreadable: the jump zooms to 100 %");
    // Without a window manager the raise cannot give the window the keyboard; xdotool does.
    display.focus_app();
    typed_reaches(&display, &app, &folder.join("typed.txt"), "from the notification");
    let shot =
        wait_for_screen(&display, &mut app, Duration::from_secs(10), |s| s.share(FIRST_TAB, ATTENTION_RGB, 10) == 0.0);
    assert_eq!(shot.share(FIRST_TAB, ATTENTION_RGB, 10), 0.0, "seen: the count goes");
    assert!(app.still_running(), "{}", app.log_tail());
    support::kill_tmux(&data);
}

#[test]
fn ctrl_j_goes_to_the_node_that_needs_you_across_tabs_and_without_a_bus_the_app_says_so_once() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The node's `cat` must outlive its tab being put away, which only tmux sessions do.
    if !std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("tmux").is_file())) {
        return support::skip_unless_strict("ctrl+j across tabs", "`tmux` is not installed");
    }
    let rect = Rect::new(1800.0, 900.0, 720.0, 440.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 0.9 };
    let (dir, data, folder, runtime) = fixture_with(bell_terminal, rect, camera);
    // A second project to be in when Ctrl+J is pressed.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let note = Node::new(NodeKind::Sticky { text: "elsewhere".into() }, "note", Rect::new(0.0, 0.0, 300.0, 200.0));
    let (second, _) =
        Project::from_nodes(ProjectId::new("other").unwrap(), "other", &other, Camera::default(), vec![note], 1)
            .unwrap();
    save_layout(&second, None).unwrap();
    let first =
        termsprawl::model::persist::load_project(ProjectId::new("proj").unwrap(), "project", &folder, camera, None)
            .unwrap()
            .project;
    let ws = Workspace::from_projects(vec![first, second], Some(ProjectId::new("proj").unwrap())).unwrap();
    save_workspace(&data, &ws, None).unwrap();
    let display = Display::start();
    let no_bus = PathBuf::from(format!("unix:path={}", dir.path().join("no-bus").display()));
    let mut app = App::start_with_env(&display, &data, &folder, &runtime, &[("DBUS_SESSION_BUS_ADDRESS", &no_bus)]);
    support::eventually(90, "the window's first frame", || (app.frames() > 0).then_some(()));
    display.focus_app();
    std::fs::write(folder.join("go"), "").unwrap();
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| {
        s.share(FIRST_TAB, ATTENTION_RGB, 10) > PILL_SHARE
    });
    assert!(
        shot.share(FIRST_TAB, ATTENTION_RGB, 10) > PILL_SHARE,
        "the tab shows no count (screenshot: {:?})\n{}",
        save_failure(&shot, "ctrl-j-tab"),
        app.log_tail()
    );
    let workspace = termsprawl::model::persist::workspace_path(&data);
    let active = || -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&workspace).ok()?).ok()?;
        v["active"].as_str().map(str::to_owned)
    };
    // Into the other tab (x 232..452), then Ctrl+J brings the person back to the node.
    display.xdotool(&["mousemove", "340", "15", "click", "1"]);
    support::eventually(20, "the other tab active", || (active().as_deref() == Some("other")).then_some(()));
    display.xdotool(&["key", "ctrl+j"]);
    support::eventually(20, "back in the node's project", || (active().as_deref() == Some("proj")).then_some(()));
    let cam = support::eventually(20, "the view on the node", || {
        saved_camera(&data, "proj").filter(|c| centred_on(*c, rect))
    });
    assert_eq!(cam.zoom, 0.9, "a readable zoom is kept");
    typed_reaches(&display, &app, &folder.join("typed.txt"), "after ctrl j");
    let off: Vec<String> = app
        .log
        .lock()
        .map(|l| l.iter().filter(|s| s.contains("desktop notifications are off")).cloned().collect())
        .unwrap_or_default();
    assert_eq!(off.len(), 1, "said once: {off:?}\n{}", app.log_tail());
    assert!(off[0].contains("no D-Bus session bus"), "{off:?}");
    assert!(app.still_running(), "{}", app.log_tail());
    support::kill_tmux(&data);
}

#[test]
fn a_muted_project_still_counts_who_needs_you_but_sends_no_notification() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for tool in ["dbus-daemon", "dbus-monitor", "dunst"] {
        if !std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file())) {
            return support::skip_unless_strict("muted notifications", &format!("`{tool}` is not installed"));
        }
    }
    let rect = Rect::new(100.0, 100.0, 720.0, 440.0);
    let (_dir, data, folder, runtime) = fixture_with(bell_terminal, rect, Camera::default());
    // What Ctrl+K "Mute notifications for this project" saved in an earlier run.
    std::fs::write(data.join("notifications.json"), serde_json::json!({"muted": [folder]}).to_string()).unwrap();
    let display = Display::start();
    let bus = SessionBus::start().expect("start a session bus");
    let server = Command::new("dunst")
        .env("DISPLAY", display.name())
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dunst");
    let _server = Killed(server);
    let mut monitor = Command::new("dbus-monitor")
        .args(["--address", &bus.address, "interface='org.freedesktop.Notifications',member='Notify'"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dbus-monitor");
    let calls = collect_lines(&mut monitor);
    let _monitor = Killed(monitor);
    let address = PathBuf::from(&bus.address);
    let mut app = App::start_with_env(&display, &data, &folder, &runtime, &[("DBUS_SESSION_BUS_ADDRESS", &address)]);
    support::eventually(90, "the window's first frame", || (app.frames() > 0).then_some(()));
    support::eventually(30, "notifications ready", || {
        app.log.lock().ok()?.iter().any(|l| l.contains("desktop notifications go out")).then_some(())
    });
    std::fs::write(folder.join("go"), "").unwrap();
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| {
        s.share(FIRST_TAB, ATTENTION_RGB, 10) > PILL_SHARE
    });
    assert!(
        shot.share(FIRST_TAB, ATTENTION_RGB, 10) > PILL_SHARE,
        "the tab shows no count (screenshot: {:?})\n{}",
        save_failure(&shot, "muted-tab"),
        app.log_tail()
    );
    // The count is drawn after the same refresh that would have sent the notification.
    let sent: Vec<String> = calls.lock().map(|l| l.clone()).unwrap_or_default();
    assert!(!sent.iter().any(|l| l.contains("member=Notify")), "a muted project notified: {sent:?}");
    assert!(app.still_running(), "{}", app.log_tail());
    support::kill_tmux(&data);
}

/// Waits until the saved layout contains `needle` (page titles reach it through autosave).
fn wait_for_layout(folder: &Path, needle: &str, timeout: Duration) -> String {
    let layout = folder.join(".termsprawl").join("canvas.json");
    let end = Instant::now() + timeout;
    loop {
        let text = std::fs::read_to_string(&layout).unwrap_or_default();
        if text.contains(needle) || Instant::now() >= end {
            return text;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A fresh window showing `page` (served on loopback, its background
/// [`PAGE_RGB`]) in an 800×600 browser node at (100, 100), camera at the origin.
struct PageWindow {
    app: App,
    display: Display,
    folder: PathBuf,
    url: String,
    /// The page's body on screen: left, top, right, bottom.
    body: (f64, f64, f64, f64),
    /// Owns the data dir: bind it (`_dir`) when destructuring, or it goes at once.
    _dir: support::TestRoot,
}

/// Starts a [`PageWindow`] and waits until the page shows: more than 40 % of
/// the body, `left` pixels in from its left edge (where the page has no
/// controls), is the page's colour.
fn page_window(page: &'static str, name: &str, left: f64) -> PageWindow {
    let url = support::serve_page(page);
    let rect = Rect::new(100.0, 100.0, 800.0, 600.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (dir, data, folder, runtime) = fixture(&url, rect, camera);
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    let inner = ((x0 + left) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| s.share(inner, PAGE_RGB, 6) > 0.4);
    assert!(
        shot.share(inner, PAGE_RGB, 6) > 0.4,
        "the page never appeared (screenshot: {:?})\n{}",
        save_failure(&shot, name),
        app.log_tail()
    );
    PageWindow { app, display, folder, url, body: (x0, y0, x1, y1), _dir: dir }
}

/// A page's confirm and prompt wait for the person: the dialog is drawn over
/// the node's page; Cancel clicked, Enter pressed, and a prompt typed into
/// (with a Backspace) each reach the page as its answer.
#[test]
fn page_dialogs_are_answered_by_click_enter_and_typing() {
    use termsprawl::window::page_dialog::PageDialog;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let page = "<html><head><title>waiting</title></head><body style='margin:0;background:#e020c0;height:100vh'>\
        <button id='b' style='position:absolute;left:100px;top:100px;width:200px;height:100px;background:#20e040;border:0'></button>\
        <script>document.getElementById('b').onclick = () => {\
          const a = confirm('First?'); document.title = 'first ' + a;\
          const c = confirm('Second?'); document.title += ' second ' + c;\
          const p = prompt('Name?', 'x'); document.title += ' prompt ' + p; };</script>\
        </body></html>";
    let PageWindow { mut app, display, folder, url, body: (x0, y0, x1, y1), _dir } =
        page_window(page, "dialog-page", 12.0);
    display.click_at(x0 + 200.0, y0 + 150.0);

    // Where the window lays the confirm out: the same layout code, over the same body.
    let dialog = |kind, message: &str, default: &str| {
        PageDialog::new(cef_bridge::JsDialog {
            kind,
            message: message.into(),
            default_prompt: default.into(),
            url: url.clone(),
        })
    };
    let body = canvas_render::Rect::new(x0 as f32, y0 as f32, (x1 - x0) as f32, (y1 - y0) as f32);
    let layout = dialog(cef_bridge::DialogKind::Confirm, "First?", "").layout(body);
    let p = layout.panel;
    let panel = ((p.x + 4.0) as u32, (p.y + 4.0) as u32, (p.x + p.w - 4.0) as u32, (p.y + p.h - 4.0) as u32);
    let shown = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) < 0.05);
    let picture = save_failure(&shown, "dialog-confirm");
    assert!(
        shown.share(panel, PAGE_RGB, 6) < 0.05,
        "no dialog drawn over the page (screenshot: {picture:?})\n{}",
        app.log_tail()
    );
    let cancel = layout.cancel.expect("a confirm has Cancel");
    display.click_at(f64::from(cancel.x + cancel.w / 2.0), f64::from(cancel.y + cancel.h / 2.0));
    let text = wait_for_layout(&folder, "first false", Duration::from_secs(30));
    assert!(text.contains("first false"), "Cancel did not answer the first confirm:\n{text}\n{}", app.log_tail());

    std::thread::sleep(Duration::from_millis(500));
    // Xvfb has no window manager, and once a page has focus X's input focus is None.
    display.focus_window_under_pointer();
    display.xdotool(&["key", "Return"]);
    let text = wait_for_layout(&folder, "second true", Duration::from_secs(30));
    if !text.contains("second true") {
        let shot = display.screenshot().expect("a screenshot");
        panic!(
            "Enter did not answer the second confirm (screenshot: {:?}):\n{text}\n{}",
            save_failure(&shot, "dialog-enter"),
            app.log_tail()
        );
    }

    // The prompt starts with its default "x": type, delete one, type again, Enter.
    let prompt = dialog(cef_bridge::DialogKind::Prompt, "Name?", "x").layout(body).panel;
    let area = (
        (prompt.x + 4.0) as u32,
        (prompt.y + 4.0) as u32,
        (prompt.x + prompt.w - 4.0) as u32,
        (prompt.y + prompt.h - 4.0) as u32,
    );
    let shown = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(area, PAGE_RGB, 6) < 0.05);
    save_failure(&shown, "dialog-prompt");
    display.xdotool(&["type", "yz"]);
    display.xdotool(&["key", "BackSpace"]);
    display.xdotool(&["type", "w"]);
    display.xdotool(&["key", "Return"]);
    let text = wait_for_layout(&folder, "prompt xyw", Duration::from_secs(30));
    assert!(text.contains("prompt xyw"), "the typed prompt text did not reach the page:\n{text}\n{}", app.log_tail());
}

/// Serves two pages (`/` and `/b`, each a flat colour) on a loopback port and
/// counts the requests for each; returns the base URL and the counters.
fn serve_two_pages() -> (String, std::sync::Arc<Vec<std::sync::atomic::AtomicUsize>>) {
    static PAGES: [support::Route; 2] = [
        support::Route {
            path: "/",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>A</title></head><body style='margin:0;background:#e020c0'><p>milk, bread, milk</p></body></html>",
        },
        support::Route {
            path: "/b",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>B</title></head><body style='margin:0;background:#20c0e0'>B</body></html>",
        },
    ];
    support::serve_routes(&PAGES)
}

#[test]
fn a_browser_title_bar_navigates_by_its_address_field_back_forward_and_reload_and_says_why_a_scheme_is_refused() {
    use std::sync::atomic::Ordering;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (base, hits) = serve_two_pages();
    let rect = Rect::new(100.0, 80.0, 640.0, 420.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (_dir, data, folder, runtime) = fixture(&base, rect, camera);
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
    // What the app says the page shows, through the tool server.
    let url_of_page = || {
        let list = support::ctl(&data, "agent-9", "browser_list", serde_json::json!({})).unwrap_or_default();
        list.as_array().and_then(|b| b.iter().find(|n| n["nodeId"] == "page")).map(|n| n["url"].clone())
    };
    let b_url = format!("{base}b");
    let shows = |want: &str, what: &str| {
        support::eventually(60, what, || url_of_page().filter(|u| u == want).map(|_| ()));
    };
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    let inner = ((x0 + 12.0) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let b_rgb = [0x20, 0xc0, 0xe0];
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| s.share(inner, PAGE_RGB, 6) > 0.9);
    assert!(shot.share(inner, PAGE_RGB, 6) > 0.9, "page A never showed:\n{}", app.log_tail());
    // The bar's controls, in screen pixels (zoom 1): buttons 24 wide from x+30, the field after them.
    let bar_y = (rect.y + 15.0) as i64;
    let back = (rect.x + 42.0) as i64;
    let forward = (rect.x + 68.0) as i64;
    let reload = (rect.x + 94.0) as i64;
    let field = (rect.x + 250.0) as i64;
    let click = |x: i64| {
        display.xdotool(&["mousemove", &x.to_string(), &bar_y.to_string(), "click", "1"]);
        std::thread::sleep(Duration::from_millis(400));
    };
    display.focus_app();
    // Back is dim and does nothing with no history.
    click(back);
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(hits[0].load(Ordering::SeqCst), 1, "back with no history loaded nothing");
    // A click on the field selects the whole address: typing replaces it, Enter goes.
    click(field);
    display.xdotool(&["type", "--delay", "30", &b_url]);
    display.xdotool(&["key", "Return"]);
    shows(&b_url, "the typed address loaded");
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(inner, b_rgb, 6) > 0.9);
    assert!(shot.share(inner, b_rgb, 6) > 0.9, "page B never showed");
    click(back);
    shows(&base, "back");
    click(forward);
    shows(&b_url, "forward");
    let before = hits[1].load(Ordering::SeqCst);
    click(reload);
    support::eventually(30, "reload requested the page again", || {
        (hits[1].load(Ordering::SeqCst) > before).then_some(())
    });
    // Ctrl+L, a refused scheme: the field says why in red, the page stays.
    let field_box = ((rect.x + 116.0) as u32, (rect.y + 6.0) as u32, (rect.x + 400.0) as u32, (rect.y + 24.0) as u32);
    let red = [0xf7, 0x76, 0x8e];
    let no_red = display.screenshot().map_or(1.0, |s| s.share(field_box, red, 40));
    display.xdotool(&["mousemove", "640", "300", "click", "1"]);
    display.xdotool(&["key", "ctrl+l"]);
    display.xdotool(&["type", "--delay", "30", "data:text/html,hi"]);
    display.xdotool(&["key", "Return"]);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| s.share(field_box, red, 40) > 0.01);
    let refused = shot.share(field_box, red, 40);
    if refused <= 0.01 || no_red >= 0.001 {
        let saved = save_failure(&shot, "address-refused");
        panic!("no refusal in the field ({refused}, before {no_red}): {saved:?}\n{}", app.log_tail());
    }
    assert_eq!(url_of_page().as_ref().and_then(|u| u.as_str()), Some(b_url.as_str()), "the page stayed");
    // Escape puts the URL back: the red goes.
    display.xdotool(&["key", "Escape"]);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| s.share(field_box, red, 40) < 0.001);
    assert!(shot.share(field_box, red, 40) < 0.001, "Escape did not restore the address");
    // Ctrl+L again, back to page A; then Ctrl+F finds "milk" on it: the page highlights the matches.
    display.xdotool(&["key", "ctrl+l"]);
    display.xdotool(&["type", "--delay", "30", &base]);
    display.xdotool(&["key", "Return"]);
    shows(&base, "Ctrl+L and Enter");
    let yellow = [0xff, 0xff, 0x00];
    let text_rows = (inner.0, inner.1, inner.2, inner.1 + 80);
    wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(inner, PAGE_RGB, 6) > 0.5);
    display.xdotool(&["key", "ctrl+f"]);
    display.xdotool(&["type", "--delay", "60", "milk"]);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| s.share(text_rows, yellow, 60) > 0.0);
    if shot.share(text_rows, yellow, 60) == 0.0 {
        let saved = save_failure(&shot, "find");
        panic!("no match highlighted: {saved:?}\n{}", app.log_tail());
    }
    display.xdotool(&["key", "Escape"]);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| s.share(text_rows, yellow, 60) == 0.0);
    assert_eq!(shot.share(text_rows, yellow, 60), 0.0, "Escape did not clear the highlights");
}

/// Three pages for the tab strip: A's top half is a `target=_blank` link to B,
/// its bottom half a plain link to C (middle-clicked: a background tab).
fn serve_tab_pages() -> String {
    static PAGES: [support::Route; 3] = [
        support::Route {
            path: "/",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>Tabs A</title></head><body style='margin:0;background:#e020c0'>\
                <a href='/b' target='_blank' style='position:absolute;left:0;top:0;width:100%;height:50%'></a>\
                <a href='/c' style='position:absolute;left:0;top:50%;width:100%;height:50%'></a></body></html>",
        },
        support::Route {
            path: "/b",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>Tabs B</title></head><body style='margin:0;background:#20c0e0'>B</body></html>",
        },
        support::Route {
            path: "/c",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>Tabs C</title></head><body style='margin:0;background:#30d050'>C</body></html>",
        },
    ];
    support::serve_routes(&PAGES).0
}

/// A node's tabs as a person uses them: a `target=_blank` link opens a shown
/// tab, a middle-click a background one; chips switch, Ctrl+PageDown steps,
/// Ctrl+W closes the shown tab and its neighbour shows; every page keeps its
/// own history (no reload on a switch).
#[test]
fn links_open_tabs_of_their_node_which_chips_and_keys_switch_and_close() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let base = serve_tab_pages();
    let rect = Rect::new(100.0, 80.0, 900.0, 420.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (_dir, data, folder, runtime) = fixture(&base, rect, camera);
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    let inner = ((x0 + 12.0) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let (b_rgb, c_rgb) = ([0x20, 0xc0, 0xe0], [0x30, 0xd0, 0x50]);
    let shows = |app: &mut App, rgb: [u8; 3], what: &str| {
        let shot = wait_for_screen(&display, app, Duration::from_secs(60), |s| s.share(inner, rgb, 6) > 0.9);
        if shot.share(inner, rgb, 6) <= 0.9 {
            let saved = save_failure(&shot, what);
            panic!("{what}: not shown ({saved:?})\n{}", app.log_tail());
        }
        shot
    };
    shows(&mut app, PAGE_RGB, "page A");
    display.focus_app();
    let (mid_x, top_y, bottom_y) = (((x0 + x1) / 2.0) as i64, (y0 + 60.0) as i64, (y1 - 60.0) as i64);
    // A target=_blank link: a new tab of this node, shown at once.
    display.xdotool(&["mousemove", &mid_x.to_string(), &top_y.to_string(), "click", "1"]);
    shows(&mut app, b_rgb, "the target=_blank tab");
    let layout = wait_for_layout(&folder, "/b", Duration::from_secs(20));
    assert!(layout.contains("/b"), "the new tab was not saved: {layout}");
    // The strip: a chip per tab; a click on the first shows A again.
    let th = canvas_render::Theme::default().title_height;
    let chip_centre = |count: usize, active: usize, i: usize| {
        let l = canvas_render::bar_layout(rect.w as f32, th, canvas_render::TabCount { count, active });
        let strip = l.strip.expect("a tab strip");
        let (chip, _) = strip.chips[i - strip.first];
        ((rect.x as f32 + chip.x + 20.0) as i64, (rect.y as f32 + chip.y + chip.h / 2.0) as i64)
    };
    let (cx, cy) = chip_centre(2, 1, 0);
    display.xdotool(&["mousemove", &cx.to_string(), &cy.to_string(), "click", "1"]);
    shows(&mut app, PAGE_RGB, "page A after its chip was clicked");
    // A middle-click: a background tab (A stays on show; C is saved as the third tab).
    display.xdotool(&["mousemove", &mid_x.to_string(), &bottom_y.to_string(), "click", "2"]);
    let layout = wait_for_layout(&folder, "/c", Duration::from_secs(30));
    assert!(layout.contains("/c"), "the middle-clicked link opened no tab: {layout}");
    std::thread::sleep(Duration::from_secs(1));
    shows(&mut app, PAGE_RGB, "page A stays on show after a middle-click");
    // Ctrl+PageDown steps to B, Ctrl+W closes it and its neighbour C shows.
    display.xdotool(&["key", "ctrl+Next"]);
    shows(&mut app, b_rgb, "Ctrl+PageDown to B");
    display.xdotool(&["key", "ctrl+w"]);
    shows(&mut app, c_rgb, "C after Ctrl+W closed B");
    let layout = wait_for_layout(&folder, "\"Tabs C\"", Duration::from_secs(20));
    support::eventually(20, "B's tab gone from the saved layout", || {
        let text = std::fs::read_to_string(folder.join(".termsprawl").join("canvas.json")).unwrap_or_default();
        (!text.contains("/b\"")).then_some(())
    });
    assert!(layout.contains("/c"), "{layout}");
}

/// Serves a page whose whole body is a link to `/report.txt`, sent as an attachment.
fn serve_download_page() -> String {
    static PAGES: [support::Route; 2] = [
        support::Route {
            path: "/report.txt",
            content_type: "text/plain",
            headers: "Content-Disposition: attachment; filename=\"report.txt\"\r\n",
            body: "quarterly report\n",
        },
        support::Route {
            path: "/",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>downloads</title></head><body style='margin:0;background:#e020c0'>\
                <a href='/report.txt' style='position:absolute;left:0;top:0;width:100%;height:100%'></a></body></html>",
        },
    ];
    support::serve_routes(&PAGES).0
}

#[test]
fn a_download_shows_on_its_node_opens_its_folder_and_is_put_away() {
    use termsprawl::runtime::downloads::DownloadEntry;
    use termsprawl::window::download_strip::{Shelf, ShelfAction};
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let url = serve_download_page();
    let rect = Rect::new(100.0, 100.0, 900.0, 560.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (dir, data, folder, runtime) = fixture(&url, rect, camera);
    // The desktop's file manager is outside the product: a stand-in xdg-open records what it was asked to open.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let opened = dir.path().join("opened.txt");
    let script = format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display());
    std::fs::write(bin.join("xdg-open"), script).expect("write xdg-open");
    std::fs::set_permissions(bin.join("xdg-open"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    let path = PathBuf::from(path);
    let display = Display::start();
    let mut app = App::start_with_env(&display, &data, &folder, &runtime, &[("PATH", path.as_path())]);
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    let inner = ((x0 + 12.0) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| s.share(inner, PAGE_RGB, 6) > 0.4);
    assert!(
        shot.share(inner, PAGE_RGB, 6) > 0.4,
        "the page never appeared (screenshot: {:?})\n{}",
        save_failure(&shot, "download-page"),
        app.log_tail()
    );
    display.xdotool(&["mousemove", &format!("{}", (x0 + 300.0).round()), &format!("{}", (y0 + 100.0).round())]);
    display.xdotool(&["click", "1"]);

    let saved = data.join("downloads").join("report.txt");
    let end = Instant::now() + Duration::from_secs(30);
    while !saved.is_file() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(std::fs::read_to_string(&saved).ok().as_deref(), Some("quarterly report\n"), "{}", app.log_tail());

    // Where the window lays the shelf out: the same layout code, over the same body.
    let entry = DownloadEntry {
        guid: String::new(),
        name: "report.txt".into(),
        path: Some(saved.clone()),
        received: 17,
        total: 17,
        state: cef_bridge::DownloadState::Completed,
    };
    let body = canvas_render::Rect::new(x0 as f32, y0 as f32, (x1 - x0) as f32, (y1 - y0) as f32);
    let shelf = Shelf { node: NodeId::new("page").unwrap(), body, entries: vec![entry] };
    let p = shelf.panel();
    let panel = ((p.x + 4.0) as u32, (p.y + 4.0) as u32, (p.x + p.w - 4.0) as u32, (p.y + p.h - 4.0) as u32);
    let shown = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) < 0.05);
    let picture = save_failure(&shown, "download-shelf");
    assert!(
        shown.share(panel, PAGE_RGB, 6) < 0.05,
        "no shelf over the page (screenshot: {picture:?})\n{}",
        app.log_tail()
    );

    let l = shelf.layout()[0];
    let open = l.open.expect("a saved download can show its folder");
    let (ox, oy) = (open.x + open.w / 2.0, open.y + open.h / 2.0);
    assert!(matches!(shelf.press(ox, oy), Some(ShelfAction::OpenFolder(_))));
    display.xdotool(&["mousemove", &format!("{}", ox.round()), &format!("{}", oy.round())]);
    display.xdotool(&["click", "1"]);
    let end = Instant::now() + Duration::from_secs(15);
    while !opened.is_file() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        std::fs::read_to_string(&opened).ok().map(PathBuf::from),
        Some(data.join("downloads")),
        "Open folder did not hand the folder to the desktop\n{}",
        app.log_tail()
    );

    let close = l.close.expect("an ended download can be put away");
    display.xdotool(&[
        "mousemove",
        &format!("{}", (close.x + close.w / 2.0).round()),
        &format!("{}", (close.y + close.h / 2.0).round()),
    ]);
    display.xdotool(&["click", "1"]);
    let gone = wait_for_screen(&display, &mut app, Duration::from_secs(15), |s| s.share(panel, PAGE_RGB, 6) > 0.9);
    assert!(
        gone.share(panel, PAGE_RGB, 6) > 0.9,
        "Clear did not put the shelf away (screenshot: {:?})\n{}",
        save_failure(&gone, "download-dismissed"),
        app.log_tail()
    );
    assert!(saved.is_file(), "putting it away keeps the file");
}

#[test]
fn a_file_input_opens_a_picker_in_the_project_folder_answered_by_typing_and_by_clicks() {
    use termsprawl::window::file_picker::FilePicker;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let page = "<html><head><title>picking</title></head><body style='margin:0;background:#e020c0;height:100vh'>\
        <input id='f' type='file' multiple style='position:absolute;left:0;top:0;width:100%;height:100%;opacity:0'\
         onchange=\"document.title = 'chosen ' + [...this.files].map(f => f.name + ':' + f.size).join(',')\">\
        </body></html>";
    let url = support::serve_page(page);
    let rect = Rect::new(100.0, 100.0, 900.0, 600.0);
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (_dir, data, folder, runtime) = fixture(&url, rect, camera);
    std::fs::write(folder.join("alpha.txt"), "first").expect("write a file");
    std::fs::write(folder.join("beta.txt"), "second!").expect("write a file");
    std::fs::create_dir_all(folder.join("docs")).expect("a folder");
    let display = Display::start();
    let mut app = App::start(&display, &data, &folder, &runtime);
    let (x0, y0, x1, y1) = body_on_screen(rect, camera);
    let inner = ((x0 + 12.0) as u32, (y0 + 12.0) as u32, (x1 - 12.0) as u32, (y1 - 12.0) as u32);
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(90), |s| s.share(inner, PAGE_RGB, 6) > 0.4);
    assert!(
        shot.share(inner, PAGE_RGB, 6) > 0.4,
        "the page never appeared (screenshot: {:?})\n{}",
        save_failure(&shot, "picker-page"),
        app.log_tail()
    );
    let click_page = || {
        display.xdotool(&["mousemove", &format!("{}", (x0 + 60.0).round()), &format!("{}", (y0 + 60.0).round())]);
        display.xdotool(&["click", "1"]);
    };
    click_page();

    // Where the window lays the picker out: the same code, over the same body, in the same folder.
    let body = canvas_render::Rect::new(x0 as f32, y0 as f32, (x1 - x0) as f32, (y1 - y0) as f32);
    let chooser = cef_bridge::FileChooser {
        mode: cef_bridge::ChooserMode::OpenMultiple,
        title: String::new(),
        default_path: String::new(),
        accept: vec![],
    };
    let picker = FilePicker::new(chooser, &folder);
    let l = picker.layout(body);
    let p = l.panel;
    let panel = ((p.x + 4.0) as u32, (p.y + 4.0) as u32, (p.x + p.w - 4.0) as u32, (p.y + p.h - 4.0) as u32);
    let shown = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) < 0.05);
    let picture = save_failure(&shown, "picker-open");
    assert!(
        shown.share(panel, PAGE_RGB, 6) < 0.05,
        "no picker over the page (screenshot: {picture:?})\n{}",
        app.log_tail()
    );

    // By keys: the window takes the keyboard as a WM's click would, then "bet" narrows to beta.txt and Enter chooses it.
    let status = Command::new("sh")
        .args(["-c", "eval \"$(xdotool getmouselocation --shell)\" && xdotool windowfocus --sync \"$WINDOW\""])
        .env("DISPLAY", display.name())
        .status()
        .expect("run xdotool");
    assert!(status.success(), "could not give the window the keyboard");
    display.xdotool(&["type", "bet"]);
    display.xdotool(&["key", "Return"]);
    let text = wait_for_layout(&folder, "chosen beta.txt:7", Duration::from_secs(30));
    assert!(
        text.contains("chosen beta.txt:7"),
        "typing and Enter did not choose beta.txt:\n{text}\n{}",
        app.log_tail()
    );

    // By clicks: alpha.txt's row (after the docs folder), then Open.
    click_page();
    wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) < 0.05);
    let names: Vec<String> = picker.visible().iter().map(|e| e.name.clone()).collect();
    assert_eq!(names, vec!["docs", "alpha.txt", "beta.txt"]);
    let (_, row) = l.rows[1];
    for (x, y) in [(row.x + 40.0, row.y + row.h / 2.0), (l.ok.x + l.ok.w / 2.0, l.ok.y + l.ok.h / 2.0)] {
        display.xdotool(&["mousemove", &format!("{}", x.round()), &format!("{}", y.round())]);
        display.xdotool(&["click", "1"]);
        std::thread::sleep(Duration::from_millis(700));
    }
    let text = wait_for_layout(&folder, "chosen alpha.txt:5", Duration::from_secs(30));
    if !text.contains("chosen alpha.txt:5") {
        let shot = display.screenshot().expect("a screenshot");
        panic!(
            "a click on alpha.txt and Open did not choose it (screenshot: {:?}):\n{text}\n{}",
            save_failure(&shot, "picker-click"),
            app.log_tail()
        );
    }

    // Escape cancels: the page keeps its choice.
    click_page();
    wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) < 0.05);
    display.xdotool(&["key", "Escape"]);
    let gone = wait_for_screen(&display, &mut app, Duration::from_secs(15), |s| s.share(panel, PAGE_RGB, 6) > 0.9);
    assert!(
        gone.share(panel, PAGE_RGB, 6) > 0.9,
        "Escape did not close the picker (screenshot: {:?})\n{}",
        save_failure(&gone, "picker-escape"),
        app.log_tail()
    );
    let text = wait_for_layout(&folder, "chosen alpha.txt:5", Duration::from_secs(5));
    assert!(text.contains("chosen alpha.txt:5"), "cancelling changed the page's choice:\n{text}");
}

/// The environment the real claude CLI runs offline in: a fresh `HOME`, its
/// binary on PATH and its model the stand-in at `api`.
fn claude_env(home: &Path, claude: &Path, api: &str) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("HOME", home.to_path_buf()),
        ("PATH", format!("{}:/usr/bin:/bin", claude.display()).into()),
        ("SHELL", "/bin/sh".into()),
        ("ANTHROPIC_BASE_URL", api.into()),
        ("ANTHROPIC_API_KEY", support::claude_api::API_KEY.into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
    ]
}

/// Pixels in `region` within 12 of `rgb` on every channel.
fn pixels_of(shot: &Screenshot, region: (u32, u32, u32, u32), rgb: [u8; 3]) -> u64 {
    let area = u64::from(region.2.saturating_sub(region.0)) * u64::from(region.3.saturating_sub(region.1));
    (shot.share(region, rgb, 12) * area as f64).round() as u64
}

#[test]
fn the_real_claude_started_from_the_palette_reports_through_its_hooks_and_its_badge_follows() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use support::claude_api::{claude_bin_dir, claude_home, stand_in, Gate};
    let Some(claude) = claude_bin_dir() else {
        return support::skip_unless_strict("claude from the palette", "tests/cdp/node_modules/.bin/claude is missing");
    };
    let camera = Camera { x: 0.0, y: 0.0, zoom: 1.0 };
    let (dir, data, folder, runtime) =
        fixture_with(|_| NodeKind::Sticky { text: "notes".into() }, Rect::new(40.0, 60.0, 240.0, 160.0), camera);
    let _tmux = TmuxServerGuard(data.clone());
    let folder = folder.canonicalize().unwrap();
    let home = dir.path().join("home");
    claude_home(&home, &folder);
    // The model is a stand-in on 127.0.0.1 (see support/claude_api.rs): each
    // reply waits for the test's go, so "working" can be seen.
    let gate = std::sync::Arc::new(Gate::default());
    let api = stand_in(gate.clone());
    let env = claude_env(&home, &claude, &api);
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let display = Display::start();
    let mut app = App::start_with_args(&display, &data, &folder, &runtime, &env, &["--agent", "tester"]);
    support::eventually(90, "the first frame", || (app.frames() > 0).then_some(()));
    display.focus_app();

    // The palette's "New agent" → claude: an agent node with claude's hooks,
    // which report it at its prompt.
    palette(&display, "new agent", Some("claude"));
    let node = support::eventually(60, "the claude node", || {
        saved_nodes(&folder).into_iter().find(|n| n["kind"]["agent"] == "claude" || n["agent"] == "claude")
    });
    let id = node["id"].as_str().unwrap().to_owned();
    let state = |app: &App, want: &str| {
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            support::eventually(120, &format!("claude {want} by its hooks"), || {
                let v = support::ctl(&data, "tester", "agent_status", serde_json::json!({"nodeId": id})).ok()?;
                let a = v["agents"][0].clone();
                (a["state"] == want && a["source"] == "hooks").then_some(a)
            })
        }));
        found.unwrap_or_else(|_| panic!("claude never {want}\n{}", app.log_tail()))
    };
    state(&app, "waiting-for-input");
    // Its hooks run as it starts; give its input box a moment to take keys.
    std::thread::sleep(Duration::from_millis(1500));

    // The node took the keyboard: a prompt typed into the window goes to claude.
    let (x, y, w, _) = saved_rect(&saved_nodes(&folder).into_iter().find(|n| n["id"] == id.as_str()).unwrap());
    let cam = saved_camera(&data, "proj").unwrap_or(camera);
    let title_bar = |s: &Screenshot| {
        let sx = |wx: f64| ((wx - cam.x) * cam.zoom).clamp(0.0, f64::from(s.width)) as u32;
        let sy = |wy: f64| ((wy - cam.y) * cam.zoom).clamp(0.0, f64::from(s.height)) as u32;
        (sx(x), sy(y), sx(x + w), sy(y + TITLE))
    };
    display.xdotool(&["type", "--delay", "40", "say hello"]);
    display.xdotool(&["key", "Return"]);
    state(&app, "working");
    const BUSY_RGB: [u8; 3] = [0x9e, 0xce, 0x6a];
    const DONE_RGB: [u8; 3] = [0x7a, 0xa2, 0xf7];
    let shot =
        wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| pixels_of(s, title_bar(s), BUSY_RGB) >= 8);
    assert!(
        pixels_of(&shot, title_bar(&shot), BUSY_RGB) >= 8,
        "no working badge on the node (screenshot: {:?})",
        save_failure(&shot, "claude-working")
    );
    // Its reply arrives: the Stop hook says done, and so does the badge.
    gate.release();
    state(&app, "done");
    let shot =
        wait_for_screen(&display, &mut app, Duration::from_secs(20), |s| pixels_of(s, title_bar(s), DONE_RGB) >= 8);
    assert!(
        pixels_of(&shot, title_bar(&shot), DONE_RGB) >= 8 && pixels_of(&shot, title_bar(&shot), BUSY_RGB) == 0,
        "the badge did not turn to done (screenshot: {:?})",
        save_failure(&shot, "claude-done")
    );
    println!("screenshot: {}", save_failure(&shot, "claude-from-palette").display());
    assert!(app.still_running(), "{}", app.log_tail());
}

#[test]
fn a_page_moved_out_of_view_is_hidden_as_a_background_tab_and_shown_again_in_view() {
    use std::sync::atomic::Ordering;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The page tells the server each visibility it reads, at load and on every change.
    static ROUTES: [support::Route; 3] = [
        support::Route {
            path: "/",
            content_type: "text/html",
            headers: "",
            body: "<html><head><title>vis</title></head><body style='margin:0;background:#e020c0'><script>\
                   function report(){fetch('/'+document.visibilityState,{cache:'no-store'}).catch(()=>{})}\
                   document.addEventListener('visibilitychange',report);report();</script></body></html>",
        },
        support::Route { path: "/visible", content_type: "text/plain", headers: "", body: "ok" },
        support::Route { path: "/hidden", content_type: "text/plain", headers: "", body: "ok" },
    ];
    let (url, hits) = support::serve_routes(&ROUTES);
    let (visible, hidden) = (|| hits[1].load(Ordering::SeqCst), || hits[2].load(Ordering::SeqCst));
    let rect = Rect::new(100.0, 80.0, 640.0, 420.0);
    let (_dir, data, folder, runtime) = fixture(&url, rect, Camera { x: 0.0, y: 0.0, zoom: 1.0 });
    let display = Display::start();
    let app = App::start_with_args(&display, &data, &folder, &runtime, &[], &["--agent", "agent-9"]);
    let session = data.join("agent-tools/sessions/agent-9.json");
    support::eventually(90, "the agent's session", || session.exists().then_some(()));
    support::eventually(90, "the page on screen reads visible", || (visible() >= 1).then_some(()));
    assert_eq!(hidden(), 0, "a page in view is never hidden\n{}", app.log_tail());
    let mv = |x: f64| {
        let args = serde_json::json!({"nodeId": "page", "x": x, "y": 80.0});
        support::ctl(&data, "agent-9", "canvas_move", args)
            .unwrap_or_else(|e| panic!("canvas_move: {e}\n{}", app.log_tail()));
    };
    // Far off the screen: hidden, as Chromium hides a tab the window does not show.
    mv(40_000.0);
    support::eventually(30, "the page out of view reads hidden", || (hidden() >= 1).then_some(()));
    // Back in view: visible again.
    let shown_before = visible();
    mv(100.0);
    support::eventually(30, "the page back in view reads visible", || (visible() > shown_before).then_some(()));
    assert_eq!(hidden(), 1, "hidden once");
}

#[test]
fn copy_cut_and_paste_inside_a_page_use_the_desktop_clipboard() {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    need("xclip");
    let page = "<html><head><title>ready</title></head><body style='margin:0;background:#e020c0;height:100vh'>\
        <textarea id='t' style='position:absolute;left:40px;top:40px;width:400px;height:80px;font-size:20px'>words from the page</textarea>\
        <input id='i' style='position:absolute;left:40px;top:200px;width:400px;height:40px;font-size:20px'>\
        <script>const i = document.getElementById('i'); let pastes = 0;\
          i.addEventListener('paste', () => pastes++);\
          i.addEventListener('input', () => document.title = 'field [' + i.value + '] pastes ' + pastes);</script>\
        </body></html>";
    let PageWindow { app, display, folder, body: (x0, y0, ..), _dir, .. } = page_window(page, "clipboard-page", 460.0);
    let wait_clipboard = |want: &str| wait_for_clipboard(&display, want);

    // Copy: select the textarea's text and Ctrl+C; another program reads it.
    display.click_at(x0 + 100.0, y0 + 70.0);
    display.focus_window_under_pointer();
    display.xdotool(&["key", "ctrl+a"]);
    display.xdotool(&["key", "ctrl+c"]);
    wait_clipboard("words from the page");

    // Paste: what another program put on the clipboard goes into the field (the page sees a paste).
    display.set_clipboard("from the desktop");
    display.click_at(x0 + 200.0, y0 + 220.0);
    display.focus_window_under_pointer();
    display.xdotool(&["key", "ctrl+v"]);
    let text = wait_for_layout(&folder, "field [from the desktop] pastes 1", Duration::from_secs(30));
    assert!(text.contains("field [from the desktop] pastes 1"), "Ctrl+V did not paste:\n{text}\n{}", app.log_tail());

    // Cut: the field empties and the clipboard holds what it had.
    display.set_clipboard("something else");
    display.xdotool(&["key", "ctrl+a"]);
    display.xdotool(&["key", "ctrl+x"]);
    let text = wait_for_layout(&folder, "field [] pastes 1", Duration::from_secs(30));
    assert!(text.contains("field [] pastes 1"), "Ctrl+X did not cut:\n{text}\n{}", app.log_tail());
    wait_clipboard("from the desktop");
}

/// Waits until another program reads `want` from the desktop clipboard (20 s).
fn wait_for_clipboard(display: &Display, want: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    let mut last = None;
    while Instant::now() < end {
        last = display.clipboard();
        if last.as_deref() == Some(want) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the desktop clipboard holds {last:?}, not {want:?} (None: its owner never answered)");
}

/// A right click in a page opens its context menu where the person clicked,
/// with Chromium's entries for what is there: a link's address is copied to
/// the desktop clipboard and the link opens in a new tab of the node; in a
/// text field Cut and Paste use the desktop clipboard; Escape closes the
/// page's menu and a click elsewhere closes it too, reaching nothing.
#[test]
fn a_pages_context_menu_copies_pastes_and_opens_links_in_new_tabs() {
    use cef_bridge::{ContextMenu, EditState, MenuTarget};
    use termsprawl::window::page_menu::PageMenu;
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    need("xclip");
    let page = "<html><head><title>ready</title></head><body style='margin:0;background:#e020c0;height:100vh'>\
        <a id='l' href='/next-page' style='position:absolute;left:40px;top:40px;font-size:24px'>the next page</a>\
        <textarea id='t' style='position:absolute;left:40px;top:300px;width:300px;height:60px;font-size:20px'>words from the page</textarea>\
        <script>const t = document.getElementById('t'); let menus = 0, clicks = 0, wheels = 0;\
          const show = () => document.title = 'field [' + t.value + '] menus ' + menus + ' clicks ' + clicks + ' wheels ' + wheels;\
          document.addEventListener('contextmenu', () => menus++);\
          document.addEventListener('wheel', () => wheels++);\
          document.addEventListener('click', () => { clicks++; show(); });\
          t.addEventListener('input', show);</script>\
        </body></html>";
    let PageWindow { mut app, display, folder, url, body: (x0, y0, x1, y1), _dir } =
        page_window(page, "menu-page", 460.0);
    let body = canvas_render::Rect::new(x0 as f32, y0 as f32, (x1 - x0) as f32, (y1 - y0) as f32);
    let view = ((x1 - x0) as u32, (y1 - y0) as u32);
    let screen = (SCREEN.0 as f32, SCREEN.1 as f32);
    // Where the window lays a menu out: the same layout code, for the same entries at the same point.
    let open_menu = |app: &mut App, at: (f64, f64), target: MenuTarget, name: &str| {
        display.xdotool(&["mousemove", &format!("{}", at.0.round()), &format!("{}", at.1.round())]);
        display.xdotool(&["click", "3"]);
        let menu = ContextMenu::new((at.0 - x0).round() as i32, (at.1 - y0).round() as i32, target);
        let layout = PageMenu::new(menu).layout(body, view, screen);
        let p = layout.panel;
        let panel = ((p.x + 6.0) as u32, (p.y + 6.0) as u32, (p.x + p.w - 6.0) as u32, (p.y + p.h - 6.0) as u32);
        let shown = wait_for_screen(&display, app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) < 0.05);
        let picture = save_failure(&shown, name);
        assert!(
            shown.share(panel, PAGE_RGB, 6) < 0.05,
            "no menu drawn where the page was right-clicked (screenshot: {picture:?})\n{}",
            app.log_tail()
        );
        (layout, panel)
    };
    let click_row = |layout: &termsprawl::window::page_menu::Layout, row: usize| {
        let r = layout.rows[row].1;
        display.click_at(f64::from(r.x + r.w / 2.0), f64::from(r.y + r.h / 2.0));
    };
    let link = |u: &str| MenuTarget { link_url: Some(u.into()), ..Default::default() };
    let next = format!("{}/next-page", url.trim_end_matches('/'));

    // On the link: Copy link address puts the link's full address on the desktop clipboard.
    let (layout, _) = open_menu(&mut app, (x0 + 60.0, y0 + 52.0), link(&next), "menu-link");
    click_row(&layout, 1);
    wait_for_clipboard(&display, &next);

    // Open link in new tab: a second tab of the node, the page being read staying in front.
    let (layout, _) = open_menu(&mut app, (x0 + 60.0, y0 + 52.0), link(&next), "menu-link-tab");
    click_row(&layout, 0);
    let text = wait_for_layout(&folder, "next-page", Duration::from_secs(30));
    assert!(text.contains("next-page"), "no tab opened for the link:\n{text}\n{}", app.log_tail());

    // In the text field, all selected: Cut empties it onto the clipboard.
    let field = (x0 + 150.0, y0 + 330.0);
    display.click_at(field.0, field.1);
    display.focus_window_under_pointer();
    display.xdotool(&["key", "ctrl+a"]);
    let editing = MenuTarget { editable: true, edit: EditState::default(), ..Default::default() };
    let (layout, _) = open_menu(&mut app, field, editing.clone(), "menu-field");
    click_row(&layout, 2); // Undo, Redo | Cut, Copy, Paste, Delete | Select all
    let text = wait_for_layout(&folder, "field [] menus 3 clicks 1", Duration::from_secs(30));
    assert!(text.contains("field [] menus 3 clicks 1"), "Cut did not empty the field:\n{text}\n{}", app.log_tail());
    wait_for_clipboard(&display, "words from the page");

    // Paste: what another program put on the clipboard goes into the field.
    display.set_clipboard("from the desktop");
    let (layout, _) = open_menu(&mut app, field, editing, "menu-paste");
    click_row(&layout, 4);
    let text = wait_for_layout(&folder, "field [from the desktop] menus 4 clicks 1", Duration::from_secs(30));
    assert!(
        text.contains("field [from the desktop] menus 4 clicks 1"),
        "Paste did not fill the field:\n{text}\n{}",
        app.log_tail()
    );

    // On the page: Escape closes the menu, and so does a click elsewhere, which reaches nothing.
    let gone = |app: &mut App, panel, name: &str| {
        let shot = wait_for_screen(&display, app, Duration::from_secs(30), |s| s.share(panel, PAGE_RGB, 6) > 0.9);
        assert!(
            shot.share(panel, PAGE_RGB, 6) > 0.9,
            "the menu stayed open (screenshot: {:?})\n{}",
            save_failure(&shot, name),
            app.log_tail()
        );
    };
    let page_menu = MenuTarget::default();
    let (_, panel) = open_menu(&mut app, (x0 + 500.0, y0 + 100.0), page_menu.clone(), "menu-page-open");
    display.focus_window_under_pointer();
    display.xdotool(&["key", "Escape"]);
    gone(&mut app, panel, "menu-escape");
    let (_, panel) = open_menu(&mut app, (x0 + 500.0, y0 + 100.0), page_menu.clone(), "menu-page-again");
    display.click_at(x0 + 150.0, y0 + 200.0);
    gone(&mut app, panel, "menu-click-away");
    // The wheel closes it too, as a desktop menu's grab does.
    let (_, panel) = open_menu(&mut app, (x0 + 500.0, y0 + 100.0), page_menu, "menu-page-wheel");
    display.xdotool(&["click", "5"]);
    gone(&mut app, panel, "menu-wheel");
    // The click that closed the menu never reached the page: the next one is its second.
    display.click_at(x0 + 150.0, y0 + 200.0);
    let text = wait_for_layout(&folder, "menus 7 clicks 2 wheels 0", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(800));
    let text = std::fs::read_to_string(folder.join(".termsprawl").join("canvas.json")).unwrap_or(text);
    assert!(
        text.contains("menus 7 clicks 2 wheels 0"),
        "the click or the wheel that closed the menu reached the page:\n{text}\n{}",
        app.log_tail()
    );
    // Once that gesture has ended, the wheel reaches the page again.
    std::thread::sleep(Duration::from_millis(500));
    display.xdotool(&["click", "5"]);
    display.click_at(x0 + 150.0, y0 + 200.0);
    let text = wait_for_layout(&folder, "clicks 3 wheels", Duration::from_secs(30));
    assert!(
        text.contains("clicks 3 wheels") && !text.contains("clicks 3 wheels 0"),
        "a later wheel did not reach the page:\n{text}"
    );
    assert!(app.still_running(), "the app died:\n{}", app.log_tail());
}

/// The README's picture (`docs/screenshot/make` runs this with `README_SHOT`
/// naming the PNG): the real window under Xvfb on a demo project — a
/// terminal with a dev build's output, the real claude CLI in an agent node
/// (its model a stand-in on 127.0.0.1, see support/claude_api.rs) whose
/// badge its hooks set, a browser node on a page served here and a sticky
/// note. Ignored in the suite: it makes a picture, it checks only that each
/// part is there before taking it.
#[test]
#[ignore = "makes the README's screenshot; run by docs/screenshot/make"]
fn readme_screenshot() {
    use support::claude_api::{claude_bin_dir, claude_home, stand_in, Gate};
    static SITE: [support::Route; 1] = [support::Route {
        path: "/",
        content_type: "text/html; charset=utf-8",
        headers: "",
        body: include_str!("../../docs/screenshot/site/index.html"),
    }];
    let out = PathBuf::from(std::env::var_os("README_SHOT").expect("README_SHOT names the PNG to write"));
    let claude = claude_bin_dir().expect("tests/cdp/node_modules/.bin/claude (./dev setup installs it)");
    let (url, _) = support::serve_routes(&SITE);
    let camera = Camera { x: -30.0, y: -24.0, zoom: 0.98 };
    // The fixture's folders; the layout is written again below with every node.
    let (dir, data, folder, runtime) =
        fixture_with(|_| NodeKind::Sticky { text: String::new() }, Rect::new(0.0, 0.0, 100.0, 100.0), camera);
    let folder = folder.canonicalize().unwrap();
    let node = |id: &str, kind: NodeKind, title: &str, rect: Rect, z: i64| Node {
        id: NodeId::new(id).unwrap(),
        kind,
        title: title.into(),
        rect,
        z,
        colour: None,
        name: None,
        links: Default::default(),
    };
    let terminal = NodeKind::Terminal {
        cwd: folder.clone(),
        command: Some(vec!["sh".into(), "-c".into(), DEV_BUILD.into()]),
        tmux_session: None,
    };
    let mut dev = node("tests", terminal, "cargo test", Rect::new(0.0, 0.0, 600.0, 300.0), 1);
    dev.name = Some("cargo test".into());
    let mut note = node(
        "note",
        NodeKind::Sticky { text: "Ctrl+J goes to the node\nthat waited longest for you".into() },
        "note",
        Rect::new(640.0, 560.0, 320.0, 140.0),
        4,
    );
    note.colour = Some(termsprawl::model::Colour::new("yellow").unwrap());
    let nodes = vec![
        dev,
        node(
            "agent",
            NodeKind::Agent { agent: termsprawl::model::AgentKind::Claude, cwd: folder.clone(), worktree: None },
            "claude",
            Rect::new(0.0, 330.0, 600.0, 420.0),
            2,
        ),
        node("app", NodeKind::browser(&url).unwrap(), "Tiny Todo", Rect::new(640.0, 0.0, 620.0, 520.0), 3),
        note,
    ];
    let (project, _) =
        Project::from_nodes(ProjectId::new("proj").unwrap(), "tiny-todo", &folder, camera, nodes, 5).unwrap();
    save_layout(&project, None).expect("save layout");
    let ws = Workspace::from_projects(vec![project], Some(ProjectId::new("proj").unwrap())).unwrap();
    save_workspace(&data, &ws, None).expect("save workspace");

    let _tmux = TmuxServerGuard(data.clone());
    let home = dir.path().join("home");
    claude_home(&home, &folder);
    let gate = std::sync::Arc::new(Gate::default());
    let api = stand_in(gate.clone());
    let env = claude_env(&home, &claude, &api);
    let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let display = Display::start();
    let mut app = App::start_with_args(&display, &data, &folder, &runtime, &env, &["--agent", "tester"]);
    support::eventually(90, "the first frame", || (app.frames() > 0).then_some(()));
    display.focus_app();
    let state = |want: &str| {
        support::eventually(120, &format!("claude {want} by its hooks"), || {
            let v = support::ctl(&data, "tester", "agent_status", serde_json::json!({"nodeId": "agent"})).ok()?;
            let a = v["agents"][0].clone();
            (a["state"] == want && a["source"] == "hooks").then_some(a)
        })
    };
    state("waiting-for-input");
    std::thread::sleep(Duration::from_millis(1500));
    // A turn: the prompt typed into the agent node, the stand-in's reply, then done.
    let (x, y) = (((300.0 - camera.x) * camera.zoom) as i64, ((600.0 - camera.y) * camera.zoom) as i64);
    display.xdotool(&["mousemove", &x.to_string(), &y.to_string()]);
    display.xdotool(&["click", "1"]);
    std::thread::sleep(Duration::from_millis(500));
    display.xdotool(&["type", "--delay", "40", "say hello"]);
    display.xdotool(&["key", "Return"]);
    state("working");
    gate.release();
    state("done");
    // The external agent the picture was watched through goes out of view.
    support::ctl(&data, "tester", "canvas_move", serde_json::json!({"nodeId": "tester", "x": 4000.0, "y": 4000.0}))
        .unwrap_or_else(|e| panic!("canvas_move: {e}\n{}", app.log_tail()));
    // The pointer off the nodes, the page painted, the terminal's output settled.
    display.xdotool(&["mousemove", "1270", "790"]);
    std::thread::sleep(Duration::from_secs(4));
    let shot = wait_for_screen(&display, &mut app, Duration::from_secs(30), |s| {
        let (x0, y0, x1, y1) = body_on_screen(Rect::new(640.0, 0.0, 620.0, 520.0), camera);
        s.share((x0 as u32, y0 as u32, x1 as u32, (y0 + 60.0) as u32), [0x2f, 0x5b, 0xd3], 12) > 0.5
            && x1 > x0
            && y1 > y0
    });
    let written = save_failure(&shot, "readme");
    std::fs::copy(&written, &out).expect("write README_SHOT");
    println!("wrote {}", out.display());
}

/// What the README's terminal node runs: a test run's output, then it waits.
const DEV_BUILD: &str = "printf '\\033[1;32m   Compiling\\033[0m tiny-todo v0.1.0 (/home/me/tiny-todo)\\n\\033[1;32m    Finished\\033[0m `test` profile [unoptimized + debuginfo] target(s) in 2.41s\\n\\033[1;32m     Running\\033[0m unittests src/main.rs\\n\\nrunning 6 tests\\ntest store::tests::adds_a_todo ... \\033[32mok\\033[0m\\ntest store::tests::marks_done ... \\033[32mok\\033[0m\\ntest store::tests::keeps_order ... \\033[32mok\\033[0m\\ntest api::tests::lists_todos ... \\033[32mok\\033[0m\\ntest api::tests::rejects_empty_title ... \\033[32mok\\033[0m\\ntest api::tests::sorts_by_due_date ... \\033[31mFAILED\\033[0m\\n\\ntest result: \\033[31mFAILED\\033[0m. 5 passed; 1 failed\\n'; exec sleep 86400";
