//! Big-canvas benchmark (not a test; run through `bench/scale/run`).
//!
//! The canvas: 100 terminals (half print a line a second, half print one line
//! and wait), 20 browser pages (5 animating, 15 static) and 200 sticky notes,
//! in three regions: pages top left, terminals below them, notes far right.
//!
//! - `scale-bench fixture DATA_DIR PROJECT_DIR BASE_URL pages|notes`: writes
//!   that canvas as a saved workspace, its camera on the pages (the 5
//!   animating ones in view, readable) or on the notes (everything that moves
//!   out of view).
//! - `scale-bench pages DATA_DIR PROJECT_DIR URL N`: a canvas of N browser
//!   nodes on one page, all in view (the memory measurement: PSS per page).
//! - `scale-bench restore DATA_DIR PROJECT_DIR`: starts the app's runtime
//!   headless on that workspace (as `termsprawl --headless` does) and times
//!   how long until every node is live: every page loaded (and painted, unless
//!   it is a background tab: headless, pages nobody looks at load hidden, as
//!   Chromium's background tabs do), every terminal's program running and its
//!   first output on the grid.
//! - `scale-bench pan DATA_DIR PROJECT_DIR [FRAMES]`: with the canvas live,
//!   pans a 1920×1080 off-screen view across all of it at zoom 0.5 and times
//!   each frame as the window makes it (pacing, frame uploads, scene, render,
//!   GPU wait), first telling the runtime what the view shows (what the
//!   window does), then with no view (every page at full rate and uploaded,
//!   every terminal read, as before the runtime knew the view): median and
//!   p99 of each and their ratio.

#[path = "../bench_main.rs"]
mod bench_main;
use bench_main::stats;

use anyhow::{bail, Context, Result};
use canvas_render::{wgpu, Camera, RenderTarget, Vec2};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use termsprawl::model::{self, Node, NodeId, NodeKind, Project, ProjectId, Rect, Workspace};
use termsprawl::runtime::on_screen::OnScreen;
use termsprawl::runtime::{headless, scene::Gfx, Runtime, RuntimeConfig, Waker};

const VIEW: (u32, u32) = (1920, 1080);
const PAGE: (f64, f64) = (400.0, 300.0);
const TERMINAL: (f64, f64) = (480.0, 300.0);
const NOTE: (f64, f64) = (200.0, 140.0);
const GAP: f64 = 40.0;
/// Where the notes start (far right of the pages and the terminals).
const NOTES_X: f64 = 6000.0;

fn node(id: String, kind: NodeKind, title: String, rect: Rect, z: usize) -> Node {
    Node {
        id: NodeId::new(id).expect("valid id"),
        kind,
        title,
        name: None,
        rect,
        z: z as i64,
        colour: None,
        links: Default::default(),
    }
}

fn layout(base: &str, folder: &Path) -> Vec<Node> {
    let mut nodes = vec![];
    for i in 0..20 {
        let page = if i < 5 { "animated.html" } else { "static.html" };
        let rect = Rect::new((i % 5) as f64 * (PAGE.0 + GAP), (i / 5) as f64 * (PAGE.1 + GAP), PAGE.0, PAGE.1);
        let kind = NodeKind::browser(&format!("{base}{page}")).expect("valid url");
        nodes.push(node(format!("page{i}"), kind, format!("page {i}"), rect, nodes.len()));
    }
    let terminals_y = 4.0 * (PAGE.1 + GAP) + 200.0;
    for i in 0..100 {
        let script = if i % 2 == 0 {
            format!("i=0; while :; do i=$((i+1)); echo \"terminal {i} line $i\"; sleep 1; done")
        } else {
            format!("echo 'terminal {i} ready'; exec sleep 1000000")
        };
        let kind = NodeKind::Terminal {
            cwd: folder.to_path_buf(),
            command: Some(vec!["sh".into(), "-c".into(), script]),
            tmux_session: None,
        };
        let rect = Rect::new(
            (i % 10) as f64 * (TERMINAL.0 + GAP),
            terminals_y + (i / 10) as f64 * (TERMINAL.1 + GAP),
            TERMINAL.0,
            TERMINAL.1,
        );
        nodes.push(node(format!("term{i}"), kind, format!("terminal {i}"), rect, nodes.len()));
    }
    for i in 0..200 {
        let rect =
            Rect::new(NOTES_X + (i % 20) as f64 * (NOTE.0 + 20.0), (i / 20) as f64 * (NOTE.1 + 20.0), NOTE.0, NOTE.1);
        let kind = NodeKind::Sticky { text: format!("Note {i}\nthree lines\nof text") };
        nodes.push(node(format!("note{i}"), kind, format!("note {i}"), rect, nodes.len()));
    }
    nodes
}

