//! `Page.captureScreenshot` as a loopback client wants it.
//!
//! Chromium encodes a PNG screenshot with zlib's thorough settings unless the
//! client sets `optimizeForSpeed`. Over a network the smaller file pays for
//! itself; over the facade's loopback socket it does not: in CEF 131 the
//! encode was a third of an 800x600 capture (~16 of ~49 ms), while the
//! larger file costs nothing to move. So every PNG request gets the fast
//! encoder: lossless, transparency kept, the same pixels, a larger file.
//! `optimizeForSpeed: false` cannot be read as a choice: Puppeteer sends it
//! with every screenshot as its library default.
//!
//! `fromSurface: false` asks Chromium to grab the platform window's pixels
//! instead of the compositor surface. An off-screen CEF browser has no such
//! window: CEF 131 crashed the whole app (SIGSEGV) on it. Headless Chromium has
//! none either and answers with the surface's pixels, so the facade asks for
//! exactly that: every capture is taken from the surface.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The params to send for a client's `Page.captureScreenshot`: always from
/// the surface (`fromSurface` removed: its default is the surface), and the
/// fast PNG encoder set when the client asked for a PNG (or no format);
/// `None` to forward the client's params unchanged.
pub(crate) fn guest_params(params: Option<&RawValue>) -> Option<Box<RawValue>> {
    let mut map = match params {
        None => Map::new(),
        Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
            Ok(Value::Object(map)) => map,
            // Not an object: the guest answers with its own invalid-params error.
            _ => return None,
        },
    };
    // Any value but `true` is dropped: `false` crashes an off-screen browser, a
    // wrong type would only earn an error where Chromium's headless answers.
    let mut changed = map.remove("fromSurface").is_some_and(|v| v != Value::Bool(true));
    let png = map.get("format").is_none_or(|f| f.as_str() == Some("png"));
    if png && map.get("optimizeForSpeed") != Some(&Value::Bool(true)) {
        map.insert("optimizeForSpeed".into(), Value::Bool(true));
        changed = true;
    }
    if !changed {
        return None;
    }
    RawValue::from_string(Value::Object(map).to_string()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(params: Option<&str>) -> Option<Value> {
        let raw = params.map(|p| RawValue::from_string(p.to_owned()).unwrap());
        guest_params(raw.as_deref()).map(|r| serde_json::from_str(r.get()).unwrap())
    }

    #[test]
    fn png_requests_get_the_fast_encoder() {
        assert_eq!(rewrite(None), Some(serde_json::json!({"optimizeForSpeed": true})));
        assert_eq!(rewrite(Some("{}")), Some(serde_json::json!({"optimizeForSpeed": true})));
        let clip =
            r#"{"format":"png","clip":{"x":0,"y":8,"width":800,"height":600,"scale":1},"captureBeyondViewport":false}"#;
        assert_eq!(
            rewrite(Some(clip)),
            Some(
                serde_json::json!({"format": "png", "clip": {"x": 0, "y": 8, "width": 800, "height": 600, "scale": 1}, "captureBeyondViewport": false, "optimizeForSpeed": true})
            )
        );
    }

    #[test]
    fn puppeteers_default_false_is_overridden() {
        let puppeteer = r#"{"format":"png","optimizeForSpeed":false,"fromSurface":true,"captureBeyondViewport":false}"#;
        assert_eq!(
            rewrite(Some(puppeteer)),
            Some(serde_json::json!({"format": "png", "optimizeForSpeed": true, "captureBeyondViewport": false}))
        );
    }

    #[test]
    fn every_capture_is_taken_from_the_surface() {
        assert_eq!(rewrite(Some(r#"{"fromSurface":false}"#)), Some(serde_json::json!({"optimizeForSpeed": true})));
        assert_eq!(
            rewrite(Some(r#"{"format":"jpeg","fromSurface":false,"quality":50}"#)),
            Some(serde_json::json!({"format": "jpeg", "quality": 50}))
        );
        assert_eq!(
            rewrite(Some(r#"{"format":"webp","fromSurface":"no"}"#)),
            Some(serde_json::json!({"format": "webp"}))
        );
        // Already from the surface and fast: nothing to change.
        assert_eq!(rewrite(Some(r#"{"fromSurface":true,"optimizeForSpeed":true}"#)), None);
        assert_eq!(rewrite(Some(r#"{"format":"jpeg","fromSurface":true}"#)), None);
    }

    #[test]
    fn fast_already_other_formats_and_bad_params_pass_unchanged() {
        assert_eq!(rewrite(Some(r#"{"optimizeForSpeed":true}"#)), None);
        assert_eq!(rewrite(Some(r#"{"format":"jpeg","quality":80}"#)), None);
        assert_eq!(rewrite(Some(r#"{"format":"webp"}"#)), None);
        assert_eq!(rewrite(Some(r#"{"format":7}"#)), None);
        assert_eq!(rewrite(Some("[1,2]")), None);
        assert_eq!(rewrite(Some("null")), None);
    }
}
