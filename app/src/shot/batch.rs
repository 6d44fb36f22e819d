//! Many shots in one engine start: the main thread owns the engine (CEF is
//! single-threaded and starts once per process) and pumps it; a bounded pool
//! of workers drives one page each through DevTools, so several pages load
//! and render at once. One entry's failure is its own: the others go on.
//! Canvas entries run after the pages, one at a time, on the main thread
//! (each is a whole runtime around the same engine).

use super::compare::CompareReport;
use super::error::ShotError;
use super::page::{self, EngineLink, PageJob};
use super::png_file::{png_size, write_atomically};
use super::request::{ShotRequest, Target};
use crate::runtime::{LoopHost, Waker};
use cef_bridge::{
    url_policy, BrowserEvent, BrowserHandle, BrowserId, BrowserOptions, ChromiumLog, DisplayMode, Engine, EngineConfig,
    Profile,
};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a batch runs.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Pages captured at once (at least 1).
    pub jobs: usize,
    /// Draw a one-line progress display on stderr (only when it is a terminal).
    pub progress: bool,
    /// Write each shot over its baseline instead of comparing.
    pub update_baselines: bool,
    /// Keep Chromium's log in this file (None: discarded with the temporary profile).
    pub chromium_log: Option<PathBuf>,
}

/// Pages at once when not told: one per core, at least 2 (a page mostly
/// waits on its renderer and the network), at most 8 (each is a renderer process).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8)
}

/// What became of one entry.
#[derive(Debug)]
pub struct Outcome {
    /// Index in the batch.
    pub index: usize,
    /// The written PNG's pixel size, or why there is none.
    pub result: Result<(u32, u32), ShotError>,
    /// The comparison with the entry's baseline, when it has one and the shot was written.
    pub compare: Option<CompareReport>,
    /// Wall time of this entry.
    pub elapsed: Duration,
}

impl Outcome {
    /// Written, and equal to its baseline within the limits (or the baseline updated).
    pub fn ok(&self) -> bool {
        self.result.is_ok() && self.compare.as_ref().is_none_or(CompareReport::ok)
    }
}

/// Runs every request in one engine start; outcomes in request order. Only
/// an engine that does not start is an error of the whole batch.
pub fn run(requests: &[ShotRequest], options: &BatchOptions) -> Result<Vec<Outcome>, ShotError> {
    let temp = tempfile::Builder::new()
        .prefix("termsprawl-shot-")
        .tempdir()
        .map_err(|e| ShotError::Setup(format!("cannot create a temporary directory: {e}")))?;
    super::fonts::use_fixed_fonts(temp.path())
        .map_err(|e| ShotError::Setup(format!("cannot write the shot font configuration: {e}")))?;
    let waker = Waker::new();
    let (events_tx, events_rx) = unbounded();
    // stderr is for the one-line reasons: Chromium's output goes to its log.
    let config = EngineConfig {
        profile: Profile::Ephemeral,
        display: DisplayMode::Headless,
        downloads_dir: temp.path().join("downloads"),
        log_file: options.chromium_log.clone(),
        log_level: ChromiumLog::Warning,
    };
    let engine = Rc::new(Engine::start(config, LoopHost::new(events_tx, waker.clone()))?);
    let mut progress = Progress::new(requests.len(), options.progress && cef_bridge::AppStderr::is_terminal());
    let pages: Vec<usize> = (0..requests.len()).filter(|&i| matches!(requests[i].target, Target::Url(_))).collect();
    let mut outcomes = run_pages(&engine, &events_rx, &waker, requests, &pages, options, &mut progress);
    for (index, req) in requests.iter().enumerate() {
        if let Target::Canvas(folder) = &req.target {
            let started = Instant::now();
            let size = (req.size.width, req.size.height);
            let png =
                crate::canvas_shot::render(engine.clone(), events_rx.clone(), waker.clone(), folder, size, req.timeout)
                    .map_err(|e| ShotError::Canvas(format!("{e:#}")));
            let (result, compare) = finish(req, png, options.update_baselines);
            let o = Outcome { index, result, compare, elapsed: started.elapsed() };
            progress.done(&o);
            outcomes.push(o);
        }
    }
    progress.finish();
    outcomes.sort_by_key(|o| o.index);
    match Rc::try_unwrap(engine) {
        Ok(engine) => engine.shutdown(),
        Err(_) => tracing::warn!("the shot engine is still shared at the end; dropped without an orderly shutdown"),
    }
    Ok(outcomes)
}

/// Saves a captured PNG and compares it with its baseline.
fn finish(
    req: &ShotRequest,
    png: Result<Vec<u8>, ShotError>,
    update: bool,
) -> (Result<(u32, u32), ShotError>, Option<CompareReport>) {
    let saved = png.and_then(|png| save(req, &png).map(|size| (size, png)));
    match saved {
        Ok((size, png)) => {
            let compare = req.compare.as_ref().map(|spec| super::compare::check(&png, &req.output, spec, update));
            (Ok(size), compare)
        }
        Err(e) => (Err(e), None),
    }
}

/// Writes the PNG of `req` whole (or not at all); its pixel size.
fn save(req: &ShotRequest, png: &[u8]) -> Result<(u32, u32), ShotError> {
    let size = png_size(png).ok_or_else(|| ShotError::DevTools("the engine returned an unreadable PNG".into()))?;
    if let Some(dir) = req.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| ShotError::Write { path: req.output.clone(), source })?;
    }
    write_atomically(&req.output, png).map_err(|source| ShotError::Write { path: req.output.clone(), source })?;
    Ok(size)
}

