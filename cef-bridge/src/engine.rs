//! Engine start-up, the external message pump, and shutdown.
//!
//! CEF runs on the app's main thread with `external_message_pump`: CEF says
//! when it wants [`Engine::pump`] called (from any thread, through
//! [`EngineHost::schedule_pump`], which the app wires to its event loop's
//! wake-up), and the app must also pump at least every
//! [`MAX_PUMP_INTERVAL`](crate::MAX_PUMP_INTERVAL) or CEF stalls after initialisation.
//!
//! The engine's state lives in an [`EngineContext`] that every CEF handler
//! object holds; of it, only [`STARTED`] is process-wide (the crate doc
//! names the crate's other statics, which are not the engine's).

use crate::browser::{check_size, BrowserError, BrowserHandle, BrowserOptions};
use crate::context::EngineContext;
use crate::downloads::Downloads;
use crate::handlers::{BridgeApp, BridgeClient};
use crate::host::EngineHost;
use crate::stderr::StderrToLog;
use crate::switches::{switches_for, DisplayMode};
use crate::url_policy;
use cef::{args::Args, App, CefStringUtf16};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Engine errors.
#[derive(Debug, Error)]
pub enum EngineError {
    /// CEF runs once per process.
    #[error("the browser engine was already started in this process")]
    AlreadyStarted,
    /// Another process holds the profile.
    #[error("browser profile {0} is in use by another termsprawl instance")]
    ProfileInUse(PathBuf),
    /// A file-system step failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Path involved.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// `cef_initialize` failed.
    #[error(
        "CEF failed to initialise (exit code {0}); is third_party/cef complete and are its apt libraries installed?"
    )]
    InitializeFailed(i32),
    /// `on_context_initialized` never came.
    #[error("CEF did not finish initialising within {0:?}")]
    InitTimeout(Duration),
    /// Creating a browser failed.
    #[error(transparent)]
    Browser(#[from] BrowserError),
    /// A browser was asked for in an isolated context that is not live.
    #[error("no isolated browser context {0}")]
    NoSuchContext(crate::RequestContextId),
    /// CEF refused to create an isolated request context.
    #[error("CEF could not create an isolated browser context")]
    ContextCreateFailed,
    /// A site permission was set for something that is not an origin.
    #[error("{0:?} is not an origin (scheme://host[:port])")]
    BadOrigin(String),
}

/// Where the browser profile (cookies, logins, cache) lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profile {
    /// A persistent profile directory; one instance at a time.
    Persistent(PathBuf),
    /// A throw-away profile in a temporary directory, removed at shutdown.
    Ephemeral,
}

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Browser profile.
    pub profile: Profile,
    /// Platform flags.
    pub display: DisplayMode,
    /// Where downloads are saved.
    pub downloads_dir: PathBuf,
    /// Chromium log file, emptied at start (None: `chromium.log` in the
    /// profile, or in the temporary profile and removed with it). Every
    /// Chromium process's output goes there, none to the app's stderr.
    pub log_file: Option<PathBuf>,
    /// Least severe Chromium message logged.
    pub log_level: ChromiumLog,
}

/// How much Chromium logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChromiumLog {
    /// Warnings and worse (the default for the app).
    #[default]
    Warning,
    /// Errors and worse.
    Error,
    /// Only fatal errors.
    Fatal,
}

/// Whether CEF was started in this process. A static because CEF is: it
/// initialises once per process and cannot be started again even after
/// shutdown, so this must outlive every [`Engine`].
static STARTED: AtomicBool = AtomicBool::new(false);

// ------------------------------------------------------------------ subprocess entry

/// Runs CEF's helper-process logic when this process is a Chromium child
/// (renderer, GPU, utility, zygote). Returns the exit code to exit with, or
/// None in the browser (main) process. Call it first thing in `main`.
pub fn run_subprocess_if_child() -> Option<i32> {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if is_child_argv(&argv) {
        prepare_child();
    }
    // CEF expects execute_process in every process, the browser process included
    // (there it returns -1 at once); children run their whole life inside it.
    let args = Args::new();
    let mut app = App::new(BridgeApp::create(None));
    let code = cef::execute_process(Some(args.as_main_args()), Some(&mut app), std::ptr::null_mut());
    (code >= 0).then_some(code)
}

