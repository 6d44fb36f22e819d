//! `termsprawl-engine`: the app and its CLI, started by the `termsprawl`
//! front (app/src/main.rs), which execs it for everything but `diff`.
//!
//! The same executable is Chromium's helper subprocess (CEF starts helpers
//! from /proc/self/exe), so the very first thing `main` does is hand control
//! to CEF when it was started as one.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use termsprawl::shot;

/// An infinite canvas of terminals, browsers and AI agents.
#[derive(Parser, Debug)]
#[command(name = "termsprawl", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    app: AppArgs,
}

/// Options of the app itself (window or headless).
#[derive(clap::Args, Debug, Clone)]
struct AppArgs {
    /// Run without a window (no X server needed): the same canvas, servers and nodes.
    #[arg(long)]
    headless: bool,
    /// Data directory (default: $TERMSPRAWL_DATA_DIR, else $XDG_DATA_HOME/termsprawl).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Open this project folder (created if missing) and make it active.
    #[arg(long)]
    project: Option<PathBuf>,
    /// Let agents drive browser nodes (persisted setting "Enable agent browser control").
    #[arg(long)]
    agent_browser_control: bool,
    /// Serve the CDP facade (browser nodes as page targets for Puppeteer/Playwright).
    #[arg(long)]
    cdp: bool,
    /// Put an external agent node with this id on the canvas and provision its tool session.
    #[arg(long, value_name = "NODE_ID")]
    agent: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Render a page (or a saved canvas with --canvas) off-screen to a PNG and exit.
    Shot(Box<ShotArgs>),
    /// Compare two PNGs: exit 0 when equal within the limits, 1 when different, 2 on error.
    Diff(termsprawl::visual_diff::DiffArgs),
}

#[derive(clap::Args, Debug)]
struct ShotArgs {
    /// Page to capture (bare hosts become https://; only http, https, about:blank).
    #[arg(required_unless_present_any = ["canvas", "manifest"])]
    url: Option<String>,
    /// Render this project folder's whole canvas (live browser content included) instead of a page.
    #[arg(long, value_name = "PROJECT_FOLDER", conflicts_with_all = ["url", "full_page", "selector"])]
    canvas: Option<PathBuf>,
    /// Take every shot listed in this YAML (or .json) manifest, in one engine start.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["url", "canvas", "output", "full_page", "selector", "size", "wait", "timeout"]
    )]
    manifest: Option<PathBuf>,
    /// Output PNG file.
    #[arg(short = 'o', long = "output", required_unless_present = "manifest")]
    output: Option<PathBuf>,
    /// Viewport size in CSS pixels.
    #[arg(long, default_value = "1280x800")]
    size: shot::Size,
    /// When to capture: load, networkidle, or milliseconds after load.
    #[arg(long, default_value = "load")]
    wait: shot::WaitFor,
    /// Capture the whole scrollable page.
    #[arg(long, conflicts_with = "selector")]
    full_page: bool,
    /// Capture only the first element matching this CSS selector.
    #[arg(long)]
    selector: Option<String>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Keep Chromium's log in this file (by default it is discarded with the temporary profile).
    #[arg(long, value_name = "FILE")]
    chromium_log: Option<PathBuf>,
    #[command(flatten)]
    prepare: PrepareArgs,
    /// Pages captured at once with --manifest (default: from the core count).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: Option<u16>,
    /// Write a JSON report of every --manifest entry here.
    #[arg(long, value_name = "FILE", requires = "manifest")]
    report: Option<PathBuf>,
    #[command(flatten)]
    compare: CompareArgs,
}