/// A worker's request for a browser.
struct Create {
    width: u32,
    height: u32,
    scale: u32,
    reply: Sender<Result<BrowserHandle, ShotError>>,
}

/// The workers' way to the main thread.
struct Link {
    create: Sender<Create>,
    waker: Arc<Waker>,
    blocked: Mutex<HashMap<BrowserId, String>>,
}

impl EngineLink for Link {
    fn create_browser(&self, width: u32, height: u32, scale: u32) -> Result<BrowserHandle, ShotError> {
        let (reply, rx) = bounded(1);
        self.create
            .send(Create { width, height, scale, reply })
            .map_err(|_| ShotError::DevTools("the engine stopped".into()))?;
        self.waker.wake();
        rx.recv().map_err(|_| ShotError::DevTools("the engine stopped".into()))?
    }
    fn blocked_navigation(&self, id: BrowserId) -> Option<String> {
        self.blocked.lock().get(&id).cloned()
    }
}

/// One page entry, on a worker: the PNG.
fn shoot_page(link: &Link, req: &ShotRequest) -> Result<Vec<u8>, ShotError> {
    let Target::Url(address) = &req.target else {
        return Err(ShotError::DevTools("not a page entry".into()));
    };
    let url = url_policy::normalize_address(address)?;
    let job = PageJob {
        url: &url,
        size: req.size,
        wait: req.wait,
        full_page: req.full_page,
        selector: req.selector.as_deref(),
        timeout: req.timeout,
        prepare: &req.prepare,
    };
    page::capture(link, &job)
}

/// Captures the page entries `pages` with `jobs` workers while this (main)
/// thread pumps the engine and makes the browsers they ask for.
fn run_pages(
    engine: &Engine,
    events: &Receiver<BrowserEvent>,
    waker: &Arc<Waker>,
    requests: &[ShotRequest],
    pages: &[usize],
    options: &BatchOptions,
    progress: &mut Progress,
) -> Vec<Outcome> {
    let jobs = options.jobs.max(1);
    if pages.is_empty() {
        return Vec::new();
    }
    let (create_tx, create_rx) = unbounded::<Create>();
    let link = Link { create: create_tx, waker: waker.clone(), blocked: Mutex::new(HashMap::new()) };
    let (work_tx, work_rx) = unbounded::<usize>();
    for &i in pages {
        let _ = work_tx.send(i);
    }
    drop(work_tx);
    let (done_tx, done_rx) = unbounded::<Outcome>();
    let mut outcomes = Vec::with_capacity(pages.len());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(pages.len()) {
            let (work_rx, done_tx, link) = (work_rx.clone(), done_tx.clone(), &link);
            scope.spawn(move || {
                while let Ok(index) = work_rx.recv() {
                    let started = Instant::now();
                    // A bug in one entry must not leave the main loop waiting for it.
                    let req = &requests[index];
                    let (result, compare) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        finish(req, shoot_page(link, req), options.update_baselines)
                    }))
                    .unwrap_or_else(|_| (Err(ShotError::DevTools("internal error (panic) in this shot".into())), None));
                    let _ = done_tx.send(Outcome { index, result, compare, elapsed: started.elapsed() });
                    link.waker.wake();
                }
            });
        }
        drop(done_tx);
        let mut last_pump = Instant::now();
        while outcomes.len() < pages.len() {
            while let Ok(c) = create_rx.try_recv() {
                let made = engine
                    .create_browser(&BrowserOptions::new(url_policy::ABOUT_BLANK, c.width, c.height))
                    .map_err(ShotError::from)
                    .and_then(|b| {
                        // Before CEF creates it, the scale is only recorded: the first paint is at that scale.
                        let engine_error = |e| ShotError::Engine(cef_bridge::EngineError::Browser(e));
                        if c.scale != 1 {
                            b.set_scale(c.scale as f32).map_err(engine_error)?;
                        }
                        // Focused, as a headless Chromium tab is: a page that focuses an
                        // input shows its caret (what `--caret hide` is for) and
                        // `document.hasFocus()` holds; pages get no focus by default.
                        b.set_focus(true).map_err(engine_error)?;
                        Ok(b)
                    });
                let _ = c.reply.send(made);
            }
            while let Ok(e) = events.try_recv() {
                if let BrowserEvent::NavigationBlocked { id, url } = e {
                    link.blocked.lock().insert(id, url);
                }
            }
            while let Ok(o) = done_rx.try_recv() {
                progress.done(&o);
                outcomes.push(o);
            }
            if outcomes.len() == pages.len() {
                break;
            }
            if Instant::now() >= engine.next_pump_deadline() || last_pump.elapsed() >= engine.pump_interval() {
                engine.pump();
                last_pump = Instant::now();
            }
            waker.wait_until(engine.next_pump_deadline());
        }
    });
    outcomes
}

/// The `\r`-updated progress line on a terminal's stderr.
struct Progress {
    total: usize,
    done: usize,
    failed: usize,
    on: bool,
}

impl Progress {
    fn new(total: usize, on: bool) -> Self {
        Self { total, done: 0, failed: 0, on }
    }

    fn done(&mut self, o: &Outcome) {
        self.done += 1;
        if !o.ok() {
            self.failed += 1;
        }
        if self.on {
            // The app's own stderr: while the engine runs, fd 2 is Chromium's log.
            let mut err = cef_bridge::AppStderr;
            let _ = write!(err, "\r\x1b[2Kshot {}/{} done, {} failed", self.done, self.total, self.failed);
        }
    }

    fn finish(&mut self) {
        if self.on && self.done > 0 {
            let _ = writeln!(cef_bridge::AppStderr);
        }
    }
}
