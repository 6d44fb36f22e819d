//! `termsprawl shot`: one page, rendered off-screen by CEF, saved as a PNG.
//!
//! Built for CI: no X server, a throw-away browser profile, a one-line reason
//! and a non-zero exit on any failure, and nothing written unless the whole
//! capture succeeded (the PNG is written to a temp file and renamed).

use base64::Engine as _;
use cef_bridge::{
    url_policy, BrowserEvent, BrowserOptions, ChromiumLog, DevToolsChannel, DisplayMode, Engine, EngineConfig,
    EngineHost, Profile,
};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// When the page counts as ready to capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitFor {
    /// The load event.
    Load,
    /// No network activity for 500 ms after load (Chromium's networkIdle lifecycle event).
    NetworkIdle,
    /// The load event, then this many more milliseconds.
    Delay(u64),
}

impl std::str::FromStr for WaitFor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "load" => Ok(WaitFor::Load),
            "networkidle" => Ok(WaitFor::NetworkIdle),
            ms => ms
                .parse::<u64>()
                .map(WaitFor::Delay)
                .map_err(|_| format!("--wait takes load, networkidle or milliseconds, not '{ms}'")),
        }
    }
}

/// A viewport size `WxH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("size must be WxH, e.g. 1280x800, not '{s}'"))?;
        let parse = |v: &str| v.trim().parse::<u32>().ok().filter(|n| (1..=cef_bridge::MAX_VIEW_EDGE).contains(n));
        match (parse(w), parse(h)) {
            (Some(width), Some(height)) => Ok(Size { width, height }),
            _ => Err(format!("size '{s}' out of range: each side 1..={}", cef_bridge::MAX_VIEW_EDGE)),
        }
    }
}

/// What to capture.
#[derive(Debug, Clone)]
pub struct ShotRequest {
    /// Address as typed (normalised by the URL policy).
    pub url: String,
    /// Output PNG path.
    pub output: PathBuf,
    /// Viewport size.
    pub size: Size,
    /// Readiness condition.
    pub wait: WaitFor,
    /// Capture the whole scrollable page instead of the viewport.
    pub full_page: bool,
    /// Capture only the first element matching this CSS selector.
    pub selector: Option<String>,
    /// Give up after this long.
    pub timeout: Duration,
}

impl From<url_policy::UrlPolicyError> for ShotError {
    fn from(e: url_policy::UrlPolicyError) -> Self {
        ShotError::Refused(e)
    }
}

/// Why a shot failed (each renders as the one-line reason printed to stderr).
#[derive(Debug, Error)]
pub enum ShotError {
    /// The URL policy refused the address.
    #[error("refused URL: {0}")]
    Refused(url_policy::UrlPolicyError),
    /// The browser engine did not start.
    #[error("browser engine: {0}")]
    Engine(#[from] cef_bridge::EngineError),
    /// The page could not be loaded (DNS, connection refused…).
    #[error("cannot load {url}: {reason}")]
    Load {
        /// The URL.
        url: String,
        /// Chromium's net error.
        reason: String,
    },
    /// A DevTools step failed.
    #[error("{0}")]
    DevTools(String),
    /// The selector matched nothing.
    #[error("selector '{0}' matched no visible element")]
    NoSuchElement(String),
    /// The overall deadline passed.
    #[error("timed out after {0:?} waiting for {1}")]
    Timeout(Duration, &'static str),
    /// Writing the PNG failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// Output path.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
}

#[derive(Default)]
struct Events(Mutex<Vec<BrowserEvent>>);

impl EngineHost for Events {
    fn schedule_pump(&self, _delay: Duration) {}
    fn browser_event(&self, event: BrowserEvent) {
        self.0.lock().push(event);
    }
}

/// Captures a page to a PNG; returns the PNG's pixel size.
pub fn run(req: &ShotRequest) -> Result<(u32, u32), ShotError> {
    let url = url_policy::normalize_address(&req.url)?;
    let events = Arc::new(Events::default());
    let downloads = std::env::temp_dir().join(format!("termsprawl-shot-downloads-{}", std::process::id()));
    // stderr is for the one-line reason; Chromium's own chatter stays out unless asked for.
    let log_level =
        if std::env::var_os("TERMSPRAWL_CHROMIUM_LOG").is_some() { ChromiumLog::Warning } else { ChromiumLog::Fatal };
    let config = EngineConfig {
        profile: Profile::Ephemeral,
        display: DisplayMode::Headless,
        downloads_dir: downloads,
        log_file: None,
        log_level,
    };
    let engine = Engine::start(config, events.clone())?;
    let result = capture(&engine, &events, &url, req);
    engine.shutdown();
    let png = result?;
    write_atomically(&req.output, &png).map_err(|source| ShotError::Write { path: req.output.clone(), source })?;
    png_size(&png).ok_or_else(|| ShotError::DevTools("Chromium returned an unreadable PNG".into()))
}

struct Session<'a> {
    engine: &'a Engine,
    channel: Arc<DevToolsChannel>,
    deadline: Instant,
    timeout: Duration,
}

impl Session<'_> {
    fn call(&self, method: &str, params: Value) -> Result<Value, ShotError> {
        let pending = self.channel.request(method, params, None).map_err(|e| ShotError::DevTools(e.to_string()))?;
        let left = self.deadline.saturating_duration_since(Instant::now());
        self.engine.pump_until(left, || !pending.receiver().is_empty());
        match pending.wait(Duration::from_millis(1)) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(ShotError::DevTools(format!("{method}: {}", e.message))),
            Err(cef_bridge::DevToolsError::Timeout { .. }) => Err(ShotError::Timeout(self.timeout, "DevTools reply")),
            Err(e) => Err(ShotError::DevTools(e.to_string())),
        }
    }
}

