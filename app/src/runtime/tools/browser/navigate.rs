//! Loading pages: `browser_open` (a new browser node, loaded) and
//! `browser_navigate`, each waiting until the page says it finished loading.

use super::super::context::{beside, caller_project, model_error, OpContext};
use super::dialog::dialog_json;
use super::target::target;
use crate::model::NodeKind;
use page_driver::{Page, PageExt as _};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tool_server::{NavigateArgs, ToolError, UrlArgs};

/// Size of a new browser node.
const BROWSER_SIZE: (f64, f64) = (960.0, 640.0);
/// How long open and navigate wait for the page to finish loading.
const LOAD_TIMEOUT: Duration = Duration::from_secs(20);

/// Resolves with the page's state once it is worth a look: at once when the
/// document is complete and current, at its `load` event when it is still
/// loading, never for the document a navigation is replacing (the reply comes
/// when its context is destroyed) — and after `wait` ms at the latest, so a
/// page that never changes is still reported.
const LOAD_PROBE_JS: &str = r#"((args) => new Promise((resolve) => {
  const settle = () => resolve({url: location.href, title: document.title, ready: document.readyState, marker: window.__termsprawlNav || null});
  const stale = (args.marker !== null && window.__termsprawlNav === args.marker) || (args.real && location.href === 'about:blank');
  if (!stale && document.readyState === 'complete') return settle();
  if (!stale) addEventListener('load', settle, {once: true});
  setTimeout(settle, args.wait);
}))"#;
/// Longest a load probe waits for an event before reporting the page anyway.
const PROBE_WAIT_MS: u64 = 1_000;
/// Pause after a failed probe (mid-navigation there is briefly no context to run in).
const PROBE_RETRY: Duration = Duration::from_millis(50);

/// The load probe's argument.
#[derive(Serialize)]
struct ProbeArgs<'a> {
    marker: Option<&'a str>,
    real: bool,
    wait: u64,
}

/// What the load probe reports of the page.
#[derive(Debug, Default, Deserialize)]
struct Probe {
    url: Option<String>,
    title: Option<String>,
    ready: Option<String>,
    marker: Option<String>,
}

/// Waits until the page finished loading a document without `marker` (the
/// marker tags the document that was showing before a navigation). The page
/// itself says when: each probe is answered by a load event, the end of the
/// old document, or the probe's own timer, not by polling.
fn wait_loaded(page: &dyn Page, marker: Option<&str>, want_real_page: bool) -> Result<Value, ToolError> {
    let end = Instant::now() + LOAD_TIMEOUT;
    let args = ProbeArgs { marker, real: want_real_page, wait: PROBE_WAIT_MS };
    let args = serde_json::to_string(&args).map_err(|e| ToolError::failed(format!("load probe: {e}")))?;
    let probe = format!("{LOAD_PROBE_JS}({args})");
    let mut last = Probe::default();
    while Instant::now() < end {
        match page.evaluate::<Option<Probe>>(&probe) {
            Ok(v) => {
                let v = v.unwrap_or_default();
                let fresh = marker.is_none_or(|m| v.marker.as_deref() != Some(m));
                let real = !want_real_page || v.url.as_deref() != Some("about:blank");
                if fresh && real && v.ready.as_deref() == Some("complete") {
                    return Ok(json!({"url": v.url, "title": v.title, "loaded": true}));
                }
                last = v;
            }
            // Expected mid-navigation: the context is being replaced.
            Err(_) => std::thread::sleep(PROBE_RETRY),
        }
    }
    Ok(json!({"url": last.url, "title": last.title, "loaded": false}))
}

/// `browser_open`: a new browser node beside the caller, owned by it, loaded.
pub(crate) fn open(ctx: &OpContext, args: UrlArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let url =
        cef_bridge::url_policy::normalize_address(&args.url).map_err(|e| ToolError::invalid_argument(e.to_string()))?;
    let shared = ctx.shared.clone();
    let node = ctx.on_main(move |rt| {
        let at = beside(caller_project(rt, &identity)?, &identity.node_id, BROWSER_SIZE);
        let kind = NodeKind::browser(&url).map_err(|e| ToolError::invalid_argument(e.to_string()))?;
        let id = rt.add_node(kind, &url, BROWSER_SIZE, Some(at)).map_err(model_error)?;
        // Owned from the start, so no other agent can claim it in between.
        shared.with_owners(|o| o.claim(id.as_str(), &identity.node_id))?;
        Ok(id)
    })?;
    let t = target(ctx, node.as_str())?;
    let mut page = wait_loaded(&*t.handle.page(), None, true)?;
    page["nodeId"] = json!(node);
    page["owner"] = json!(ctx.caller());
    Ok(page)
}

