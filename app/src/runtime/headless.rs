//! The headless main loop: the same runtime as the window, no X server,
//! rendering only when a picture is asked for.

use super::{AppHandle, LoopHost, Runtime, RuntimeConfig, Waker};
use cef_bridge::{ChromiumLog, DisplayMode, Engine, EngineConfig, Profile};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Builds the engine and the runtime for a mode (shared by window and headless).
/// Chromium's log goes to `chromium_log`, by default `chromium.log` in the profile.
pub fn start_runtime(
    config: RuntimeConfig,
    display: DisplayMode,
    waker: Arc<Waker>,
    chromium_log: Option<PathBuf>,
) -> anyhow::Result<Runtime> {
    let (events_tx, events_rx) = crossbeam_channel::unbounded();
    let host = LoopHost::new(events_tx, waker.clone());
    let engine_config = EngineConfig {
        profile: Profile::Persistent(crate::paths::browser_profile(&config.data_dir)),
        display,
        downloads_dir: crate::paths::downloads(&config.data_dir),
        log_file: chromium_log,
        log_level: ChromiumLog::Warning,
    };
    let engine = Engine::start(engine_config, host)?;
    let (handle, jobs) = AppHandle::new(waker);
    Ok(Runtime::new(config, Box::new(engine), handle, jobs, events_rx))
}

/// Runs until `stop` becomes true or something asks the runtime to quit.
pub fn run_loop(rt: &mut Runtime, waker: &Waker, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) && !rt.quitting() {
        rt.tick();
        // Headless nothing is presented: a frame is rendered only on request.
        rt.take_redraw();
        let deadline = rt.next_deadline().max(Instant::now());
        waker.wait_until(deadline);
    }
}