fn capture(engine: &Engine, events: &Events, url: &str, req: &ShotRequest) -> Result<Vec<u8>, ShotError> {
    let deadline = Instant::now() + req.timeout;
    let browser =
        engine.create_browser(&BrowserOptions::new(url_policy::ABOUT_BLANK, req.size.width, req.size.height))?;
    let s = Session { engine, channel: browser.devtools(), deadline, timeout: req.timeout };
    let page_events = s.channel.subscribe();
    s.call("Page.enable", json!({}))?;
    s.call("Page.setLifecycleEventsEnabled", json!({"enabled": true}))?;
    // Like headless Chromium: screenshots without scrollbars.
    s.call("Emulation.setScrollbarsHidden", json!({"hidden": true}))?;
    let nav = s.call("Page.navigate", json!({"url": url}))?;
    if let Some(err) = nav.get("errorText").and_then(Value::as_str).filter(|e| !e.is_empty()) {
        return Err(ShotError::Load { url: url.to_string(), reason: err.to_string() });
    }
    // Lifecycle events of the initial about:blank share the frame id: match the
    // navigation's loader id so a stale "load" never counts.
    let loader_id = nav.get("loaderId").and_then(Value::as_str).unwrap_or_default().to_string();
    let wanted = match req.wait {
        WaitFor::NetworkIdle => "networkIdle",
        WaitFor::Load | WaitFor::Delay(_) => "load",
    };
    let mut ready = false;
    let mut refused = None;
    engine.pump_until(deadline.saturating_duration_since(Instant::now()), || {
        while let Ok(e) = page_events.try_recv() {
            let ours = e
                .params
                .get("loaderId")
                .and_then(Value::as_str)
                .is_some_and(|l| loader_id.is_empty() || l == loader_id);
            if e.method == "Page.lifecycleEvent" && ours && e.params.get("name").and_then(Value::as_str) == Some(wanted)
            {
                ready = true;
            }
        }
        if let Some(BrowserEvent::NavigationBlocked { url, .. }) =
            events.0.lock().iter().find(|e| matches!(e, BrowserEvent::NavigationBlocked { .. }))
        {
            refused = Some(url.clone());
        }
        ready || refused.is_some()
    });
    if let Some(u) = refused {
        return Err(ShotError::Load { url: u, reason: "redirected to a refused URL".into() });
    }
    if !ready {
        return Err(ShotError::Timeout(req.timeout, if wanted == "load" { "the load event" } else { "network idle" }));
    }
    if let WaitFor::Delay(ms) = req.wait {
        engine.pump_for(Duration::from_millis(ms));
    }
    let mut params = json!({"format": "png", "fromSurface": true});
    if let Some(sel) = &req.selector {
        let expr = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'nearest'}}); const r = e.getBoundingClientRect(); if (r.width < 1 || r.height < 1) return null; return {{x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}}; }})()",
            sel = serde_json::to_string(sel).unwrap_or_default()
        );
        let r = s.call("Runtime.evaluate", json!({"expression": expr, "returnByValue": true}))?;
        if let Some(ex) = r.get("exceptionDetails") {
            let msg = ex.pointer("/exception/description").and_then(Value::as_str).unwrap_or("invalid selector");
            return Err(ShotError::DevTools(format!("selector '{sel}': {}", msg.lines().next().unwrap_or(msg))));
        }
        tracing::debug!(reply = %r, "selector lookup");
        let rect = r
            .pointer("/result/value")
            .filter(|v| v.is_object())
            .ok_or_else(|| ShotError::NoSuchElement(sel.clone()))?;
        params["clip"] =
            json!({"x": rect["x"], "y": rect["y"], "width": rect["width"], "height": rect["height"], "scale": 1});
        params["captureBeyondViewport"] = json!(true);
    } else if req.full_page {
        let m = s.call("Page.getLayoutMetrics", json!({}))?;
        let h = m
            .pointer("/cssContentSize/height")
            .and_then(Value::as_f64)
            .unwrap_or(req.size.height as f64)
            .ceil()
            .max(1.0);
        let h = h.min(cef_bridge::MAX_VIEW_EDGE as f64);
        params["clip"] = json!({"x": 0, "y": 0, "width": req.size.width, "height": h, "scale": 1});
        params["captureBeyondViewport"] = json!(true);
    }
    let shot = s.call("Page.captureScreenshot", params)?;
    let data = shot
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| ShotError::DevTools("captureScreenshot returned no data".into()))?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| ShotError::DevTools(format!("screenshot data: {e}")))?;
    let _ = browser.close();
    Ok(png)
}

fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let reader = decoder.read_info().ok()?;
    let info = reader.info();
    Some((info.width, info.height))
}

/// The screenshot, replacing `path` atomically, mode 0600 as it always was.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    local_guard::files::write_atomic(path, bytes, local_guard::files::FILE_MODE)
        .map_err(local_guard::FileError::into_io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_and_waits() {
        assert_eq!("1280x800".parse::<Size>(), Ok(Size { width: 1280, height: 800 }));
        assert!("0x10".parse::<Size>().is_err());
        assert!("20000x10".parse::<Size>().is_err());
        assert!("abc".parse::<Size>().is_err());
        assert_eq!("load".parse::<WaitFor>(), Ok(WaitFor::Load));
        assert_eq!("networkidle".parse::<WaitFor>(), Ok(WaitFor::NetworkIdle));
        assert_eq!("250".parse::<WaitFor>(), Ok(WaitFor::Delay(250)));
        assert!("soon".parse::<WaitFor>().is_err());
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.png");
        std::fs::write(&p, b"old").unwrap();
        write_atomically(&p, b"new bytes").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new bytes");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
