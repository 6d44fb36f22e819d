//! What is done to a page before it is captured so that the same page gives
//! the same pixels every time: animations settled, caret hidden, colour
//! scheme and device scale fixed, volatile parts hidden or masked.
//!
//! Each option is applied through DevTools by `page.rs`; the page-side steps
//! are the JavaScript expressions built here, so they can be read (and unit
//! tested) in one place.

use serde::{Deserialize, Serialize};

/// Playwright's default mask colour.
pub const DEFAULT_MASK_COLOR: &str = "#FF00FF";

/// Whether CSS animations, transitions and Web Animations run at capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Animations {
    /// As the page runs them.
    #[default]
    Allow,
    /// Finite ones fast-forwarded to their end, infinite ones cancelled to
    /// their initial state (what Playwright's `animations: "disabled"` does).
    Disabled,
}

/// Whether the text caret is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Caret {
    /// As the page draws it (it blinks, so two shots may differ).
    #[default]
    Initial,
    /// Transparent everywhere.
    Hide,
}

/// The `prefers-color-scheme` the page sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    /// `prefers-color-scheme: light`.
    Light,
    /// `prefers-color-scheme: dark`.
    Dark,
}

impl ColorScheme {
    /// The media feature value.
    pub fn as_str(self) -> &'static str {
        match self {
            ColorScheme::Light => "light",
            ColorScheme::Dark => "dark",
        }
    }
}

/// Device pixels per CSS pixel: 1, or 2 (the PNG has twice the pixels each way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// One device pixel per CSS pixel.
    #[default]
    One,
    /// Two device pixels per CSS pixel (HiDPI).
    Two,
}

impl Scale {
    /// The device scale factor.
    pub fn factor(self) -> u32 {
        match self {
            Scale::One => 1,
            Scale::Two => 2,
        }
    }
}

impl TryFrom<u64> for Scale {
    type Error = String;
    fn try_from(n: u64) -> Result<Self, String> {
        match n {
            1 => Ok(Scale::One),
            2 => Ok(Scale::Two),
            n => Err(format!("scale is 1 or 2, not {n}")),
        }
    }
}

impl std::str::FromStr for Scale {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        s.trim().parse::<u64>().map_err(|_| format!("scale is 1 or 2, not '{s}'")).and_then(Scale::try_from)
    }
}

impl<'de> Deserialize<'de> for Scale {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scale::try_from(u64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Scale {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.factor())
    }
}

/// Everything done to a page between "ready" and the capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepare {
    /// Animations at capture.
    pub animations: Animations,
    /// The caret at capture.
    pub caret: Caret,
    /// Emulated `prefers-color-scheme` (None: the engine's default).
    pub color_scheme: Option<ColorScheme>,
    /// Device scale factor.
    pub scale: Scale,
    /// Wait until this selector matches a visible element.
    pub wait_for: Option<String>,
    /// Script run before the capture (awaited when it returns a promise); a throw fails the shot.
    pub js: Option<String>,
    /// Elements made `visibility: hidden`.
    pub hide: Vec<String>,
    /// Elements covered by a solid box of `mask_color`.
    pub mask: Vec<String>,
    /// The masks' CSS colour.
    pub mask_color: String,
}

impl Default for Prepare {
    fn default() -> Self {
        Self {
            animations: Animations::default(),
            caret: Caret::default(),
            color_scheme: None,
            scale: Scale::default(),
            wait_for: None,
            js: None,
            hide: Vec::new(),
            mask: Vec::new(),
            mask_color: DEFAULT_MASK_COLOR.to_string(),
        }
    }
}