fn write_fixture(data: &Path, folder: &Path, base: &str, view: &str) -> Result<()> {
    std::fs::create_dir_all(data)?;
    std::fs::create_dir_all(folder)?;
    let camera = match view {
        // The pages' top row (the animating ones) fits a 1280-pixel window, readable.
        "pages" => model::Camera { x: -40.0, y: -40.0, zoom: 0.55 },
        "notes" => model::Camera { x: NOTES_X - 40.0, y: -40.0, zoom: 1.0 },
        other => bail!("view must be pages or notes, not {other}"),
    };
    let nodes = layout(base, folder);
    let (project, _) = Project::from_nodes(ProjectId::new("scale")?, "scale", folder, camera, nodes, 320)?;
    model::persist::save_layout(&project, None)?;
    let ws = Workspace::from_projects(vec![project], Some(ProjectId::new("scale")?))?;
    model::persist::save_workspace(data, &ws, None)?;
    Ok(())
}

fn write_pages(data: &Path, folder: &Path, url: &str, count: usize) -> Result<()> {
    std::fs::create_dir_all(data)?;
    std::fs::create_dir_all(folder)?;
    let nodes: Vec<Node> = (0..count)
        .map(|i| {
            let rect = Rect::new((i % 4) as f64 * (800.0 + GAP), (i / 4) as f64 * (600.0 + GAP), 800.0, 600.0);
            let kind = NodeKind::browser(url).context("the page URL")?;
            Ok(node(format!("page{i}"), kind, format!("page {i}"), rect, i))
        })
        .collect::<Result<_>>()?;
    let camera = model::Camera { x: -40.0, y: -40.0, zoom: 0.25 };
    let (project, _) = Project::from_nodes(ProjectId::new("memory")?, "memory", folder, camera, nodes, count as i64)?;
    model::persist::save_layout(&project, None)?;
    let ws = Workspace::from_projects(vec![project], Some(ProjectId::new("memory")?))?;
    model::persist::save_workspace(data, &ws, None)?;
    Ok(())
}

fn start(data: &Path, folder: &Path) -> Result<(Runtime, std::sync::Arc<Waker>)> {
    let config = RuntimeConfig {
        data_dir: data.to_path_buf(),
        project: Some(folder.to_path_buf()),
        browser_control: false,
        views_follow_zoom: false,
    };
    let waker = Waker::new();
    let rt = headless::start_runtime(config, cef_bridge::DisplayMode::Headless, waker.clone(), None)?;
    Ok((rt, waker))
}

/// (pages live, terminals live) of the active project.
fn live(rt: &Runtime) -> (usize, usize) {
    let Some(p) = rt.project() else { return (0, 0) };
    let mut pages = 0;
    let mut terminals = 0;
    for n in p.nodes() {
        match n.kind {
            NodeKind::Browser { .. } => {
                let loaded = rt.browsers().for_node(&n.id).is_some_and(|(_, b)| b.is_created() && !b.is_loading());
                pages += usize::from(loaded);
            }
            NodeKind::Terminal { .. } => {
                // The app's own grid: `read_text` would ask tmux (a subprocess per call).
                let mut shown = false;
                if let Some(t) = rt.terminals().get(&n.id) {
                    t.term.lock_screen(&mut |screen| shown = screen.read_text(200).contains("terminal"));
                }
                terminals += usize::from(shown);
            }
            _ => {}
        }
    }
    (pages, terminals)
}

