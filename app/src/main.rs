//! The `termsprawl` binary: CLI entry point.
//!
//! The same executable is Chromium's helper subprocess, so the very first
//! thing `main` does is hand control to CEF when it was started as one.

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
    Shot(ShotArgs),
}

#[derive(clap::Args, Debug)]
struct ShotArgs {
    /// Page to capture (bare hosts become https://; only http, https, about:blank).
    #[arg(required_unless_present = "canvas")]
    url: Option<String>,
    /// Render this project folder's whole canvas (live browser content included) instead of a page.
    #[arg(long, value_name = "PROJECT_FOLDER", conflicts_with_all = ["url", "full_page", "selector"])]
    canvas: Option<PathBuf>,
    /// Output PNG file.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
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
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
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
    init_logging();
    raise_fd_limit();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("termsprawl: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Command::Shot(a)) if a.canvas.is_some() => {
            let folder = a.canvas.clone().unwrap_or_default();
            let (w, h) = termsprawl::canvas_shot::run(
                &folder,
                &a.output,
                (a.size.width, a.size.height),
                Duration::from_secs(a.timeout.max(1)),
            )?;
            eprintln!("termsprawl: wrote {} ({w}x{h})", a.output.display());
            Ok(())
        }
        Some(Command::Shot(a)) => {
            let req = shot::ShotRequest {
                url: a.url.unwrap_or_default(),
                output: a.output,
                size: a.size,
                wait: a.wait,
                full_page: a.full_page,
                selector: a.selector,
                timeout: Duration::from_secs(a.timeout.max(1)),
            };
            let (w, h) = shot::run(&req)?;
            eprintln!("termsprawl: wrote {} ({w}x{h})", req.output.display());
            Ok(())
        }
        None => run_app(cli.app),
    }
}

fn run_app(args: AppArgs) -> Result<()> {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use termsprawl::runtime::{headless, RuntimeConfig, Waker};
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
        return termsprawl::window::run(config, stop, start, |services, rt| services.close(rt));
    }
    let config = RuntimeConfig {
        data_dir,
        project: args.project.clone(),
        browser_control: args.agent_browser_control,
        views_follow_zoom: false,
    };
    let waker = Waker::new();
    let mut rt = headless::start_runtime(config, display, waker.clone())?;
    let stop = Arc::new(AtomicBool::new(false));
    if let Err(e) = termsprawl::runtime::stop_signals::install(stop.clone(), waker.clone()) {
        rt.shutdown();
        return Err(anyhow::Error::new(e).context("cannot install signal handlers"));
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
