//! One page shot, driven from a worker thread: a browser made by the main
//! thread (which pumps the engine), then DevTools commands awaited here.

use super::error::ShotError;
use super::prepare::{self, Animations, Caret, Prepare};
use super::request::{Size, WaitFor};
use crate::page_transport::{cdp_page, ChannelTransport};
use cef_bridge::{BrowserHandle, BrowserId};
use page_driver::{CdpPage, Clip, DriveError, MediaFeature, Page as _, ScreenshotOptions};
use serde::Deserialize;
use serde_json::Value;
use std::time::{Duration, Instant};

/// What a worker needs from the main thread.
pub(crate) trait EngineLink: Sync {
    /// A new off-screen browser showing about:blank at `width`×`height` CSS
    /// pixels and `scale` device pixels per CSS pixel.
    fn create_browser(&self, width: u32, height: u32, scale: u32) -> Result<BrowserHandle, ShotError>;
    /// The URL a navigation of `id` was refused at, if any.
    fn blocked_navigation(&self, id: BrowserId) -> Option<String>;
}

/// One page's options, as the worker needs them.
pub(crate) struct PageJob<'a> {
    /// Normalised URL.
    pub url: &'a str,
    /// Viewport in CSS pixels.
    pub size: Size,
    /// Readiness.
    pub wait: WaitFor,
    /// Whole scrollable page.
    pub full_page: bool,
    /// Only this element.
    pub selector: Option<&'a str>,
    /// Overall limit.
    pub timeout: Duration,
    /// Determinism steps.
    pub prepare: &'a Prepare,
}

/// The page of one shot: its typed driver, bound by the shot's deadline.
struct Shot<'a> {
    page: CdpPage<ChannelTransport>,
    deadline: Instant,
    /// The shot's whole timeout, as its errors name it.
    timeout: Duration,
    link: &'a dyn EngineLink,
}

impl Shot<'_> {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// A failed step: a reply that did not come in time is the shot's timeout.
    fn failed(&self, e: DriveError, waiting_for: &'static str) -> ShotError {
        match e {
            DriveError::Timeout { .. } => ShotError::Timeout(self.timeout, waiting_for),
            e => ShotError::Page(e),
        }
    }

    /// Evaluates `expression` (awaiting a promise); a page exception becomes
    /// an error starting with `what`.
    fn eval(&self, what: &str, expression: &str, waiting_for: &'static str) -> Result<Value, ShotError> {
        self.page.evaluate_value(expression).map_err(|e| match e {
            DriveError::Script(source) => ShotError::Script { what: what.to_owned(), source },
            e => self.failed(e, waiting_for),
        })
    }
}

/// Captures `job` in a browser of its own; returns the PNG bytes.
pub(crate) fn capture(link: &dyn EngineLink, job: &PageJob<'_>) -> Result<Vec<u8>, ShotError> {
    let deadline = Instant::now() + job.timeout;
    let t = Instant::now();
    let browser = link.create_browser(job.size.width, job.size.height, job.prepare.scale.factor())?;
    tracing::debug!(create_ms = t.elapsed().as_millis(), "browser made");
    let result = capture_in(link, &browser, job, deadline);
    let _ = browser.close();
    result
}