fn wait_live(rt: &mut Runtime, waker: &Waker, within: Duration) -> Result<()> {
    let ok = rt.run_until(waker, within, |rt| {
        let (p, t) = live(rt);
        p == 20 && t == 100 && rt.browsers().settled(Duration::ZERO)
    });
    if !ok {
        let (p, t) = live(rt);
        bail!("after {within:?}: {p} of 20 pages and {t} of 100 terminals live");
    }
    Ok(())
}

fn restore(data: &Path, folder: &Path) -> Result<()> {
    let t0 = Instant::now();
    let (mut rt, waker) = start(data, folder)?;
    let engine = t0.elapsed();
    let count = |kind: &str| rt.project().map_or(0, |p| p.nodes().filter(|n| n.kind.name() == kind).count());
    let (pages, terminals) = (count("browser"), count("terminal"));
    let (mut terminals_at, mut pages_at) = (None, None);
    let mut last = (usize::MAX, usize::MAX);
    rt.run_until(&waker, Duration::from_secs(120), |rt| {
        let (p, t) = live(rt);
        if std::env::var_os("SCALE_TRACE").is_some() && (p, t) != last {
            last = (p, t);
            println!("  {:6.2} s: {p} pages, {t} terminals live", t0.elapsed().as_secs_f64());
        }
        if t == terminals && terminals_at.is_none() {
            terminals_at = Some(t0.elapsed());
        }
        if p == pages && rt.browsers().settled(Duration::ZERO) && pages_at.is_none() {
            pages_at = Some(t0.elapsed());
        }
        terminals_at.is_some() && pages_at.is_some()
    });
    let (Some(terminals_at), Some(pages_at)) = (terminals_at, pages_at) else {
        let (p, t) = live(&rt);
        bail!("after 120 s: {p} of {pages} pages and {t} of {terminals} terminals live");
    };
    let total = t0.elapsed();
    println!(
        "  terminals all live at {:.2} s, pages all loaded (the visible ones painted) at {:.2} s",
        terminals_at.as_secs_f64(),
        pages_at.as_secs_f64()
    );
    let nodes = rt.project().map_or(0, |p| p.nodes().count());
    println!(
        "restore, headless: {nodes} nodes live in {:.2} s (engine start {:.2} s, workspace to all live {:.2} s)",
        total.as_secs_f64(),
        engine.as_secs_f64(),
        (total - engine).as_secs_f64()
    );
    println!("restore ratio to the 3 s goal: {:.2}x", total.as_secs_f64() / 3.0);
    rt.shutdown();
    Ok(())
}

/// The camera's top-left corners of a serpentine sweep over `bounds` at `zoom`.
fn sweep(bounds: &Rect, zoom: f64, frames: usize) -> Vec<(f64, f64)> {
    let (vw, vh) = (f64::from(VIEW.0) / zoom, f64::from(VIEW.1) / zoom);
    let rows = ((bounds.h / vh).ceil() as usize).max(1);
    let span = (bounds.w - vw).max(0.0);
    let per_row = (frames / rows).max(1);
    let mut out = vec![];
    for r in 0..rows {
        let y = bounds.y + r as f64 * vh;
        for i in 0..per_row {
            let f = i as f64 / (per_row.max(2) - 1) as f64;
            let f = if r % 2 == 0 { f } else { 1.0 - f };
            out.push((bounds.x + f * span, y));
        }
    }
    out
}