/// Comparing shots with committed baselines.
#[derive(clap::Args, Debug)]
struct CompareArgs {
    /// Compare the shot with this baseline PNG: exit 1 and write <output stem>.diff.png beside it when it differs.
    #[arg(long, value_name = "BASELINE.png", conflicts_with = "manifest")]
    compare: Option<PathBuf>,
    /// Write each shot over its baseline instead of comparing (a missing baseline is created).
    #[arg(long)]
    update_baselines: bool,
    /// Per-pixel colour distance (0..1) below which pixels count as equal [default: 0.1].
    #[arg(long, value_name = "T")]
    threshold: Option<f64>,
    /// Pass with at most this many differing pixels [default: 0].
    #[arg(long, value_name = "N")]
    max_diff_pixels: Option<u64>,
    /// Pass with at most this share (0..1) of differing pixels.
    #[arg(long, value_name = "R")]
    max_diff_ratio: Option<f64>,
    /// Leave anti-aliased pixels out of the count.
    #[arg(long)]
    ignore_antialiasing: bool,
    /// Write a JUnit XML report (one test case per shot) here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

impl CompareArgs {
    /// The limits, checked (a manifest entry may override each).
    fn limits(&self) -> Result<shot::compare::CompareLimits, String> {
        for (name, v) in [("--threshold", self.threshold), ("--max-diff-ratio", self.max_diff_ratio)] {
            if let Some(x) = v.filter(|x| !(0.0..=1.0).contains(x)) {
                return Err(format!("{name} must be within 0..=1, not {x}"));
            }
        }
        Ok(shot::compare::CompareLimits {
            threshold: self.threshold,
            max_diff_pixels: self.max_diff_pixels,
            max_diff_ratio: self.max_diff_ratio,
            ignore_antialiasing: self.ignore_antialiasing.then_some(true),
        })
    }
}

/// Deterministic-pixel options of a page shot.
#[derive(clap::Args, Debug)]
struct PrepareArgs {
    /// disabled: finish finite CSS animations and transitions, cancel infinite ones (as Playwright does).
    #[arg(long, value_enum, value_name = "allow|disabled", conflicts_with = "canvas")]
    animations: Option<shot::prepare::Animations>,
    /// hide: make the text caret transparent.
    #[arg(long, value_enum, value_name = "initial|hide", conflicts_with = "canvas")]
    caret: Option<shot::prepare::Caret>,
    /// Emulate prefers-color-scheme.
    #[arg(long, value_enum, value_name = "light|dark", conflicts_with = "canvas")]
    color_scheme: Option<shot::prepare::ColorScheme>,
    /// Device scale factor: 2 gives twice the pixels each way.
    #[arg(long, value_name = "1|2", conflicts_with = "canvas")]
    scale: Option<shot::prepare::Scale>,
    /// Wait until this selector matches a visible element before capturing.
    #[arg(long, value_name = "SELECTOR", conflicts_with = "canvas")]
    wait_for: Option<String>,
    /// Run this script in the page before capturing (awaited if it returns a promise); a throw fails the shot.
    #[arg(long, value_name = "CODE", conflicts_with = "canvas")]
    js: Option<String>,
    /// Hide the elements matching this selector (visibility: hidden); repeatable.
    #[arg(long, value_name = "SELECTOR", conflicts_with = "canvas")]
    hide: Vec<String>,
    /// Cover the elements matching this selector with a solid box; repeatable.
    #[arg(long, value_name = "SELECTOR", conflicts_with = "canvas")]
    mask: Vec<String>,
    /// The masks' CSS colour.
    #[arg(long, value_name = "COLOR", default_value = shot::prepare::DEFAULT_MASK_COLOR)]
    mask_color: String,
}

impl PrepareArgs {
    fn into_prepare(self) -> shot::prepare::Prepare {
        shot::prepare::Prepare {
            animations: self.animations.unwrap_or_default(),
            caret: self.caret.unwrap_or_default(),
            color_scheme: self.color_scheme,
            scale: self.scale.unwrap_or_default(),
            wait_for: self.wait_for,
            js: self.js,
            hide: self.hide,
            mask: self.mask,
            mask_color: self.mask_color,
        }
    }

    /// The options given, by flag name (a manifest sets them per entry instead).
    fn given(&self) -> Vec<&'static str> {
        [
            (self.animations.is_some(), "--animations"),
            (self.caret.is_some(), "--caret"),
            (self.color_scheme.is_some(), "--color-scheme"),
            (self.scale.is_some(), "--scale"),
            (self.wait_for.is_some(), "--wait-for"),
            (self.js.is_some(), "--js"),
            (!self.hide.is_empty(), "--hide"),
            (!self.mask.is_empty(), "--mask"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }
}

/// The app's log lines and panic messages go to the stderr the process
/// started with: while the browser engine runs, fd 2 is Chromium's log.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(|| cef_bridge::AppStderr).try_init();
    std::panic::set_hook(Box::new(|info| {
        use std::io::Write;
        let thread = std::thread::current();
        let backtrace = std::backtrace::Backtrace::capture();
        let mut out = cef_bridge::AppStderr;
        let _ = writeln!(out, "thread '{}' {info}", thread.name().unwrap_or("<unnamed>"));
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            let _ = writeln!(out, "{backtrace}");
        }
    }));
}