/// `browser_navigate`: loads a URL (under the URL policy) and waits for it.
pub(crate) fn navigate(ctx: &OpContext, args: NavigateArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    let page = t.handle.page();
    static NAV_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let marker = format!("nav-{stamp}-{}", NAV_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    // Tag the current document; the load is done when a document without the tag completes.
    let tag = format!("window.__termsprawlNav = {}", Value::String(marker.clone()));
    let tagged = page.evaluate_value(&tag).is_ok();
    let url = t.handle.navigate(&args.url).map_err(|e| ToolError::refused(e.to_string()))?;
    let mut loaded =
        wait_loaded(&*page, tagged.then_some(marker.as_str()), url != cef_bridge::url_policy::ABOUT_BLANK)?;
    loaded["nodeId"] = json!(t.node);
    loaded["requested"] = json!(url);
    if let Some(d) = t.handle.dialog() {
        loaded["dialog"] = dialog_json(&d);
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{owned_browser, unowned_browser};
    use crate::runtime::test_context::TestContext;
    use crate::runtime::test_context::{tool, FAKE_TITLE};
    use page_driver::Method;
    use serde_json::json;
    use tool_server::ErrorCode;

    #[test]
    fn browser_open_loads_a_page_owned_by_the_caller() {
        let mut ctx = TestContext::new();
        let agent = ctx.agent.node_id.clone();
        let v = ctx.run("browser_open", json!({"url": "example.com"})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(
            v,
            json!({"url": "https://example.com/", "title": FAKE_TITLE, "loaded": true, "nodeId": id, "owner": agent})
        );
        assert_eq!(ctx.rt.tools.shared.owners().owner(&id), Some(agent.as_str()));
        let page = ctx.page_of(&id).expect("a live page");
        assert_eq!(page.current_url(), "https://example.com/");
        assert_eq!(page.methods(), [Method::Evaluate], "one load probe");
        assert_eq!(ctx.node(&id).unwrap().rect.x, 640.0, "beside the caller");
        let e = ctx.run("browser_open", json!({"url": "javascript:alert(1)"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }

    #[test]
    fn browser_navigate_loads_the_url_in_the_owned_page() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let v = ctx.run("browser_navigate", json!({"nodeId": b, "url": "example.org/docs"})).unwrap();
        assert_eq!(
            v,
            json!({"url": "https://example.org/docs", "title": FAKE_TITLE, "loaded": true, "nodeId": b, "requested": "https://example.org/docs"})
        );
        let page = ctx.page_of(&b).unwrap();
        assert_eq!(*page.navigations.lock(), ["https://example.org/docs"]);
    }

    #[test]
    fn browser_navigate_refuses_a_scheme_outside_the_policy() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let e = ctx.run("browser_navigate", json!({"nodeId": b, "url": "file:///etc/passwd"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), "refused url: refused scheme 'file': only http, https and about:blank are allowed");
        let page = ctx.page_of(&b).unwrap();
        assert!(page.navigations.lock().is_empty());
        assert_eq!(page.current_url(), "https://example.com/");
    }

    #[test]
    fn browser_navigate_needs_the_caller_to_own_the_browser() {
        let mut ctx = TestContext::new();
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_navigate", json!({"nodeId": unowned, "url": "https://example.org/"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {unowned} has no owner; claim it with browser_claim first"));
        let other = ctx.add_agent("Agent B");
        ctx.call(&other, tool("browser_claim", json!({"nodeId": unowned}))).unwrap();
        let e = ctx.run("browser_navigate", json!({"nodeId": unowned, "url": "https://example.org/"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(
            e.message(),
            format!("browser {unowned} is owned by agent {}; operations on it are refused", other.node_id)
        );
        assert!(ctx.page_of(&unowned).unwrap().navigations.lock().is_empty(), "nothing was loaded");
    }
}
