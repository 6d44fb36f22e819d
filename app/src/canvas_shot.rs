//! `termsprawl shot --canvas FOLDER` (and `canvas:` manifest entries): a saved
//! project's whole canvas, live browser content included, rendered off-screen
//! to a PNG by a runtime built around the shot batch's running engine.

use crate::runtime::engine::{Browser, BrowserEngine};
use crate::runtime::{AppHandle, Runtime, RuntimeConfig, Waker};
use anyhow::{bail, Context, Result};
use cef_bridge::{BrowserEvent, BrowserId, BrowserOptions, Engine, EngineError};
use crossbeam_channel::Receiver;
use parking_lot::Mutex;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The batch's engine lent to one canvas runtime: shutting the runtime down
/// closes the browsers it made, not the engine.
struct LentEngine {
    engine: Rc<Engine>,
    made: Mutex<Vec<BrowserId>>,
}

impl BrowserEngine for LentEngine {
    fn pump(&self) {
        self.engine.pump();
    }
    fn pump_interval(&self) -> Duration {
        self.engine.pump_interval()
    }
    fn next_pump_deadline(&self) -> Instant {
        self.engine.next_pump_deadline()
    }
    fn create_browser(&self, options: &BrowserOptions) -> Result<Browser, EngineError> {
        let b = self.engine.create_browser(options)?;
        self.made.lock().push(b.id());
        Ok(Arc::new(b) as Browser)
    }
    fn browser(&self, id: BrowserId) -> Option<Browser> {
        self.engine.browser(id).map(|b| Arc::new(b) as Browser)
    }
    fn create_context(&self) -> Result<cef_bridge::RequestContextId, EngineError> {
        self.engine.create_request_context()
    }
    fn dispose_context(&self, id: cef_bridge::RequestContextId) -> bool {
        self.engine.dispose_request_context(id)
    }
    fn set_site_permissions(
        &self,
        context: cef_bridge::RequestContextId,
        site: Option<&str>,
        permissions: &[cef_bridge::SitePermission],
        setting: cef_bridge::SiteSetting,
    ) -> Result<(), EngineError> {
        self.engine.set_site_permissions(context, site, permissions, setting)
    }
    fn reset_site_permissions(&self, context: cef_bridge::RequestContextId) -> Result<(), EngineError> {
        self.engine.reset_site_permissions(context)
    }
    fn download_policy(&self) -> cef_bridge::DownloadPolicy {
        self.engine.download_policy()
    }
    fn shutdown(self: Box<Self>) {
        let made = std::mem::take(&mut *self.made.lock());
        let live = |id: &BrowserId| self.engine.browser(*id).is_some();
        for id in &made {
            if let Some(b) = self.engine.browser(*id) {
                let _ = b.close();
            }
        }
        if !self.engine.pump_until(Duration::from_secs(5), || !made.iter().any(live)) {
            tracing::warn!("canvas browsers did not close within 5 s");
        }
    }
}

/// Renders the canvas of the project in `folder` at `size` with `engine`
/// (whose host feeds `events` and wakes `waker`); returns the PNG bytes.
pub fn render(
    engine: Rc<Engine>,
    events: Receiver<BrowserEvent>,
    waker: Arc<Waker>,
    folder: &Path,
    size: (u32, u32),
    timeout: Duration,
) -> Result<Vec<u8>> {
    if !folder.is_dir() {
        bail!("{} is not a project folder", folder.display());
    }
    // A private, throw-away data dir: a CI shot never touches the user's workspace or profile.
    let data = tempfile::tempdir().context("cannot create a temporary data dir")?;
    let config = RuntimeConfig {
        data_dir: data.path().to_path_buf(),
        project: Some(folder.to_path_buf()),
        browser_control: false,
        views_follow_zoom: false,
    };
    let (handle, jobs) = AppHandle::new(waker.clone());
    let lent = Box::new(LentEngine { engine, made: Mutex::new(Vec::new()) });
    let mut rt = Runtime::new(config, lent, handle, jobs, events);
    // The shot paints every page: none is hidden as a background tab.
    rt.keep_pages_live(true);
    let result = render_in(&mut rt, &waker, size, timeout);
    rt.shutdown();
    result
}

fn render_in(rt: &mut Runtime, waker: &Waker, size: (u32, u32), timeout: Duration) -> Result<Vec<u8>> {
    if let Some(p) = rt.notices().iter().find(|n| n.warning) {
        bail!("{}", p.text);
    }
    // Ready when every browser node painted once after loading.
    let ready = rt.run_until(waker, timeout, |rt| rt.browsers().settled(Duration::from_millis(300)));
    if !ready {
        bail!("timed out after {timeout:?} waiting for browser nodes to paint");
    }
    // A load ends before the page's first frames are composited: wait until each
    // page ran two animation frames, then give the off-screen paint a moment.
    let pending: Vec<_> = rt
        .browsers()
        .iter()
        .filter_map(|(_, b)| b.page().evaluate_later(crate::shot::prepare::TWO_FRAMES).ok())
        .collect();
    rt.run_until(waker, timeout, |_| pending.iter().all(|p| p.is_answered()));
    rt.run_until(waker, Duration::from_millis(100), |_| false);
    for (tab, b) in rt.browsers().iter() {
        let centre = b.last_frame().and_then(|f| f.rgba_at(f.width / 2, f.height / 2));
        tracing::debug!(%tab, url = %b.url(), ?centre, "browser state at capture");
    }
    let image = rt.render_canvas(size.0, size.1, true).map_err(anyhow::Error::msg)?;
    image.to_png().map_err(|e| anyhow::anyhow!("PNG encoding failed: {e}"))
}