/// Lifts the soft open-file limit to 8192 (or the hard limit): the servers
/// hold up to a few hundred connections each next to Chromium's and the
/// terminals' fds, and a soft limit of 1024 would turn a connection flood
/// into EMFILE. Not higher: shells and tmux inherit it.
fn raise_fd_limit() {
    match rlimit::increase_nofile_limit(8192) {
        Ok(n) => tracing::debug!(limit = n, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "could not raise the open-file limit"),
    }
}

fn main() -> ExitCode {
    if let Some(code) = cef_bridge::run_subprocess_if_child() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // Before any thread starts (allocator.rs says why: RSS creep under load).
    let tuned = termsprawl::allocator::tune();
    init_logging();
    if let Err(e) = tuned {
        tracing::warn!(error = %e, "malloc settings not applied");
    }
    raise_fd_limit();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("termsprawl: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        // The front runs a leading `diff` itself; this is `termsprawl --data-dir D diff …`.
        Some(Command::Diff(a)) => Ok(termsprawl::visual_diff::main(a)),
        Some(Command::Shot(a)) if a.manifest.is_some() => run_manifest(*a),
        Some(Command::Shot(a)) => {
            let a = *a;
            let target = match (a.canvas, a.url) {
                (Some(folder), _) => shot::Target::Canvas(folder),
                (None, url) => shot::Target::Url(url.unwrap_or_default()),
            };
            let mut req = shot::ShotRequest::new(target, a.output.unwrap_or_default());
            req.size = a.size;
            req.wait = a.wait;
            req.full_page = a.full_page;
            req.selector = a.selector;
            req.timeout = Duration::from_secs(a.timeout.max(1));
            req.prepare = a.prepare.into_prepare();
            let limits = match a.compare.limits() {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("termsprawl: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            req.compare = a.compare.compare.clone().map(|baseline| shot::compare::CompareSpec { baseline, limits });
            let started = std::time::Instant::now();
            let outcome = match shot::run(&req, a.compare.update_baselines, a.chromium_log.clone()) {
                Ok(o) => o,
                Err(e) => shot::batch::Outcome { index: 0, result: Err(e), compare: None, elapsed: started.elapsed() },
            };
            if let Some(path) = &a.compare.junit {
                let report =
                    shot::report::Report::new(std::slice::from_ref(&req), std::slice::from_ref(&outcome), 1, 0);
                report.junit().write(path)?;
            }
            let (w, h) = outcome.result?;
            eprintln!("termsprawl: wrote {} ({w}x{h})", req.output.display());
            match outcome.compare {
                // As `termsprawl diff`: 2 when no comparison could be made, 1 when different.
                Some(c) if c.status == shot::compare::CompareStatus::Error => {
                    eprintln!("termsprawl: {}", c.message.unwrap_or_else(|| "comparison failed".into()));
                    Ok(ExitCode::from(2))
                }
                Some(c) if !c.ok() => {
                    let diff = c.diff_image.map(|p| format!("; diff image {}", p.display())).unwrap_or_default();
                    eprintln!("termsprawl: {}{diff}", c.message.unwrap_or_else(|| "comparison failed".into()));
                    Ok(ExitCode::FAILURE)
                }
                Some(c) if c.status == shot::compare::CompareStatus::Updated => {
                    eprintln!("termsprawl: baseline {} updated", c.baseline.display());
                    Ok(ExitCode::SUCCESS)
                }
                _ => Ok(ExitCode::SUCCESS),
            }
        }
        None => run_app(cli.app).map(|()| ExitCode::SUCCESS),
    }
}

/// `shot --manifest`: exit 0 when every entry is ok, 1 when one failed, 2 when the manifest is refused or
/// an entry's baseline comparison could not be made (as `termsprawl diff`).
fn run_manifest(a: ShotArgs) -> Result<ExitCode> {
    let path = a.manifest.clone().unwrap_or_default();
    if let Some(flag) = a.prepare.given().first() {
        eprintln!("termsprawl: {flag} applies to one shot; in a manifest set it per entry or under defaults");
        return Ok(ExitCode::from(2));
    }
    let limits = match a.compare.limits() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("termsprawl: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let manifest = match shot::manifest::load(&path, limits) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("termsprawl: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let jobs = a.jobs.map_or_else(shot::batch::default_jobs, usize::from);
    let started = std::time::Instant::now();
    let options = shot::batch::BatchOptions {
        jobs,
        progress: true,
        update_baselines: a.compare.update_baselines,
        chromium_log: a.chromium_log.clone(),
    };
    let outcomes = match shot::batch::run(&manifest.shots, &options) {
        Ok(o) => o,
        // The engine did not start: every entry failed for that one reason.
        Err(e) => {
            let reason = e.to_string();
            (0..manifest.shots.len())
                .map(|index| shot::batch::Outcome {
                    index,
                    result: Err(shot::ShotError::DevTools(reason.clone())),
                    compare: None,
                    elapsed: Duration::ZERO,
                })
                .collect()
        }
    };
    let report = shot::report::Report::new(&manifest.shots, &outcomes, jobs, started.elapsed().as_millis() as u64);
    for e in report.entries.iter().filter(|e| !e.ok) {
        eprintln!("termsprawl: shots[{}] ({}): {}", e.index, e.file.display(), e.error.as_deref().unwrap_or("failed"));
    }
    if let Some(out) = &a.report {
        report.write(out).with_context(|| format!("cannot write the report {}", out.display()))?;
    }
    if let Some(path) = &a.compare.junit {
        report.junit().write(path)?;
    }
    println!("{}", report.summary());
    let no_comparison =
        outcomes.iter().any(|o| o.compare.as_ref().is_some_and(|c| c.status == shot::compare::CompareStatus::Error));
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else if no_comparison {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    })
}

fn run_app(args: AppArgs) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use termsprawl::runtime::stop_signals::StopSignals;
    use termsprawl::runtime::{headless, RuntimeConfig, Waker};
    // Before any thread exists (the engine's included): see stop_signals.
    let signals = StopSignals::block().context("cannot block the stop signals")?;
    // After the block: the thread inherits it (a soak run's SIGTERM once
    // landed on this thread, started earlier, and killed the app uncleanly).
    if let Err(e) = termsprawl::allocator::spawn_trimmer() {
        tracing::warn!(error = %e, "could not start the malloc trim thread");
    }
    let data_dir = termsprawl::paths::data_dir(args.data_dir.as_deref());
    std::fs::create_dir_all(&data_dir).with_context(|| format!("cannot create data dir {}", data_dir.display()))?;
    let display = if args.headless { cef_bridge::DisplayMode::Headless } else { cef_bridge::DisplayMode::detect() };
    if display == cef_bridge::DisplayMode::Headless && !args.headless {
        anyhow::bail!("no display found (DISPLAY is not set): run under X (or Xvfb), or pass --headless");
    }
    if !args.headless {
        let config = RuntimeConfig {
            data_dir,
            project: args.project.clone(),
            browser_control: args.agent_browser_control,
            views_follow_zoom: true,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let service_options = termsprawl::runtime::services::ServiceOptions {
            agents: args.agent.clone(),
            enable_browser_control: args.agent_browser_control,
            cdp: args.cdp,
        };
        // The same servers as headless, started once the runtime exists and closed before the engine stops.
        let start = move |rt: &mut termsprawl::runtime::Runtime| -> Result<termsprawl::runtime::services::Services> {
            let services = termsprawl::runtime::services::start_services(rt, &service_options)?;
            println!("termsprawl: agent tool server {} (data dir {})", services.tool_url(), rt.data_dir().display());
            services.cdp.announce();
            Ok(services)
        };
        return termsprawl::window::run(config, signals, stop, start, |services, rt| services.close(rt));
    }
    let config = RuntimeConfig {
        data_dir,
        project: args.project.clone(),
        browser_control: args.agent_browser_control,
        views_follow_zoom: false,
    };
    let waker = Waker::new();
    let stop = Arc::new(AtomicBool::new(false));
    // A signal during the engine's start stays pending until this thread takes it.
    signals.watch(stop.clone(), waker.clone()).context("cannot start the stop-signal thread")?;
    let mut rt = headless::start_runtime(config, display, waker.clone(), None)?;
    termsprawl::runtime::stop_signals::warn_if_unblocked();
    if stop.load(Ordering::Relaxed) {
        rt.shutdown();
        return Ok(());
    }
    println!("termsprawl: headless, data dir {}", rt.data_dir().display());
    let service_options = termsprawl::runtime::services::ServiceOptions {
        agents: args.agent.clone(),
        enable_browser_control: args.agent_browser_control,
        cdp: args.cdp,
    };
    let services = match termsprawl::runtime::services::start_services(&mut rt, &service_options) {
        Ok(s) => s,
        Err(e) => {
            rt.shutdown();
            return Err(e.into());
        }
    };
    println!("termsprawl: agent tool server {} (data dir {})", services.tool_url(), rt.data_dir().display());
    services.cdp.announce();
    headless::run_loop(&mut rt, &waker, &stop);
    services.close(&mut rt);
    rt.shutdown();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
