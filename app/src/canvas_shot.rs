//! `termsprawl shot --canvas FOLDER`: a saved project's whole canvas, live
//! browser content included, rendered off-screen to a PNG.

use crate::runtime::{headless, RuntimeConfig, Waker};
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::time::Duration;

/// Renders the canvas of the project in `folder` at `size` into `output`.
pub fn run(folder: &Path, output: &Path, size: (u32, u32), timeout: Duration) -> Result<(u32, u32)> {
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
    let waker = Waker::new();
    let mut rt = headless::start_runtime(config, cef_bridge::DisplayMode::Headless, waker.clone())?;
    let problems: Vec<String> = rt.notices.iter().filter(|n| n.warning).map(|n| n.text.clone()).collect();
    if let Some(p) = problems.first() {
        rt.shutdown();
        bail!("{p}");
    }
    // Ready when every browser node painted once after loading.
    let ready = rt.run_until(&waker, timeout, |rt| rt.browsers.settled(Duration::from_millis(300)));
    if !ready {
        rt.shutdown();
        bail!("timed out after {timeout:?} waiting for browser nodes to paint");
    }
    // A load ends before the page's first frames are composited: wait until each
    // page ran two animation frames, then give the off-screen paint a moment.
    let pending: Vec<_> = rt
        .browsers
        .iter()
        .filter_map(|(_, b)| {
            let expr = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))";
            b.devtools()
                .request("Runtime.evaluate", serde_json::json!({"expression": expr, "awaitPromise": true}), None)
                .ok()
        })
        .collect();
    rt.run_until(&waker, timeout, |_| pending.iter().all(|p| !p.receiver().is_empty()));
    rt.run_until(&waker, Duration::from_millis(100), |_| false);
    for (tab, b) in rt.browsers.iter() {
        let centre = b.last_frame().and_then(|f| f.rgba_at(f.width / 2, f.height / 2));
        tracing::debug!(%tab, url = %b.url(), ?centre, "browser state at capture");
    }
    let image = rt.render_canvas(size.0, size.1, true).map_err(anyhow::Error::msg);
    rt.shutdown();
    let image = image?;
    let png = image.to_png().map_err(|e| anyhow::anyhow!("PNG encoding failed: {e}"))?;
    local_guard::files::write_atomic(output, &png, local_guard::files::FILE_MODE)
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok((size.0, size.1))
}
