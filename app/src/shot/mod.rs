//! `termsprawl shot`: pages (or saved canvases) rendered off-screen by CEF and
//! saved as PNGs, one or a whole manifest of them in one engine start.
//!
//! Built for CI: no X server, a throw-away browser profile, a one-line reason
//! and a non-zero exit on any failure, and nothing written unless the whole
//! capture succeeded (the PNG is written to a temp file and renamed).
//! `prepare` makes the pixels deterministic, `fonts` fixes the font set,
//! `batch` runs many shots at once, `manifest` reads the list of them.

pub mod batch;
pub mod compare;
pub mod fonts;
pub mod manifest;
mod page;
pub mod prepare;
pub mod report;

use cef_bridge::url_policy;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;
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

impl<'de> Deserialize<'de> for WaitFor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// `wait: 500` and `wait: "500"` both mean 500 ms.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Ms(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Ms(ms) => Ok(WaitFor::Delay(ms)),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// YAML reads `0x10` as the hex number 16: say so instead of "expected a string".
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(u64),
        }
        match Raw::deserialize(d)? {
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
            Raw::Number(n) => Err(serde::de::Error::custom(format!(
                "size must be WxH, e.g. 1280x800, not the number {n} (quote it: YAML reads 0x.. as hex)"
            ))),
        }
    }
}

/// What a shot renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A page: the address as typed (normalised by the URL policy).
    Url(String),
    /// A saved project folder's whole canvas (what `--canvas` renders).
    Canvas(PathBuf),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Url(u) => f.write_str(u),
            Target::Canvas(p) => write!(f, "canvas {}", p.display()),
        }
    }
}

/// What to capture.
#[derive(Debug, Clone)]
pub struct ShotRequest {
    /// The page or canvas.
    pub target: Target,
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
    /// Determinism steps before the capture (pages only).
    pub prepare: prepare::Prepare,
    /// The baseline to compare the shot with.
    pub compare: Option<compare::CompareSpec>,
}

impl ShotRequest {
    /// A viewport shot of `target` into `output` with the CLI's defaults.
    pub fn new(target: Target, output: PathBuf) -> Self {
        Self {
            target,
            output,
            size: Size { width: 1280, height: 800 },
            wait: WaitFor::Load,
            full_page: false,
            selector: None,
            timeout: Duration::from_secs(30),
            prepare: prepare::Prepare::default(),
            compare: None,
        }
    }
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
    /// The shot's own temporary files could not be set up.
    #[error("{0}")]
    Setup(String),
    /// A page script (`--js`, `--wait-for`, `--hide`, `--mask`) threw.
    #[error("{0}")]
    Script(String),
    /// Rendering a saved canvas failed.
    #[error("{0}")]
    Canvas(String),
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

/// Captures one shot in an engine of its own (and compares it with its
/// baseline, or rewrites the baseline when `update_baselines`).
pub fn run(
    req: &ShotRequest,
    update_baselines: bool,
    chromium_log: Option<PathBuf>,
) -> Result<batch::Outcome, ShotError> {
    let options = batch::BatchOptions { jobs: 1, progress: false, update_baselines, chromium_log };
    let mut outcomes = batch::run(std::slice::from_ref(req), &options)?;
    outcomes.pop().ok_or_else(|| ShotError::DevTools("the shot produced no result".into()))
}

/// The width and height in a PNG's header.
pub(crate) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let reader = decoder.read_info().ok()?;
    let info = reader.info();
    Some((info.width, info.height))
}

/// The screenshot, replacing `path` atomically, mode 0600 as it always was.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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
