//! What one shot is asked to capture: the target, the viewport size, when
//! the page is ready, and the options `shot` and manifest entries share.

use super::compare;
use super::prepare;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

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
}
