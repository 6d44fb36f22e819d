//! One page shot, driven from a worker thread: a browser made by the main
//! thread (which pumps the engine), then DevTools commands awaited here.

use super::prepare::{self, Animations, Caret, Prepare};
use super::{ShotError, WaitFor};
use cef_bridge::{BrowserHandle, BrowserId, DevToolsChannel};
use serde_json::{json, Value};
use std::sync::Arc;
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
    pub size: super::Size,
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

struct Session {
    channel: Arc<DevToolsChannel>,
    deadline: Instant,
    timeout: Duration,
}

impl Session {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Sends `method` and waits for its reply until the shot's deadline.
    fn call(&self, method: &str, params: Value, waiting_for: &'static str) -> Result<Value, ShotError> {
        let pending = self.channel.request(method, params, None).map_err(|e| ShotError::DevTools(e.to_string()))?;
        match pending.wait(self.left()) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(ShotError::DevTools(format!("{method}: {}", e.message))),
            Err(cef_bridge::DevToolsError::Timeout { .. }) => Err(ShotError::Timeout(self.timeout, waiting_for)),
            Err(e) => Err(ShotError::DevTools(e.to_string())),
        }
    }

    /// Evaluates `expression` (awaiting a promise); a page exception becomes
    /// an error starting with `what`.
    fn eval(&self, what: &str, expression: &str, waiting_for: &'static str) -> Result<Value, ShotError> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            waiting_for,
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            let msg = ex
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .or_else(|| ex.pointer("/exception/value").and_then(Value::as_str))
                .or_else(|| ex.get("text").and_then(Value::as_str))
                .unwrap_or("exception");
            return Err(ShotError::Script(format!("{what}: {}", msg.lines().next().unwrap_or(msg))));
        }
        Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
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

fn capture_in(
    link: &dyn EngineLink,
    browser: &BrowserHandle,
    job: &PageJob<'_>,
    deadline: Instant,
) -> Result<Vec<u8>, ShotError> {
    let s = Session { channel: browser.devtools(), deadline, timeout: job.timeout };
    let started = Instant::now();
    let page_events = s.channel.subscribe();
    s.call("Page.enable", json!({}), "DevTools reply")?;
    s.call("Page.setLifecycleEventsEnabled", json!({"enabled": true}), "DevTools reply")?;
    // Like headless Chromium: screenshots without scrollbars.
    s.call("Emulation.setScrollbarsHidden", json!({"hidden": true}), "DevTools reply")?;
    if let Some(scheme) = job.prepare.color_scheme {
        s.call(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme.as_str()}]}),
            "DevTools reply",
        )?;
    }
    let ready_ms = started.elapsed().as_millis();
    let nav = s.call("Page.navigate", json!({"url": job.url}), "DevTools reply")?;
    if let Some(err) = nav.get("errorText").and_then(Value::as_str).filter(|e| !e.is_empty()) {
        return Err(ShotError::Load { url: job.url.to_string(), reason: err.to_string() });
    }
    // Lifecycle events of the initial about:blank share the frame id: match the
    // navigation's loader id so a stale "load" never counts.
    let loader_id = nav.get("loaderId").and_then(Value::as_str).unwrap_or_default().to_string();
    let wanted = match job.wait {
        WaitFor::NetworkIdle => "networkIdle",
        WaitFor::Load | WaitFor::Delay(_) => "load",
    };
    loop {
        if let Some(url) = link.blocked_navigation(browser.id()) {
            return Err(ShotError::Load { url, reason: "redirected to a refused URL".into() });
        }
        let left = s.left();
        if left.is_zero() {
            let what = if wanted == "load" { "the load event" } else { "network idle" };
            return Err(ShotError::Timeout(job.timeout, what));
        }
        // Short waits: a refused redirect is seen by the main thread, not on this channel.
        match page_events.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok(e) => {
                let ours = e
                    .params
                    .get("loaderId")
                    .and_then(Value::as_str)
                    .is_some_and(|l| loader_id.is_empty() || l == loader_id);
                if e.method == "Page.lifecycleEvent"
                    && ours
                    && e.params.get("name").and_then(Value::as_str) == Some(wanted)
                {
                    break;
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(ShotError::DevTools("the browser closed while loading".into()))
            }
        }
    }
    drop(page_events);
    let loaded_ms = started.elapsed().as_millis();
    if let WaitFor::Delay(ms) = job.wait {
        std::thread::sleep(Duration::from_millis(ms).min(s.left()));
    }
    prepare_page(&s, job.prepare)?;
    // Chromium's fast lossless encoder: measured here, a card-grid page's
    // capture took 85 ms instead of 110-190 ms for a PNG 40 % larger.
    let mut params = json!({"format": "png", "fromSurface": true, "optimizeForSpeed": true});
    if let Some(sel) = job.selector {
        let expr = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'nearest'}}); const r = e.getBoundingClientRect(); if (r.width < 1 || r.height < 1) return null; return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}}; }})()",
            sel = serde_json::Value::String(sel.to_string())
        );
        let rect = s.eval(&format!("selector '{sel}'"), &expr, "DevTools reply")?;
        tracing::debug!(%rect, "selector lookup");
        if !rect.is_object() {
            return Err(ShotError::NoSuchElement(sel.to_string()));
        }
        params["clip"] =
            json!({"x": rect["x"], "y": rect["y"], "width": rect["width"], "height": rect["height"], "scale": 1});
        params["captureBeyondViewport"] = json!(true);
    } else if job.full_page {
        let m = s.call("Page.getLayoutMetrics", json!({}), "DevTools reply")?;
        let h = m
            .pointer("/cssContentSize/height")
            .and_then(Value::as_f64)
            .unwrap_or(job.size.height as f64)
            .ceil()
            .max(1.0);
        let h = h.min(cef_bridge::MAX_VIEW_EDGE as f64);
        params["clip"] = json!({"x": 0, "y": 0, "width": job.size.width, "height": h, "scale": 1});
        params["captureBeyondViewport"] = json!(true);
    }
    let prepared_ms = started.elapsed().as_millis();
    let shot = s.call("Page.captureScreenshot", params, "the screenshot")?;
    let captured_ms = started.elapsed().as_millis();
    tracing::debug!(url = job.url, ready_ms, loaded_ms, prepared_ms, captured_ms, "page shot timings");
    let data = shot
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| ShotError::DevTools("captureScreenshot returned no data".into()))?;
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| ShotError::DevTools(format!("screenshot data: {e}")))
}

/// The determinism steps, in the order that keeps each one's effect: the
/// page's own script first (it may start animations or add elements), then
/// animations settled, then the caret, hiding and masks over the final layout.
fn prepare_page(s: &Session, p: &Prepare) -> Result<(), ShotError> {
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