/// Whether argv is a Chromium child's: every one carries `--type=<kind>`.
fn is_child_argv(argv: &[std::ffi::OsString]) -> bool {
    argv.iter().skip(1).any(|a| a.as_encoded_bytes().starts_with(b"--type="))
}

/// A child's start: an empty signal mask. The browser process may block its
/// stop signals in every thread (the app does), and Chromium's launcher passes
/// the launching thread's mask on; a helper must still stop on SIGTERM. (Its
/// fd 2 is already the Chromium log: inherited from the browser process.)
fn prepare_child() {
    // SAFETY: setting this thread's mask to a valid empty set; no other thread exists yet.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
}

// ------------------------------------------------------------------ engine

/// The running browser engine. Lives on the main thread.
pub struct Engine {
    _app: App,
    ctx: Arc<EngineContext>,
    _profile_lock: Option<File>,
    temp_profile: Option<PathBuf>,
    shut_down: bool,
    /// Dropped after the shutdown (fields drop after `Drop::drop`): helpers write to it until they exit.
    _stderr: StderrToLog,
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> EngineError + 'a {
    move |source| EngineError::Io { what, path: path.to_path_buf(), source }
}

fn lock_profile(dir: &Path) -> Result<File, EngineError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io_err("cannot create profile dir", dir))?;
    let path = dir.join("termsprawl-profile.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err("cannot open", &path))?;
    // SAFETY: flock on a file descriptor we own.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        return Err(EngineError::ProfileInUse(dir.to_path_buf()));
    }
    Ok(file)
}