/// Where `--selector`'s element is, in CSS pixels of the document.
#[derive(Debug, Deserialize)]
struct ElementRect {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

fn capture_in(
    link: &dyn EngineLink,
    browser: &BrowserHandle,
    job: &PageJob<'_>,
    deadline: Instant,
) -> Result<Vec<u8>, ShotError> {
    let page = cdp_page(browser.devtools()).with_timeout(job.timeout).until(deadline);
    let s = Shot { page, deadline, timeout: job.timeout, link };
    let reply = "DevTools reply";
    let started = Instant::now();
    let mut lifecycle = s.page.lifecycle();
    s.page.enable_page_events().map_err(|e| s.failed(e, reply))?;
    s.page.set_lifecycle_events(true).map_err(|e| s.failed(e, reply))?;
    // Like headless Chromium: screenshots without scrollbars.
    s.page.set_scrollbars_hidden(true).map_err(|e| s.failed(e, reply))?;
    if let Some(scheme) = job.prepare.color_scheme {
        let feature = MediaFeature { name: "prefers-color-scheme".into(), value: scheme.as_str().into() };
        s.page.set_emulated_media(&[feature]).map_err(|e| s.failed(e, reply))?;
    }
    let ready_ms = started.elapsed().as_millis();
    let nav = s.page.navigate(job.url).map_err(|e| s.failed(e, reply))?;
    if let Some(err) = nav.error_text.filter(|e| !e.is_empty()) {
        return Err(ShotError::Load { url: job.url.to_string(), reason: err });
    }
    // Lifecycle events of the initial about:blank share the frame id: match the
    // navigation's loader id so a stale "load" never counts.
    let loader_id = nav.loader_id.unwrap_or_default();
    let wanted = match job.wait {
        WaitFor::NetworkIdle => "networkIdle",
        WaitFor::Load | WaitFor::Delay(_) => "load",
    };
    loop {
        if let Some(url) = s.link.blocked_navigation(browser.id()) {
            return Err(ShotError::Load { url, reason: "redirected to a refused URL".into() });
        }
        let left = s.left();
        if left.is_zero() {
            let what = if wanted == "load" { "the load event" } else { "network idle" };
            return Err(ShotError::Timeout(job.timeout, what));
        }
        // Short waits: a refused redirect is seen by the main thread, not on this channel.
        match lifecycle.next(left.min(Duration::from_millis(50))) {
            Ok(Some(e)) => {
                let ours = e.loader_id.as_deref().is_some_and(|l| loader_id.is_empty() || l == loader_id);
                if ours && e.name == wanted {
                    break;
                }
            }
            Ok(None) => {}
            Err(_) => return Err(ShotError::DevTools("the browser closed while loading".into())),
        }
    }
    drop(lifecycle);
    let loaded_ms = started.elapsed().as_millis();
    if let WaitFor::Delay(ms) = job.wait {
        std::thread::sleep(Duration::from_millis(ms).min(s.left()));
    }
    prepare_page(&s, job.prepare)?;
    // Chromium's fast lossless encoder: measured here, a card-grid page's
    // capture took 85 ms instead of 110-190 ms for a PNG 40 % larger.
    let mut options =
        ScreenshotOptions { from_surface: Some(true), optimize_for_speed: Some(true), ..ScreenshotOptions::default() };
    if let Some(sel) = job.selector {
        let expr = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'nearest'}}); const r = e.getBoundingClientRect(); if (r.width < 1 || r.height < 1) return null; return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}}; }})()",
            sel = Value::String(sel.to_string())
        );
        let rect = s.eval(&format!("selector '{sel}'"), &expr, reply)?;
        tracing::debug!(%rect, "selector lookup");
        let Some(rect) = serde_json::from_value::<Option<ElementRect>>(rect).ok().flatten() else {
            return Err(ShotError::NoSuchElement(sel.to_string()));
        };
        options.clip = Some(Clip { x: rect.x, y: rect.y, width: rect.width, height: rect.height, scale: 1.0 });
        options.capture_beyond_viewport = Some(true);
    } else if job.full_page {
        let m = s.page.layout_metrics().map_err(|e| s.failed(e, reply))?;
        let h = m.css_content_size.map_or(job.size.height as f64, |c| c.height).ceil().max(1.0);
        let h = h.min(cef_bridge::MAX_VIEW_EDGE as f64);
        options.clip = Some(Clip { x: 0.0, y: 0.0, width: job.size.width as f64, height: h, scale: 1.0 });
        options.capture_beyond_viewport = Some(true);
    }
    let prepared_ms = started.elapsed().as_millis();
    let png = s.page.screenshot(&options).map_err(|e| match e {
        DriveError::Decode { .. } => ShotError::DevTools("captureScreenshot returned no data".into()),
        e => s.failed(e, "the screenshot"),
    })?;
    let captured_ms = started.elapsed().as_millis();
    tracing::debug!(url = job.url, ready_ms, loaded_ms, prepared_ms, captured_ms, "page shot timings");
    Ok(png)
}

/// The determinism steps, in the order that keeps each one's effect: the
/// page's own script first (it may start animations or add elements), then
/// animations settled, then the caret, hiding and masks over the final layout.
fn prepare_page(s: &Shot<'_>, p: &Prepare) -> Result<(), ShotError> {
    if let Some(sel) = &p.wait_for {
        s.eval(&format!("--wait-for '{sel}'"), &prepare::wait_for_expr(sel), "the --wait-for selector")?;
    }
    if let Some(code) = &p.js {
        s.eval("--js threw", code, "the --js script")?;
    }
    if p.animations == Animations::Disabled {
        s.eval("animations", &prepare::add_style_expr(prepare::FREEZE_STYLE), "DevTools reply")?;
        s.eval("animations", prepare::SETTLE_ANIMATIONS, "DevTools reply")?;
    }
    if p.caret == Caret::Hide {
        s.eval("caret", &prepare::add_style_expr(prepare::CARET_STYLE), "DevTools reply")?;
    }
    if !p.hide.is_empty() {
        s.eval("--hide", &prepare::hide_expr(&p.hide), "DevTools reply")?;
    }
    if !p.mask.is_empty() {
        s.eval("--mask", &prepare::mask_expr(&p.mask, &p.mask_color), "DevTools reply")?;
    }
    // A change lands before its frame is composited: two animation frames
    // later it is on the surface the screenshot reads.
    let changed = p.js.is_some()
        || p.animations == Animations::Disabled
        || p.caret == Caret::Hide
        || !p.hide.is_empty()
        || !p.mask.is_empty();
    if changed {
        s.eval("frame", prepare::TWO_FRAMES, "a frame")?;
    }
    Ok(())
}