/// A JS string literal for `s` (JSON strings are JS string literals).
fn js_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// A JS array literal of strings.
fn js_strs(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

/// A promise that resolves once `selector` matches an element with a box
/// (checked every animation frame and every 50 ms); rejects on a bad selector.
pub fn wait_for_expr(selector: &str) -> String {
    format!(
        "new Promise((resolve, reject) => {{ const sel = {sel}; const seen = () => {{ const e = document.querySelector(sel); if (!e) return false; const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; }}; try {{ if (seen()) return resolve(true); }} catch (err) {{ return reject(err); }} const timer = setInterval(() => {{ if (seen()) {{ clearInterval(timer); resolve(true); }} }}, 50); }})",
        sel = js_str(selector)
    )
}

/// Settles every animation of the document (shadow roots included through
/// `getAnimations({{subtree}})`): finite ones finish (their end state and
/// events, like `transitionend`), infinite ones are cancelled back to their
/// initial state. Returns how many were settled. The page's own clock is
/// not frozen: script-driven animation (`requestAnimationFrame`) goes on.
pub const SETTLE_ANIMATIONS: &str = "(() => { let n = 0; for (const a of document.getAnimations()) { const t = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null; if (t && t.endTime === Infinity) { a.cancel(); } else { try { a.finish(); } catch (e) { a.cancel(); } } n++; } return n; })()";

/// A style sheet that stops new CSS animations and transitions from starting
/// after the settle (hover, focus, class changes during the capture).
pub const FREEZE_STYLE: &str =
    "*, *::before, *::after { animation-play-state: paused !important; transition: none !important; }";

/// The style sheet that hides the caret.
pub const CARET_STYLE: &str = "*, *::before, *::after { caret-color: transparent !important; }";

/// Adds a `<style>` with `css` to the document.
pub fn add_style_expr(css: &str) -> String {
    format!(
        "(() => {{ const s = document.createElement('style'); s.setAttribute('data-termsprawl-shot', ''); s.textContent = {css}; (document.head || document.documentElement).appendChild(s); return true; }})()",
        css = js_str(css)
    )
}

/// Hides every element matching `selectors` (`visibility: hidden`, layout
/// kept); throws naming a selector that is not valid CSS.
pub fn hide_expr(selectors: &[String]) -> String {
    format!(
        "(() => {{ let n = 0; for (const sel of {sels}) {{ let found; try {{ found = document.querySelectorAll(sel); }} catch (e) {{ throw new Error(`hide: invalid selector '${{sel}}'`); }} for (const e of found) {{ e.style.setProperty('visibility', 'hidden', 'important'); n++; }} }} return n; }})()",
        sels = js_strs(selectors)
    )
}

/// Draws a box of `color` over the border box of every element matching
/// `selectors`, above everything else on the page; throws naming a selector
/// that is not valid CSS or a colour CSS does not know.
pub fn mask_expr(selectors: &[String], color: &str) -> String {
    format!(
        "(() => {{ const color = {color}; if (!CSS.supports('color', color)) throw new Error(`mask colour '${{color}}' is not a CSS colour`); const layer = document.createElement('div'); layer.setAttribute('data-termsprawl-shot', 'mask'); layer.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;overflow:visible;pointer-events:none;z-index:2147483647;'; let n = 0; for (const sel of {sels}) {{ let found; try {{ found = document.querySelectorAll(sel); }} catch (e) {{ throw new Error(`mask: invalid selector '${{sel}}'`); }} for (const e of found) {{ const r = e.getBoundingClientRect(); if (r.width <= 0 || r.height <= 0) continue; const m = document.createElement('div'); m.style.cssText = `position:absolute;left:${{r.left + scrollX}}px;top:${{r.top + scrollY}}px;width:${{r.width}}px;height:${{r.height}}px;background:${{color}};`; layer.appendChild(m); n++; }} }} document.documentElement.appendChild(layer); return n; }})()",
        color = js_str(color),
        sels = js_strs(selectors)
    )
}

/// A promise that resolves after two animation frames: what was changed is
/// then composited and in the next capture.
pub const TWO_FRAMES: &str = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_is_one_or_two() {
        assert_eq!("1".parse::<Scale>(), Ok(Scale::One));
        assert_eq!("2".parse::<Scale>(), Ok(Scale::Two));
        assert!("3".parse::<Scale>().unwrap_err().contains("1 or 2"));
        assert!("x".parse::<Scale>().is_err());
        assert_eq!(Scale::Two.factor(), 2);
    }

    #[test]
    fn selectors_and_colours_are_quoted_not_spliced() {
        let e = hide_expr(&["a'b\"c".to_string(), "</script>".into()]);
        assert!(e.contains(r#"["a'b\"c","</script>"]"#), "{e}");
        let m = mask_expr(&["#x".into()], "red'); alert(1); ('");
        assert!(m.contains(r#"const color = "red'); alert(1); ('""#), "{m}");
        let w = wait_for_expr("div[data-x=\"1\"]");
        assert!(w.contains(r#"const sel = "div[data-x=\"1\"]""#), "{w}");
        assert!(add_style_expr("a{b:c}\n").contains(r#""a{b:c}\n""#));
    }
}