/// Gives SIGINT, SIGTERM and SIGHUP back to their default action.
///
/// `disable_signal_handlers` does not cover them: Chrome's browser start-up
/// installs handlers that begin its own shutdown (close every browser, exit),
/// which in an embedder leaves the process running with SIGTERM reset to the
/// default, so a second one kills it without cleanup. A process that does not
/// take the signals itself (`shot`) then simply ends on the first; the app
/// blocks them in every thread before the engine starts and takes them with
/// `sigwait`, so no handler ever runs there.
fn release_shutdown_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with SIG_DFL is a valid disposition; no handler code runs.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            tracing::warn!(signal = sig, error = %std::io::Error::last_os_error(), "could not reset a Chromium signal handler");
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl Engine {
    /// Starts CEF on the calling (main) thread and waits until it is ready.
    pub fn start(config: EngineConfig, host: Arc<dyn EngineHost>) -> Result<Engine, EngineError> {
        if STARTED.swap(true, Ordering::SeqCst) {
            return Err(EngineError::AlreadyStarted);
        }
        let (profile_lock, temp_profile, root) = match &config.profile {
            Profile::Persistent(dir) => (Some(lock_profile(dir)?), None, dir.clone()),
            Profile::Ephemeral => {
                let dir = std::env::temp_dir().join(format!(
                    "termsprawl-cef-{}-{}",
                    std::process::id(),
                    Instant::now().elapsed().as_nanos()
                ));
                let lock = lock_profile(&dir)?;
                (Some(lock), Some(dir.clone()), dir)
            }
        };
        let ctx = Arc::new(EngineContext::new(
            host,
            switches_for(config.display),
            Downloads::new(config.downloads_dir.clone()),
        ));

        let log_file = config.log_file.clone().unwrap_or_else(|| root.join("chromium.log"));
        // From here to the shutdown, fd 2 is the log: the browser process's own
        // output and every helper's (they inherit it); see `stderr`.
        let stderr = StderrToLog::to(&log_file, true).map_err(io_err("cannot open the Chromium log", &log_file))?;
        let severity = match config.log_level {
            ChromiumLog::Warning => cef::sys::cef_log_severity_t::LOGSEVERITY_WARNING,
            ChromiumLog::Error => cef::sys::cef_log_severity_t::LOGSEVERITY_ERROR,
            ChromiumLog::Fatal => cef::sys::cef_log_severity_t::LOGSEVERITY_FATAL,
        };
        let mut settings = cef::Settings {
            // Chromium refuses to run as root with its sandbox; as a normal user the
            // sandbox works through user namespaces and stays on.
            no_sandbox: i32::from(is_root() || std::env::var_os("TERMSPRAWL_NO_SANDBOX").is_some()),
            windowless_rendering_enabled: 1,
            external_message_pump: 1,
            root_cache_path: CefStringUtf16::from(root.to_string_lossy().as_ref()),
            log_file: CefStringUtf16::from(log_file.to_string_lossy().as_ref()),
            log_severity: cef::LogSeverity::from(severity),
            background_color: 0xFFFF_FFFF,
            // Chromium's crash-dump handlers would shadow the app's own panics and signals.
            disable_signal_handlers: 1,
            ..Default::default()
        };
        if temp_profile.is_none() {
            settings.cache_path = CefStringUtf16::from(root.to_string_lossy().as_ref());
            settings.persist_session_cookies = 1;
        }

        let args = Args::new();
        let mut app = App::new(BridgeApp::create(Some(ctx.clone())));
        let ok = cef::initialize(Some(args.as_main_args()), Some(&settings), Some(&mut app), std::ptr::null_mut());
        if ok != 1 {
            return Err(EngineError::InitializeFailed(cef::get_exit_code()));
        }
        release_shutdown_signals();
        let engine =
            Engine { _app: app, ctx, _profile_lock: profile_lock, temp_profile, shut_down: false, _stderr: stderr };
        let timeout = Duration::from_secs(20);
        if !engine.pump_until(timeout, || engine.ctx.is_ready()) {
            return Err(EngineError::InitTimeout(timeout));
        }
        tracing::info!(display = ?config.display, persistent = engine.temp_profile.is_none(), "browser engine started");
        Ok(engine)
    }

    /// Does CEF's pending work (call when scheduled, and at least every
    /// [`MAX_PUMP_INTERVAL`](crate::MAX_PUMP_INTERVAL)).
    pub fn pump(&self) {
        self.ctx.pump.pumping();
        cef::do_message_loop_work();
        crate::glib_events::dispatch_ready();
    }

    /// The longest the loop may go without pumping now:
    /// [`EAGER_PUMP_INTERVAL`](crate::EAGER_PUMP_INTERVAL) while a DevTools
    /// command is in flight, else [`MAX_PUMP_INTERVAL`](crate::MAX_PUMP_INTERVAL).
    pub fn pump_interval(&self) -> Duration {
        self.ctx.pump.interval()
    }

    /// When the next pump is due (at the latest [`pump_interval`](Self::pump_interval) from now).
    pub fn next_pump_deadline(&self) -> Instant {
        self.ctx.pump.next_deadline()
    }

    /// Waits for the next scheduled pump (at most until `limit`) and pumps.
    pub fn wait_and_pump(&self, limit: Instant) {
        self.ctx.pump.wait_until_due(limit);
        self.pump();
    }

    /// Pumps until `done()` or `timeout`; returns whether `done()` became true.
    pub fn pump_until(&self, timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if done() {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            self.wait_and_pump(end);
        }
    }

    /// Pumps for `duration`.
    pub fn pump_for(&self, duration: Duration) {
        self.pump_until(duration, || false);
    }

    /// Creates an off-screen browser (the URL must pass the policy). The handle is
    /// usable at once; DevTools messages are queued until CEF created it.
    pub fn create_browser(&self, options: &BrowserOptions) -> Result<BrowserHandle, EngineError> {
        let size = check_size(options.width, options.height)?;
        if !url_policy::is_allowed_nav_url(&options.url) {
            return Err(BrowserError::Refused(url_policy::UrlPolicyError::RefusedScheme(
                options.url.split(':').next().unwrap_or("").to_string(),
            ))
            .into());
        }
        let fps = options.frame_rate.clamp(1, 60);
        let mut request_context = match options.context {
            Some(id) => Some(self.ctx.request_contexts.get(id).ok_or(EngineError::NoSuchContext(id))?),
            None => None,
        };
        let shared = self.ctx.new_browser(size, &options.url, None, options.context, fps);
        let window = cef::WindowInfo {
            windowless_rendering_enabled: 1,
            parent_window: 0,
            bounds: cef::Rect { x: 0, y: 0, width: size.0, height: size.1 },
            ..Default::default()
        };
        let settings = cef::BrowserSettings {
            windowless_frame_rate: fps as i32,
            background_color: 0xFFFF_FFFF,
            ..Default::default()
        };
        let mut client = cef::Client::new(BridgeClient::for_browser(self.ctx.clone(), shared.id));
        let ok = cef::browser_host_create_browser(
            Some(&window),
            Some(&mut client),
            Some(&CefStringUtf16::from(options.url.as_str())),
            Some(&settings),
            Option::<&mut cef::DictionaryValue>::None,
            request_context.as_mut(),
        );
        if ok != 1 {
            self.ctx.registry.remove(shared.id);
            return Err(BrowserError::CreateFailed.into());
        }
        Ok(BrowserHandle { shared })
    }

    /// Creates an isolated request context: an in-memory profile of its own
    /// (cookies, storage, cache, permissions) for the browsers created in it.
    pub fn create_request_context(&self) -> Result<crate::RequestContextId, EngineError> {
        self.ctx.request_contexts.create().ok_or(EngineError::ContextCreateFailed)
    }

    /// Drops an isolated context; its browsers must be closed first (each
    /// holds the context until it closes). False when it was not live.
    pub fn dispose_request_context(&self, id: crate::RequestContextId) -> bool {
        self.ctx.request_contexts.remove(id)
    }

    /// Sets `permissions` of `site` (an origin; `None`: every site) to
    /// `setting` for the pages of isolated context `id`, as Chromium's
    /// content settings of that in-memory profile (`crate::site_permissions`).
    /// The person's profile has no such call: its default of denying stays.
    pub fn set_site_permissions(
        &self,
        id: crate::RequestContextId,
        site: Option<&str>,
        permissions: &[crate::SitePermission],
        setting: crate::SiteSetting,
    ) -> Result<(), EngineError> {
        let site = match site {
            Some(s) => Some(crate::site_permissions::site_of(s).ok_or_else(|| EngineError::BadOrigin(s.to_string()))?),
            None => None,
        };
        let loaded: Vec<(String, String)> = self
            .ctx
            .registry
            .all()
            .into_iter()
            .filter(|b| b.context == Some(id))
            .filter_map(|b| crate::site_permissions::site_of(&b.page.lock().url))
            .map(|s| (s.clone(), s))
            .collect();
        match self.ctx.request_contexts.set_permissions(id, site.as_deref(), permissions, setting, &loaded) {
            true => Ok(()),
            false => Err(EngineError::NoSuchContext(id)),
        }
    }

    /// Puts every site permission set in isolated context `id` back to Chromium's default.
    pub fn reset_site_permissions(&self, id: crate::RequestContextId) -> Result<(), EngineError> {
        match self.ctx.request_contexts.reset_permissions(id) {
            true => Ok(()),
            false => Err(EngineError::NoSuchContext(id)),
        }
    }

    /// A handle to a live browser by id (e.g. a popup announced by an event).
    pub fn browser(&self, id: crate::BrowserId) -> Option<BrowserHandle> {
        self.ctx.registry.get(id).map(|shared| BrowserHandle { shared })
    }

    /// Where downloads go, settable from any thread (a CDP client's `Browser.setDownloadBehavior`).
    pub fn download_policy(&self) -> crate::DownloadPolicy {
        self.ctx.downloads.policy()
    }

    /// Every live browser.
    pub fn browsers(&self) -> Vec<BrowserHandle> {
        self.ctx.registry.all().into_iter().map(|shared| BrowserHandle { shared }).collect()
    }

    /// Closes every browser, shuts CEF down and waits for its child processes to exit.
    pub fn shutdown(mut self) {
        self.shutdown_inner();
    }

    fn shutdown_inner(&mut self) {
        if self.shut_down {
            return;
        }
        self.shut_down = true;
        for b in self.browsers() {
            let _ = b.close();
        }
        let closed = self.pump_until(Duration::from_secs(5), || self.ctx.registry.is_empty());
        if !closed {
            tracing::warn!(left = self.ctx.registry.all().len(), "browsers did not close within 5 s");
        }
        // A few more turns let CEF finish posted work before shutdown.
        self.pump_for(Duration::from_millis(50));
        cef::shutdown();
        // The zygotes never exit on their own while this process lives: once CEF
        // is shut down, ask them at once.
        reap_children(Duration::ZERO, Duration::from_secs(2));
        if let Some(dir) = self.temp_profile.take() {
            if let Err(e) = std::fs::remove_dir_all(&dir) {
                tracing::debug!(error = %e, "temporary profile not removed");
            }
        }
        tracing::info!("browser engine stopped");
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown_inner();
    }
}

