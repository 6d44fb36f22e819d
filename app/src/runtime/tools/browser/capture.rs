//! Screenshots of a browser node's page: `browser_screenshot`, and
//! `browser_inspect`'s `screenshot: true`.

use super::super::context::OpContext;
use super::session::page_error;
use super::target::{target, Target};
use base64::Engine as _;
use page_driver::{DriveError, ScreenshotOptions};
use serde_json::{json, Value};
use tool_server::{NodeArgs, ToolError};

/// Captures the viewport as PNG, saves it under `<data>/screenshots/`, and describes it.
pub(super) fn capture(ctx: &OpContext, t: &Target) -> Result<Value, ToolError> {
    let png = t.handle.page().screenshot(&ScreenshotOptions::default()).map_err(|e| match e {
        DriveError::Decode { .. } => ToolError::page_error("the page returned no screenshot"),
        e => page_error(e),
    })?;
    let info = png::Decoder::new(std::io::Cursor::new(&png))
        .read_info()
        .map_err(|e| ToolError::page_error(format!("unreadable screenshot: {e}")))?;
    let (width, height) = (info.info().width, info.info().height);
    // Pages can show private things: screenshots are the user's alone (0700/0600).
    let dir = ctx.data_dir.join("screenshots");
    local_guard::files::ensure_private_dir(&dir)
        .map_err(|e| ToolError::failed(format!("cannot create {}: {e}", dir.display())))?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let mut name = format!("{}-{stamp}.png", t.node);
    let mut n = 1;
    while dir.join(&name).exists() {
        name = format!("{}-{stamp}-{n}.png", t.node);
        n += 1;
    }
    let path = dir.join(&name);
    local_guard::files::write_private(&dir, &name, &png)
        .map_err(|e| ToolError::failed(format!("cannot write {}: {e}", path.display())))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&png);
    Ok(
        json!({"path": path.display().to_string(), "mimeType": "image/png", "data": data, "width": width, "height": height}),
    )
}

/// `browser_screenshot`: the viewport as PNG (saved, and inline as base64).
pub(crate) fn screenshot(ctx: &OpContext, args: NodeArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_read(id, ctx.caller())?;
    let mut v = capture(ctx, &t)?;
    v["nodeId"] = json!(t.node);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::owned_browser;
    use super::*;
    use crate::model::NodeKind;
    use crate::runtime::test_context::fake_screenshot;
    use crate::runtime::test_context::TestContext;
    use serde_json::json;
    use tool_server::ErrorCode;

    #[test]
    fn browser_screenshot_saves_the_png_privately_and_returns_it() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let v = ctx.run("browser_screenshot", json!({"nodeId": b})).unwrap();
        let png = fake_screenshot();
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let path = v["path"].as_str().expect("a path").to_owned();
        assert_eq!(
            v,
            json!({"path": path, "mimeType": "image/png", "data": data, "width": 4, "height": 3, "nodeId": b})
        );
        let path = std::path::Path::new(&path);
        assert_eq!(path.parent(), Some(ctx.rt.data_dir().join("screenshots").as_path()));
        assert!(path.file_name().unwrap().to_string_lossy().starts_with(&format!("{b}-")));
        assert_eq!(std::fs::read(path).unwrap(), png);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (2000.0, 0.0, 100.0, 80.0));
        let e = ctx.run("browser_screenshot", json!({"nodeId": sticky})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message(), format!("node {sticky} is a sticky node, not a browser"));
    }
}