fn pan(data: &Path, folder: &Path, frames: usize) -> Result<()> {
    let (mut rt, waker) = start(data, folder)?;
    // The baseline (no view) is every page live, as before the runtime knew the view.
    rt.keep_pages_live(true);
    wait_live(&mut rt, &waker, Duration::from_secs(120))?;
    rt.set_gfx(Some(Gfx::headless().map_err(|e| anyhow::anyhow!("GPU: {e}"))?));
    let gfx = rt.gfx().context("GPU gone")?;
    let device = gfx.gpu.device.clone();
    let format = bench_main::TARGET_FORMAT;
    let (_target, view) = bench_main::render_target(&device, VIEW, "bench view");
    let bounds =
        rt.project().and_then(|p| p.nodes().map(|n| n.rect).reduce(|a, b| a.union(&b))).context("an empty canvas")?;
    let zoom = 0.5;
    let path = sweep(&bounds, zoom, frames);
    let mut results = vec![];
    for view_aware in [true, false] {
        let mut ms = vec![];
        let mut visible = 0usize;
        for (i, &(x, y)) in path.iter().enumerate() {
            let camera = Camera::new(Vec2::new(x as f32, y as f32), zoom as f32);
            let t = Instant::now();
            if view_aware {
                let r = camera.visible_world_rect(Vec2::new(VIEW.0 as f32, VIEW.1 as f32));
                let world = Rect::new(f64::from(r.x), f64::from(r.y), f64::from(r.w), f64::from(r.h));
                rt.set_on_screen(Some(OnScreen::new(world, zoom)));
            } else {
                rt.set_on_screen(None);
            }
            rt.tick();
            let mut gfx = rt.take_gfx().context("GPU gone")?;
            rt.upload_frames(&mut gfx.renderer, false);
            let scene = if view_aware { rt.scene_on_screen() } else { rt.scene() };
            let r = gfx.renderer.render(
                &scene,
                &camera,
                RenderTarget {
                    view: &view,
                    format,
                    width: VIEW.0,
                    height: VIEW.1,
                    reuse: canvas_render::Reuse::Nothing,
                },
            );
            device
                .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
                .map_err(|e| anyhow::anyhow!("poll: {e}"))?;
            let took = t.elapsed().as_secs_f64() * 1e3;
            rt.set_gfx(Some(gfx));
            let stats = r.map_err(|e| anyhow::anyhow!("render: {e}"))?;
            // The first frames fill the texture caches.
            if i >= 10 {
                ms.push(took);
                visible += stats.nodes_visible;
            }
        }
        let n = ms.len().max(1);
        let (median, p99) = stats(ms);
        results.push((median, p99));
        println!(
            "pan across all {} nodes at zoom {zoom}, {}x{} ({}): median {median:.2} ms, p99 {p99:.2} ms, {:.1} nodes in view per frame",
            rt.project().map_or(0, |p| p.nodes().count()),
            VIEW.0,
            VIEW.1,
            if view_aware { "the runtime told what the view shows, as the window does" } else { "no view: every page live and uploaded, every terminal read" },
            visible as f64 / n as f64
        );
    }
    let info = rt.gfx().map(|g| g.gpu.describe()).unwrap_or_default();
    println!("adapter: {info}; {} frames each", path.len());
    println!(
        "pan ratio (view-aware / no view): median {:.2}x, p99 {:.2}x",
        results[0].0 / results[1].0,
        results[0].1 / results[1].1
    );
    rt.shutdown();
    Ok(())
}

fn main() -> std::process::ExitCode {
    bench_main::run("scale-bench", |args| {
        let path = |i: usize| PathBuf::from(&args[i]);
        match args.get(1).map(String::as_str) {
            Some("fixture") if args.len() == 6 => write_fixture(&path(2), &path(3), &args[4], &args[5]),
            Some("pages") if args.len() == 6 => match args[5].parse() {
                Ok(n) => write_pages(&path(2), &path(3), &args[4], n),
                Err(_) => Err(anyhow::anyhow!("N must be a number, not {}", args[5])),
            },
            Some("restore") if args.len() == 4 => restore(&path(2), &path(3)),
            Some("pan") if args.len() >= 4 => pan(&path(2), &path(3), args.get(4).and_then(|n| n.parse().ok()).unwrap_or(400)),
            _ => Err(anyhow::anyhow!(
                "usage: scale-bench fixture DATA_DIR PROJECT_DIR BASE_URL pages|notes | scale-bench pages DATA_DIR PROJECT_DIR URL N | scale-bench restore DATA_DIR PROJECT_DIR | scale-bench pan DATA_DIR PROJECT_DIR [FRAMES]"
            )),
        }
    })
}