/// Pids of this process's children that run this same executable (CEF helpers).
pub fn helper_children() -> Vec<i32> {
    helper_processes(false)
}

/// Pids of CEF helpers below this process: children, and with `deep` also
/// their descendants (renderers and utilities forked by the zygotes).
pub fn helper_processes(deep: bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else { return vec![] };
    let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
    let parents: std::collections::HashMap<i32, i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == exe))
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid =
                stat.rfind(')').and_then(|i| stat[i + 2..].split(' ').nth(1)).and_then(|p| p.parse::<i32>().ok())?;
            Some((pid, ppid))
        })
        .collect();
    let below_me = |mut pid: i32| {
        for _ in 0..8 {
            match parents.get(&pid) {
                Some(&pp) if pp == me => return true,
                Some(&pp) if deep => pid = pp,
                _ => return false,
            }
        }
        false
    };
    parents.keys().copied().filter(|&pid| pid != me && below_me(pid)).collect()
}

/// Waits for CEF's helper children to exit, reaping them; stragglers get
/// SIGTERM, then SIGKILL. (The zygotes only notice the browser process is gone
/// when it exits, so after `cef_shutdown` they are told explicitly.)
fn reap_children(grace: Duration, kill_after: Duration) {
    // Renderers and the network service are the zygotes' children: after
    // cef_shutdown they exit by themselves, still flushing profile files. Let
    // them finish before the zygotes go (they would be orphaned, not stopped).
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        let children = helper_children();
        if helper_processes(true).iter().all(|p| children.contains(p) || is_zombie(*p)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let start = Instant::now();
    let mut terminated = false;
    loop {
        for pid in helper_children() {
            let mut status = 0;
            // SAFETY: waitpid on our own child with WNOHANG.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        }
        let kids: Vec<i32> = helper_children().into_iter().filter(|p| !is_zombie(*p)).collect();
        if kids.is_empty() {
            return;
        }
        let waited = start.elapsed();
        if waited >= grace + kill_after {
            tracing::warn!(?kids, "Chromium helpers ignored SIGTERM; killing them");
            for pid in kids {
                // SAFETY: signalling and reaping our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    let mut status = 0;
                    libc::waitpid(pid, &mut status, 0);
                }
            }
            return;
        }
        if waited >= grace && !terminated {
            tracing::debug!(?kids, "asking idle Chromium helpers to exit");
            for pid in &kids {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(*pid, libc::SIGTERM) };
            }
            terminated = true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rfind(')').is_some_and(|i| s[i + 2..].starts_with('Z')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_argv_is_recognised_by_its_type_switch() {
        let argv = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(is_child_argv(&argv(&["/x/termsprawl", "--type=zygote", "--no-sandbox"])));
        assert!(!is_child_argv(&argv(&["/x/termsprawl", "--headless", "--project", "p"])));
        // The program name itself never counts.
        assert!(!is_child_argv(&argv(&["--type=zygote"])));
    }

    #[test]
    fn profile_lock_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let a = lock_profile(dir.path()).unwrap();
        assert!(matches!(lock_profile(dir.path()), Err(EngineError::ProfileInUse(_))));
        drop(a);
        assert!(lock_profile(dir.path()).is_ok());
    }
}
