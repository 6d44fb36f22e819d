//! Browser operations of the agent tool runtime. Ownership checks and node
//! lookups happen on the main thread; everything that waits on the page
//! (DevTools replies, loads) happens on the operation's worker thread, since
//! the main thread must keep pumping CEF for those replies to arrive.

use super::context::{beside, caller_project, model_error, target_node, KindTag, OpContext, ToolShared};
use super::page_model::{
    self, collect, describe, element_line, frame_ids, page_starts, release, Item, Landmark, Listed, NodeRef, Root,
    Scan, Session, LOCATE_FN,
};
use crate::model::{NodeId, NodeKind};
use crate::runtime::engine::Browser;
use base64::Engine as _;
use cef_bridge::{DevToolsChannel, DialogKind, JsDialog};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tool_server::{ClickArgs, InspectArgs, NavigateArgs, NodeArgs, ToolError, TransferArgs, TypeArgs, UrlArgs};

/// Size of a new browser node.
const BROWSER_SIZE: (f64, f64) = (960.0, 640.0);
/// Deadline of one DevTools command.
const DEVTOOLS_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open and navigate wait for the page to finish loading.
const LOAD_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a browser node may take to get its live page (the seed's 60 × 50 ms).
const GUEST_WAIT: Duration = Duration::from_secs(3);
/// Default cap on inspect's page text.
const DEFAULT_TEXT_CHARS: u64 = 2_000;

/// Waits for the focused element when typing without a target.
const FOCUSED_JS: &str = r#"(() => { const a = document.activeElement; return {focused: !!a && a !== document.body && a !== document.documentElement}; })()"#;

/// Runs `expression` in the page and returns its value (by value).
fn evaluate(dt: &DevToolsChannel, expression: &str) -> Result<Value, ToolError> {
    let r = dt
        .call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            DEVTOOLS_TIMEOUT,
        )
        .map_err(page_error)?;
    Ok(page_model::script_result(r)?.get("value").cloned().unwrap_or(Value::Null))
}

/// A DevTools failure (the page went away, a command timed out…) as the agent sees it.
fn page_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::page_error(e.to_string())
}

/// The refs a page's JavaScript dialog shows in `browser_inspect`: the agent
/// answers it with the operations it already knows (click OK or Cancel, type
/// into a prompt), so the fixed catalogue needs no operation of its own.
const DIALOG_OK: &str = "dialog-ok";
const DIALOG_CANCEL: &str = "dialog-cancel";
const DIALOG_INPUT: &str = "dialog-input";

/// How a waiting dialog reads in a result.
fn dialog_json(d: &JsDialog) -> Value {
    json!({"type": d.kind.cdp_name(), "message": d.message, "defaultPrompt": d.default_prompt, "url": d.url})
}

/// How a page's open file chooser reads in a result (the person answers it in the window).
fn file_chooser_json(c: &cef_bridge::FileChooser) -> Value {
    let mode = match c.mode {
        cef_bridge::ChooserMode::Open => "open",
        cef_bridge::ChooserMode::OpenMultiple => "openMultiple",
        cef_bridge::ChooserMode::OpenFolder => "openFolder",
        cef_bridge::ChooserMode::Save => "save",
    };
    json!({"mode": mode, "accept": c.accept, "answeredBy": "the user, in the window"})
}

/// The dialog as `browser_inspect` shows a page: its text and its controls as refs.
fn dialog_page(d: &JsDialog, node: &NodeId) -> Value {
    let mut elements = format!("{DIALOG_OK} button OK\n");
    if d.kind != DialogKind::Alert {
        elements.push_str(&format!("{DIALOG_CANCEL} button Cancel\n"));
    }
    if d.kind == DialogKind::Prompt {
        elements.push_str(&format!("{DIALOG_INPUT} textbox {} ={}\n", d.message, d.default_prompt));
    }
    json!({"nodeId": node, "dialog": dialog_json(d), "text": d.message, "elements": elements})
}

/// Refuses page work while the page waits on a dialog (its scripts and input would wait with it).
fn no_dialog(handle: &Browser) -> Result<(), ToolError> {
    match handle.dialog() {
        None => Ok(()),
        Some(d) => Err(ToolError::refused(format!(
            "the page waits on a {} dialog ({:?}): answer it first with browser_click ref {DIALOG_OK} or {DIALOG_CANCEL}{}",
            d.kind.cdp_name(),
            d.message,
            if d.kind == DialogKind::Prompt { format!(", or browser_type ref {DIALOG_INPUT}") } else { String::new() }
        ))),
    }
}

/// Answers the waiting dialog; the result says what was answered.
fn answer(t: &Target, accept: bool, text: Option<&str>) -> Result<Value, ToolError> {
    let d = t.handle.answer_dialog(accept, text).map_err(|e| ToolError::refused(e.to_string()))?;
    let mut v = json!({"nodeId": t.node, "answered": dialog_json(&d), "accepted": accept});
    if let (true, DialogKind::Prompt) = (accept, d.kind) {
        v["text"] = json!(text.unwrap_or(&d.default_prompt));
    }
    Ok(v)
}

/// Sends a command whose reply the page may hold back by opening a dialog
/// (a click whose handler calls `confirm`): `Ok(None)` once a dialog is open.
fn call_unless_dialog(
    handle: &Browser,
    dt: &DevToolsChannel,
    method: &str,
    params: Value,
) -> Result<Option<Value>, ToolError> {
    let pending = dt.request(method, params, None).map_err(page_error)?;
    let end = Instant::now() + DEVTOOLS_TIMEOUT;
    loop {
        match pending.receiver().recv_timeout(Duration::from_millis(50)) {
            Ok(raw) => {
                let reply = raw.and_then(|r| r.parse()).map_err(page_error)?;
                return reply.map(Some).map_err(|e| ToolError::page_error(format!("{method}: {}", e.message)));
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Err(page_error("the page went away")),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        }
        if handle.dialog().is_some() {
            return Ok(None);
        }
        if Instant::now() >= end {
            return Err(ToolError::page_error(format!("{method} timed out after {DEVTOOLS_TIMEOUT:?}")));
        }
    }
}

fn not_a_browser(id: &str, kind: &NodeKind) -> ToolError {
    ToolError::invalid_argument(format!("node {id} is a {} node, not a browser", kind.name()))
}

/// What the main thread hands a browser operation.
struct Target {
    handle: Browser,
    node: NodeId,
}

/// Looks up a browser node of the caller's canvas and its live page, waiting
/// briefly for a page that is still being created: the wait sleeps on the live
/// browser list, which the main thread republishes whenever a browser comes
/// or goes, instead of asking the main thread again and again.
fn target(ctx: &OpContext, node_id: &str) -> Result<Target, ToolError> {
    let end = Instant::now() + GUEST_WAIT;
    let lookup = || {
        let identity = ctx.identity.clone();
        let id = node_id.to_owned();
        ctx.on_main(move |rt| {
            let n = target_node(caller_project(rt, &identity)?, &id)?;
            if !matches!(n.kind, NodeKind::Browser { .. }) {
                return Err(not_a_browser(&id, &n.kind));
            }
            let nid = n.id.clone();
            let handle = rt.browsers.for_node(&nid).map(|(_, h)| h.clone()).filter(|h| !h.is_closed());
            Ok((nid, handle, rt.browsers.live()))
        })
    };
    let (node, handle, live) = lookup()?;
    if let Some(handle) = handle {
        // A background tab takes no input and paints no frame: show it for the operation.
        crate::runtime::on_screen::show_now(&handle);
        return Ok(Target { handle, node });
    }
    let started = live
        .wait_for(end, |tabs| tabs.iter().find(|(tab, h)| tab.node == node && !h.is_closed()).map(|(_, h)| h.clone()));
    if let Some(handle) = started {
        return Ok(Target { handle, node });
    }
    // Out of time: one last look, so a node removed meanwhile says so.
    match lookup()? {
        (node, Some(handle), _) => Ok(Target { handle, node }),
        (_, None, _) => Err(ToolError::not_found(format!(
            "browser {node_id} has no live page (it is still starting or was closed)"
        ))),
    }
}

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

/// Waits until the page finished loading a document without `marker` (the
/// marker tags the document that was showing before a navigation). The page
/// itself says when: each probe is answered by a load event, the end of the
/// old document, or the probe's own timer, not by polling.
fn wait_loaded(dt: &DevToolsChannel, marker: Option<&str>, want_real_page: bool) -> Value {
    let end = Instant::now() + LOAD_TIMEOUT;
    let probe =
        format!("{LOAD_PROBE_JS}({})", json!({"marker": marker, "real": want_real_page, "wait": PROBE_WAIT_MS}));
    let mut last = Value::Null;
    while Instant::now() < end {
        match evaluate(dt, &probe) {
            Ok(v) => {
                let fresh = marker.is_none_or(|m| v.get("marker").and_then(Value::as_str) != Some(m));
                let real = !want_real_page || v.get("url").and_then(Value::as_str) != Some("about:blank");
                if fresh && real && v.get("ready").and_then(Value::as_str) == Some("complete") {
                    return json!({"url": v["url"], "title": v["title"], "loaded": true});
                }
                last = v;
            }
            // Expected mid-navigation: the context is being replaced.
            Err(_) => std::thread::sleep(PROBE_RETRY),
        }
    }
    json!({"url": last.get("url").cloned().unwrap_or(Value::Null), "title": last.get("title").cloned().unwrap_or(Value::Null), "loaded": false})
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
    let mut page = wait_loaded(&t.handle.devtools(), None, true);
    page["nodeId"] = json!(node);
    page["owner"] = json!(ctx.caller());
    Ok(page)
}

/// `browser_list`: the project's browsers with their owners.
pub(crate) fn list(ctx: &OpContext) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let owners = ctx.shared.owners();
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        let list = p
            .nodes_by_z()
            .into_iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Browser { tabs, active_tab, .. } => {
                    let tab = tabs.iter().find(|t| &t.id == active_tab);
                    Some(json!({"nodeId": n.id, "url": tab.map(|t| t.url.as_str()), "title": tab.map_or(n.title.as_str(), |t| t.title.as_str()), "owner": owners.owner(n.id.as_str())}))
                }
                _ => None,
            })
            .collect();
        Ok(Value::Array(list))
    })
}

/// Checks the node is a browser of the caller's canvas (without needing its page).
fn check_browser_node(ctx: &OpContext, node_id: &str) -> Result<(), ToolError> {
    let identity = ctx.identity.clone();
    let id = node_id.to_owned();
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &id)?;
        match n.kind {
            NodeKind::Browser { .. } => Ok(()),
            ref other => Err(not_a_browser(&id, other)),
        }
    })
}

/// `browser_claim`: takes an unowned browser.
pub(crate) fn claim(ctx: &OpContext, args: NodeArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    check_browser_node(ctx, id)?;
    ctx.shared.with_owners(|o| o.claim(id, ctx.caller()))?;
    Ok(json!({"nodeId": id, "owner": ctx.caller()}))
}

/// `browser_transfer`: hands an owned browser to another agent node of the project.
pub(crate) fn transfer(ctx: &OpContext, args: TransferArgs) -> Result<Value, ToolError> {
    let (id, to) = (args.node_id.as_str(), args.agent_node_id.as_str());
    check_browser_node(ctx, id)?;
    if ctx.shared.kind_of(&ctx.identity.project_id, to) != Some(KindTag::Agent) {
        return Err(ToolError::not_found(format!("{to} is not an agent node of this project")));
    }
    ctx.shared.with_owners(|o| o.transfer(id, ctx.caller(), to))?;
    Ok(json!({"nodeId": id, "owner": to}))
}

/// `browser_navigate`: loads a URL (under the URL policy) and waits for it.
pub(crate) fn navigate(ctx: &OpContext, args: NavigateArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    let dt = t.handle.devtools();
    static NAV_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let marker = format!("nav-{stamp}-{}", NAV_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    // Tag the current document; the load is done when a document without the tag completes.
    let tagged = evaluate(&dt, &format!("window.__termsprawlNav = {}", json!(marker))).is_ok();
    let url = t.handle.navigate(&args.url).map_err(|e| ToolError::refused(e.to_string()))?;
    let mut page = wait_loaded(&dt, tagged.then_some(marker.as_str()), url != cef_bridge::url_policy::ABOUT_BLANK);
    page["nodeId"] = json!(t.node);
    page["requested"] = json!(url);
    if let Some(d) = t.handle.dialog() {
        page["dialog"] = dialog_json(&d);
    }
    Ok(page)
}

/// Captures the viewport as PNG, saves it under `<data>/screenshots/`, and describes it.
fn capture(ctx: &OpContext, t: &Target) -> Result<Value, ToolError> {
    let shot = t
        .handle
        .devtools()
        .call("Page.captureScreenshot", json!({"format": "png"}), DEVTOOLS_TIMEOUT)
        .map_err(page_error)?;
    let data = shot
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::page_error("the page returned no screenshot"))?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| ToolError::page_error(format!("screenshot data: {e}")))?;
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
    Ok(
        json!({"path": path.display().to_string(), "mimeType": "image/png", "data": data, "width": width, "height": height}),
    )
}

/// `browser_inspect`: the page model (one line an element, refs held
/// app-side), a page of elements at a time, optionally with a screenshot.
pub(crate) fn inspect(ctx: &OpContext, args: InspectArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_read(id, ctx.caller())?;
    if let Some(d) = t.handle.dialog() {
        return Ok(dialog_page(&d, &t.node));
    }
    let dt = t.handle.devtools();
    let main = Session { dt: &dt, id: None };
    // Later pages of the element list come without the text (the first page had it).
    let later = args.page.is_some_and(|p| p > 1);
    let max_chars = args.max_chars.or((!later).then_some(DEFAULT_TEXT_CHARS));
    let mut reader = Reader { shared: &ctx.shared, scans: vec![], attached: vec![] };
    let result = reader.read(main, &args, max_chars);
    for s in &reader.attached {
        dt.detach_private(s, DEVTOOLS_TIMEOUT);
    }
    release(main);
    let mut page = result?;
    page["nodeId"] = json!(t.node);
    if let Some(c) = t.handle.file_chooser() {
        page["fileChooser"] = file_chooser_json(&c);
    }
    if args.screenshot == Some(true) {
        page["screenshot"] = capture(ctx, &t)?;
    }
    Ok(page)
}

/// Reads the page frame by frame, following iframes into their own
/// frames (in-process, or through a child session when out of process).
struct Reader<'a> {
    shared: &'a ToolShared,
    scans: Vec<Scan>,
    /// Child sessions opened for out-of-process frames, detached afterwards.
    attached: Vec<String>,
}

/// An entry of the merged element list: scan index, item index, depth.
type Entry = (usize, usize, usize);

/// Deepest iframe nesting inspect follows.
const MAX_FRAME_DEPTH: usize = 4;

impl Reader<'_> {
    fn read(&mut self, main: Session, args: &InspectArgs, max_chars: Option<u64>) -> Result<Value, ToolError> {
        let local = frame_ids(main)?;
        let top = local.first().cloned().ok_or_else(|| ToolError::page_error("the page has no frame"))?;
        // The subtree to read: a ref's element, a selector's, or the whole top document.
        let scoped = match (&args.within, &args.selector) {
            (Some(r), _) => Some(self.resolve_ref(main, r)?),
            (None, Some(sel)) => Some((None, query_selector(main, sel)?)),
            (None, None) => None,
        };
        let first = match &scoped {
            Some((session, object)) => {
                let s = Session { dt: main.dt, id: session.as_deref() };
                let (report, handles) = collect(s, Root::Object(object), max_chars)?;
                Scan { report, handles, session: session.clone(), frame: self.slot_of_session(session) }
            }
            None => {
                let (report, handles) = collect(main, Root::Frame(&top), max_chars)?;
                Scan { report, handles, session: None, frame: None }
            }
        };
        self.scans.push(first);
        let mut entries = vec![];
        self.expand(main, 0, 0, &mut entries)?;
        let total = entries.len();
        // Page boundaries from each line's size without its ref (a ref is a few characters).
        let sizes: Vec<usize> = entries
            .iter()
            .map(|e| {
                let scan = &self.scans[e.0];
                let listed = Listed {
                    item: scan.report.items[e.1].clone(),
                    depth: e.2,
                    base: scan.report.url.clone(),
                    node_ref: None,
                };
                let mut line = String::new();
                element_line(&listed, &mut line);
                line.len() + 6
            })
            .collect();
        let starts = page_starts(&sizes);
        let page = args.page.unwrap_or(1).max(1) as usize;
        let pages = starts.len();
        if page > pages {
            return Err(ToolError::invalid_argument(format!("page {page} is past the last page ({pages})")));
        }
        let (from, to) = (starts[page - 1], starts.get(page).copied().unwrap_or(total));
        let shown: Vec<Entry> = entries[from..to].to_vec();
        let refs = self.refs_for(main, &shown)?;
        let mut lines = String::new();
        for (e, node_ref) in shown.iter().zip(refs) {
            let scan = &self.scans[e.0];
            let listed =
                Listed { item: scan.report.items[e.1].clone(), depth: e.2, base: scan.report.url.clone(), node_ref };
            element_line(&listed, &mut lines);
        }
        let root = &self.scans[0].report;
        let mut v = json!({"url": root.url, "title": root.title, "elements": lines});
        if let Some(text) = &root.text {
            v["text"] = json!(text);
            if root.text_chars > text.chars().count() {
                v["textTruncated"] = json!(format!(
                    "{} of {} chars; raise maxChars or read a region",
                    text.chars().count(),
                    root.text_chars
                ));
            }
        }
        if let [w, h, x, y, pw, ph] = root.viewport[..] {
            v["scroll"] = json!(format!("{x},{y} of {pw}x{ph}, viewport {w}x{h}"));
        }
        if pages > 1 {
            let landmarks = self.landmark_hints(main)?;
            let mut more = format!("elements {}-{to} of {total}", from + 1);
            if page < pages {
                more.push_str(&format!("; next: page {} of {pages}", page + 1));
            }
            more.push_str("; or one region: within=<ref>");
            if !landmarks.is_empty() {
                more.push_str(&format!(" ({landmarks})"));
            }
            more.push_str(", or selector");
            v["more"] = json!(more);
        }
        let (hidden, off): (usize, usize) =
            self.scans.iter().fold((0, 0), |(h, o), s| (h + s.report.hidden, o + s.report.off));
        if off > 0 {
            let mut skipped = format!("{off} elements outside the page (scrolling cannot reach them");
            let drawers = self.offscreen_hints(main)?;
            if !drawers.is_empty() {
                skipped.push_str(&format!("; in {drawers}"));
            }
            skipped.push_str(") not listed");
            v["offscreen"] = json!(skipped);
        }
        if hidden > 0 {
            v["hidden"] = json!(hidden);
        }
        let unread = unread_frames(&self.scans);
        if !unread.is_empty() {
            v["unreadFrames"] = json!(unread);
        }
        Ok(v)
    }

    /// Appends scan `index`'s items to `out`, each iframe followed by its frame's.
    fn expand(&mut self, main: Session, index: usize, depth: usize, out: &mut Vec<Entry>) -> Result<(), ToolError> {
        let frames: Vec<usize> = self.scans[index]
            .report
            .items
            .iter()
            .enumerate()
            .filter(|(_, i)| i.role == "frame")
            .map(|(k, _)| k)
            .collect();
        let mut children = std::collections::HashMap::new();
        for k in frames {
            // Every frame left unread is said in the answer, never dropped silently.
            let why = if depth >= MAX_FRAME_DEPTH {
                format!("nested more than {MAX_FRAME_DEPTH} frames deep; inspect it with within=<its ref>")
            } else {
                match self.read_frame(main, index, k) {
                    Ok(Some(child)) => {
                        children.insert(k, child);
                        continue;
                    }
                    Ok(None) => "its document could not be reached (still loading, or not a frame)".to_owned(),
                    // Nothing more will answer.
                    Err(e) if main.dt.crashed() => return Err(e),
                    Err(e) => e.message().to_owned(),
                }
            };
            mark_unread(&mut self.scans[index].report.items[k], &why);
        }
        for k in 0..self.scans[index].report.items.len() {
            out.push((index, k, depth));
            if let Some(&child) = children.get(&k) {
                self.expand(main, child, depth + 1, out)?;
            }
        }
        Ok(())
    }

    /// Reads the frame of scan `index`'s iframe item `k`: a new scan's index.
    fn read_frame(&mut self, main: Session, index: usize, k: usize) -> Result<Option<usize>, ToolError> {
        let scan = &self.scans[index];
        let Some(object) = scan.handles.get(scan.report.items[k].n).cloned().flatten() else {
            return Ok(None);
        };
        let session_id = scan.session.clone();
        let s = Session { dt: main.dt, id: session_id.as_deref() };
        let Some(Some((_, Some(frame_id)))) = describe(s, &[object.as_str()])?.into_iter().next() else {
            return Ok(None);
        };
        let local = frame_ids(s)?;
        let (report, handles, session, frame) = if local.contains(&frame_id) {
            let (r, h) = collect(s, Root::Frame(&frame_id), None)?;
            (r, h, session_id, self.scans[index].frame)
        } else {
            // Out of process (another site): read it through a child session of its own.
            let child = self.attach(main, &frame_id)?;
            let cs = Session { dt: main.dt, id: Some(&child) };
            let (r, h) = collect(cs, Root::Frame(&frame_id), None)?;
            (r, h, Some(child), Some(self.shared.frame_slot(&frame_id)))
        };
        self.scans.push(Scan { report, handles, session, frame });
        Ok(Some(self.scans.len() - 1))
    }

    /// A child session on an out-of-process frame.
    fn attach(&mut self, main: Session, frame_id: &str) -> Result<String, ToolError> {
        // Chromium makes the DevTools end of a frame's process when targets are listed.
        let _ = main.try_call("Target.getTargets", json!({}))?;
        // Private: a CDP client of the same page never sees this session.
        let id = main.dt.attach_private(frame_id, DEVTOOLS_TIMEOUT).map_err(page_error)?;
        self.attached.push(id.clone());
        Ok(id)
    }

    /// The out-of-process frame slot of a session opened by this reader.
    fn slot_of_session(&self, session: &Option<String>) -> Option<usize> {
        session.as_ref().and_then(|s| self.scans.iter().find(|x| x.session.as_ref() == Some(s)).and_then(|x| x.frame))
    }

    /// Refs of the entries, resolved per scan in one batch each.
    fn refs_for(&self, main: Session, entries: &[Entry]) -> Result<Vec<Option<NodeRef>>, ToolError> {
        let mut out = vec![None; entries.len()];
        for (si, scan) in self.scans.iter().enumerate() {
            let mine: Vec<(usize, &str)> = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.0 == si)
                .filter_map(|(at, e)| scan.handles.get(scan.report.items[e.1].n)?.as_deref().map(|o| (at, o)))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let s = Session { dt: main.dt, id: scan.session.as_deref() };
            let objects: Vec<&str> = mine.iter().map(|(_, o)| *o).collect();
            for ((at, _), d) in mine.iter().zip(describe(s, &objects)?) {
                out[*at] = d.map(|(backend, _)| NodeRef { frame: scan.frame, backend });
            }
        }
        Ok(out)
    }

    /// Landmarks of the top scan with their element counts: `e12 navigation Menu 40`.
    fn landmark_hints(&self, main: Session) -> Result<String, ToolError> {
        self.landmark_list(main, |l| l.listed > 0, |l| l.listed)
    }

    /// Landmarks holding elements outside the page, with how many.
    fn offscreen_hints(&self, main: Session) -> Result<String, ToolError> {
        self.landmark_list(main, |l| l.off > 0, |l| l.off)
    }

    fn landmark_list(
        &self,
        main: Session,
        keep: impl Fn(&Landmark) -> bool,
        count: impl Fn(&Landmark) -> usize,
    ) -> Result<String, ToolError> {
        let scan = &self.scans[0];
        // The biggest few, in page order.
        let mut chosen: Vec<&Landmark> = scan.report.landmarks.iter().filter(|l| keep(l)).collect();
        chosen.sort_by_key(|l| std::cmp::Reverse(count(l)));
        chosen.truncate(6);
        chosen.sort_by_key(|l| l.n);
        let objects: Vec<&str> = chosen.iter().filter_map(|l| scan.handles.get(l.n)?.as_deref()).collect();
        if objects.len() != chosen.len() {
            return Ok(String::new());
        }
        let s = Session { dt: main.dt, id: scan.session.as_deref() };
        let described = describe(s, &objects)?;
        let parts: Vec<String> = chosen
            .iter()
            .zip(described)
            .map(|(l, d)| {
                let r = d.map(|(backend, _)| NodeRef { frame: scan.frame, backend }.to_string()).unwrap_or_default();
                let name = if l.name.is_empty() { String::new() } else { format!(" {}", l.name) };
                format!("{r} {}{name} {}", l.role, count(l))
            })
            .collect();
        Ok(parts.join(", "))
    }

    /// The session and remote object of a ref's element, or why there is none.
    fn resolve_ref(&mut self, main: Session, r: &str) -> Result<(Option<String>, String), ToolError> {
        let node_ref = parse_ref(r)?;
        let session = match node_ref.frame {
            None => None,
            Some(slot) => {
                let frame = self.shared.frame_id(slot).ok_or_else(|| stale_ref(r))?;
                Some(self.attach(main, &frame).map_err(|_| gone_ref(r))?)
            }
        };
        let s = Session { dt: main.dt, id: session.as_deref() };
        let object = resolve_node(s, node_ref.backend).ok_or_else(|| gone_ref(r))?;
        Ok((session, object))
    }
}

/// Marks an iframe item as not read, saying why; [`unread_frames`] lists it.
fn mark_unread(item: &mut Item, why: &str) {
    item.name = format!("! {} (not read: {why})", item.name);
}

/// The iframes of the scans that were not read, as their marked names.
fn unread_frames(scans: &[Scan]) -> Vec<String> {
    scans
        .iter()
        .flat_map(|s| s.report.items.iter().filter(|i| i.role == "frame" && i.name.starts_with('!')))
        .map(|i| i.name.clone())
        .collect()
}

/// A ref as the agent wrote it, parsed.
fn parse_ref(r: &str) -> Result<NodeRef, ToolError> {
    NodeRef::parse(r).ok_or_else(|| {
        ToolError::invalid_argument(format!(
            "{r:?} is not a ref (refs look like e42 or f1e42 and come from browser_inspect)"
        ))
    })
}

/// A ref whose frame this app never saw.
fn stale_ref(r: &str) -> ToolError {
    ToolError::not_found(format!("no element with ref {r} (refs come from browser_inspect on the current page)"))
}

/// A ref whose element is no longer in the page.
fn gone_ref(r: &str) -> ToolError {
    ToolError::not_found(format!(
        "no element with ref {r}: it was removed or the page changed (refs come from browser_inspect on the current page; inspect again)"
    ))
}

/// A remote object for a backend node id, if the node still exists.
fn resolve_node(s: Session, backend: u64) -> Option<String> {
    let r = s
        .try_call("DOM.resolveNode", json!({"backendNodeId": backend, "objectGroup": "termsprawl-inspect"}))
        .ok()?
        .ok()?;
    r.pointer("/object/objectId").and_then(Value::as_str).map(str::to_owned)
}

/// The first element of the top document matching `selector`, as a remote object.
fn query_selector(main: Session, selector: &str) -> Result<String, ToolError> {
    let r = main.call(
        "Runtime.evaluate",
        json!({"expression": format!("document.querySelector({})", json!(selector)), "returnByValue": false,
               "objectGroup": "termsprawl-inspect"}),
    )?;
    if r.get("exceptionDetails").is_some() {
        return Err(ToolError::page_error(format!("invalid selector: {selector}")));
    }
    r.pointer("/result/objectId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ToolError::page_error(format!("selector matched nothing: {selector}")))
}

/// Where a click on the element of a ref or selector lands, in the page's
/// viewport: scrolled into view, checked visible and uncovered (and focused
/// for typing). Fails, touching nothing, when it is gone, hidden or covered.
fn locate(
    shared: &ToolShared,
    dt: &DevToolsChannel,
    element_ref: Option<&str>,
    selector: Option<&str>,
    focus: bool,
) -> Result<(f64, f64), ToolError> {
    let main = Session { dt, id: None };
    let mut reader = Reader { shared, scans: vec![], attached: vec![] };
    let result = (|| {
        let (what, session, object, frame) = match (element_ref, selector) {
            (Some(r), _) => {
                let (session, object) = reader.resolve_ref(main, r)?;
                let frame = parse_ref(r)?.frame.and_then(|slot| shared.frame_id(slot));
                (format!("ref {r}"), session, object, frame)
            }
            (None, Some(sel)) => (format!("selector {sel}"), None, query_selector(main, sel)?, None),
            (None, None) => return Err(ToolError::invalid_argument("pass a selector or ref")),
        };
        let s = Session { dt, id: session.as_deref() };
        let fail = |value: &Value| -> Result<Value, ToolError> {
            let Some(e) = value.get("error").and_then(Value::as_str) else {
                return Ok(value.clone());
            };
            let detail = value.get("detail").and_then(Value::as_str).unwrap_or("");
            Err(match e {
                "gone" => element_ref.map(gone_ref).unwrap_or_else(|| ToolError::page_error("the element was removed")),
                "hidden" => {
                    ToolError::refused(format!("{what}: the element is not visible ({detail}); nothing was done"))
                }
                "covered" => {
                    ToolError::refused(format!("{what}: the element is {detail} at its centre; nothing was done"))
                }
                "unfocusable" => ToolError::refused(format!("{what}: the element cannot take keyboard focus")),
                other => ToolError::page_error(other.to_owned()),
            })
        };
        let run = |focus: bool| -> Result<Value, ToolError> {
            let at = s.call_on(&object, LOCATE_FN, &json!({"focus": focus}), true)?;
            fail(&at.get("value").cloned().unwrap_or(Value::Null))
        };
        // Checked in its own frame first (and scrolled there), then in every page around it;
        // focus only once nothing covers it, so a refused type leaves the focus alone.
        let inner = run(false)?;
        check_parents(main, s, &object, &inner, &fail)?;
        if focus {
            run(true)?;
        }
        // The point in the top viewport: the box quads of the element (scrolled
        // into view just now), shifted by the iframe's box for an out-of-process frame.
        let quads = s.call("DOM.getContentQuads", json!({"objectId": object}))?;
        let (mut x, mut y) = quads
            .pointer("/quads/0")
            .and_then(Value::as_array)
            .filter(|q| q.len() == 8)
            .map(|q| {
                let n = |i: usize| q[i].as_f64().unwrap_or(0.0);
                ((n(0) + n(2) + n(4) + n(6)) / 4.0, (n(1) + n(3) + n(5) + n(7)) / 4.0)
            })
            .ok_or_else(|| ToolError::refused(format!("{what}: the element has no box on screen; nothing was done")))?;
        if let Some(frame) = frame {
            let owner = main.call("DOM.getFrameOwner", json!({"frameId": frame}))?;
            let backend = owner.get("backendNodeId").cloned().unwrap_or(Value::Null);
            let model = main.call("DOM.getBoxModel", json!({"backendNodeId": backend}))?;
            x += model.pointer("/model/content/0").and_then(Value::as_f64).unwrap_or(0.0);
            y += model.pointer("/model/content/1").and_then(Value::as_f64).unwrap_or(0.0);
        }
        Ok((x, y))
    })();
    for s in &reader.attached {
        dt.detach_private(s, DEVTOOLS_TIMEOUT);
    }
    release(main);
    result
}

/// Checks that each page around an element's frame shows the frame at the
/// element's centre, walking up through parents of the same origin: `this`
/// is the element (`owner` false) or a frame owner element (`owner` true),
/// `x`, `y` the point in the viewport of the frame below. Answers the point
/// in the last page reached and whether that page is the top one; a parent
/// of another origin hides its frame element, so the walk stops below it.
const PARENT_HIT_FN: &str = r#"function (args) {
  const what = (n) => n ? n.localName + (n.id ? '#' + n.id : '') + (typeof n.className === 'string' && n.className.trim() ? '.' + n.className.trim().split(/\s+/).join('.') : '') : 'nothing';
  let x = args.x, y = args.y, w = this.ownerDocument.defaultView;
  let fe = args.owner ? this : w.frameElement;
  while (fe) {
    w = fe.ownerDocument.defaultView;
    // The frame's content box starts inside its border and padding.
    const r = fe.getBoundingClientRect(), cs = w.getComputedStyle(fe);
    // A transformed frame maps points in ways this cannot follow: its own frame's check stands.
    if (cs.transform && cs.transform !== 'none') return {x, y, top: true};
    x += r.left + fe.clientLeft + (parseFloat(cs.paddingLeft) || 0);
    y += r.top + fe.clientTop + (parseFloat(cs.paddingTop) || 0);
    if (x < 0 || y < 0 || x >= w.innerWidth || y >= w.innerHeight) return {error: 'hidden', detail: 'its frame shows it outside the page'};
    const scope = fe.getRootNode();
    const hit = (scope.elementFromPoint ? scope : fe.ownerDocument).elementFromPoint(x, y);
    if (hit !== fe) return {error: 'covered', detail: 'covered by ' + what(hit) + ' of the page around its frame'};
    fe = w.frameElement;
  }
  return {x, y, top: w === w.top};
}"#;

/// The document of the last page [`PARENT_HIT_FN`] reaches from `this`.
const PARENT_DOC_FN: &str = r#"function () {
  let w = this.ownerDocument.defaultView;
  while (w.frameElement) w = w.frameElement.ownerDocument.defaultView;
  return w.document;
}"#;

/// Most frame boundaries [`check_parents`] crosses (a bound on a changing page).
const MAX_PARENT_STEPS: usize = 16;

/// Fails, as [`LOCATE_FN`] does, when a page around the element's frame
/// covers the element's centre (`at`: [`LOCATE_FN`]'s point in its frame):
/// a click there would land on the overlay, not the element. Same-origin
/// parents are walked in the page; at a parent of another origin the frame's
/// owner element is found through DevTools (in the same process, or in the
/// page's own session for an out-of-process frame) and the walk goes on there.
fn check_parents<'a>(
    main: Session<'a>,
    s: Session<'a>,
    object: &str,
    at: &Value,
    fail: &dyn Fn(&Value) -> Result<Value, ToolError>,
) -> Result<(), ToolError> {
    let coord = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let (mut x, mut y) = (coord(at, "x"), coord(at, "y"));
    let (mut session, mut object, mut owner) = (s, object.to_owned(), false);
    for _ in 0..MAX_PARENT_STEPS {
        let args = json!({"x": x, "y": y, "owner": owner});
        let reached = session.call_on(&object, PARENT_HIT_FN, &args, true)?;
        let reached = fail(&reached.get("value").cloned().unwrap_or(Value::Null))?;
        (x, y) = (coord(&reached, "x"), coord(&reached, "y"));
        if reached.get("top") == Some(&Value::Bool(true)) {
            return Ok(());
        }
        // Which frame the walk stopped in: the one whose document is the page reached.
        let doc = session.call_on(&object, PARENT_DOC_FN, &json!({}), false)?;
        let Some(doc) = doc.get("objectId").and_then(Value::as_str) else {
            return Ok(());
        };
        let Some(Some((doc_backend, _))) = describe(session, &[doc])?.into_iter().next() else {
            return Ok(());
        };
        let frames = frame_ids(session)?;
        let Some(at_frame) = frame_of_document(session, &frames, doc_backend)? else {
            // The frame left the page meanwhile: the click's own checks answer for it.
            return Ok(());
        };
        // The root of a child session is an out-of-process frame: its owner is in the page's session.
        if frames.first() == Some(&at_frame) {
            if session.id.is_none() {
                return Ok(());
            }
            session = main;
        }
        // An out-of-process frame inside another one has its owner in a session this
        // does not hold: the walk ends there, as the click's point does (one level).
        let Ok(owner_node) = session.try_call("DOM.getFrameOwner", json!({"frameId": at_frame}))? else {
            return Ok(());
        };
        let Some(backend) = owner_node.get("backendNodeId").and_then(Value::as_u64) else {
            return Ok(());
        };
        object = resolve_node(session, backend).ok_or_else(|| page_error("the element's frame was removed"))?;
        owner = true;
    }
    Ok(())
}

/// The frame (of `frames`, a session's) whose document has backend node id `doc`.
fn frame_of_document(s: Session, frames: &[String], doc: u64) -> Result<Option<String>, ToolError> {
    for f in frames {
        // An isolated world reaches the document of a frame of any origin.
        let Ok(world) =
            s.try_call("Page.createIsolatedWorld", json!({"frameId": f, "worldName": page_model::WORLD}))?
        else {
            continue;
        };
        let Some(context) = world.get("executionContextId").and_then(Value::as_i64) else {
            continue;
        };
        let Ok(r) = s.try_call(
            "Runtime.evaluate",
            json!({"expression": "document", "contextId": context, "objectGroup": page_model::GROUP}),
        )?
        else {
            continue;
        };
        let Some(object) = r.pointer("/result/objectId").and_then(Value::as_str) else {
            continue;
        };
        if describe(s, &[object])?.into_iter().next().flatten().map(|d| d.0) == Some(doc) {
            return Ok(Some(f.clone()));
        }
    }
    Ok(None)
}

/// `browser_click`: real mouse events at the element's centre.
pub(crate) fn click(ctx: &OpContext, args: ClickArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    match args.element_ref.as_deref() {
        Some(DIALOG_OK) => return answer(&t, true, None),
        Some(DIALOG_CANCEL) => return answer(&t, false, None),
        _ => no_dialog(&t.handle)?,
    }
    let dt = t.handle.devtools();
    let (x, y) = locate(&ctx.shared, &dt, args.element_ref.as_deref(), args.selector.as_deref(), false)?;
    let mouse = |kind: &str, buttons: u32| {
        let button = if kind == "mouseMoved" { "none" } else { "left" };
        let params = json!({"type": kind, "x": x, "y": y, "button": button, "buttons": buttons, "clickCount": 1});
        call_unless_dialog(&t.handle, &dt, "Input.dispatchMouseEvent", params)
    };
    let mut v = json!({"nodeId": t.node, "x": x, "y": y});
    // A handler that opens a dialog holds the event's reply back until someone answers.
    for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
        if mouse(kind, buttons)?.is_none() {
            break;
        }
    }
    if let Some(d) = t.handle.dialog() {
        v["dialog"] = dialog_json(&d);
    }
    if let Some(c) = t.handle.file_chooser() {
        v["fileChooser"] = file_chooser_json(&c);
    }
    Ok(v)
}

/// `browser_type`: focuses the element (or keeps the focused one) and types the text.
pub(crate) fn type_text(ctx: &OpContext, args: TypeArgs) -> Result<Value, ToolError> {
    let (id, text) = (args.node_id.as_str(), args.text.as_str());
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    if args.element_ref.as_deref() == Some(DIALOG_INPUT) {
        return answer(&t, true, Some(text));
    }
    no_dialog(&t.handle)?;
    let dt = t.handle.devtools();
    if args.element_ref.is_some() || args.selector.is_some() {
        locate(&ctx.shared, &dt, args.element_ref.as_deref(), args.selector.as_deref(), true)?;
    } else if evaluate(&dt, FOCUSED_JS)?.get("focused") != Some(&Value::Bool(true)) {
        return Err(ToolError::invalid_argument("no element has focus; pass a selector or ref"));
    }
    let sent = send_in_order(&dt, &typing_events(text));
    let mut v = json!({"nodeId": t.node, "typed": text.chars().count()});
    match (sent, t.handle.dialog()) {
        // A key (Enter in a form) opened a dialog: the page holds the rest of the keys back.
        (_, Some(d)) => v["dialog"] = dialog_json(&d),
        (Err(e), None) => return Err(e),
        (Ok(()), None) => {}
    }
    Ok(v)
}

/// Commands in flight at once while typing: enough to keep the renderer busy,
/// few enough that a long text fails early when the page goes away.
const TYPING_WINDOW: usize = 256;

/// The DevTools commands that type `text` as a person would on a US keyboard
/// (what Puppeteer's `keyboard.type` sends): a keyDown carrying the character
/// and a keyUp for each character that layout has a key for, Enter for line
/// breaks, Tab for tabs, and `Input.insertText` for runs of anything else
/// (accents, CJK, emoji), as an input method would commit them.
fn typing_events(text: &str) -> Vec<(&'static str, Value)> {
    use cef_bridge::input::{char_key_code, us_dom_code};
    let mut events = vec![];
    let mut other = String::new();
    let key = |events: &mut Vec<(&'static str, Value)>, key: &str, code: &str, vk: i32, text: Option<&str>| {
        let mut down = json!({"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk});
        if let Some(t) = text {
            down["text"] = json!(t);
            down["unmodifiedText"] = json!(t);
        }
        events.push(("Input.dispatchKeyEvent", down));
        events.push((
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}),
        ));
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let named = match c {
            // CR LF is one line break.
            '\r' if chars.peek() == Some(&'\n') => continue,
            '\r' | '\n' => Some(("Enter", "Enter", 13, Some("\r"))),
            '\t' => Some(("Tab", "Tab", 9, None)),
            _ => None,
        };
        let code = us_dom_code(c);
        if named.is_none() && code.is_none() {
            other.push(c);
            continue;
        }
        if !other.is_empty() {
            events.push(("Input.insertText", json!({"text": std::mem::take(&mut other)})));
        }
        match named {
            Some((k, code, vk, text)) => key(&mut events, k, code, vk, text),
            None => {
                let s = c.to_string();
                key(&mut events, &s, code.unwrap_or_default(), char_key_code(c), Some(&s));
            }
        }
    }
    if !other.is_empty() {
        events.push(("Input.insertText", json!({"text": other})));
    }
    events
}

/// Sends `commands` in order, a window at a time, and fails on the first error.
fn send_in_order(dt: &DevToolsChannel, commands: &[(&'static str, Value)]) -> Result<(), ToolError> {
    for window in commands.chunks(TYPING_WINDOW) {
        let pending = window
            .iter()
            .map(|(method, params)| dt.request(method, params.clone(), None).map_err(page_error))
            .collect::<Result<Vec<_>, ToolError>>()?;
        for reply in pending {
            reply
                .wait(DEVTOOLS_TIMEOUT)
                .map_err(page_error)?
                .map_err(|e| ToolError::page_error(format!("typing failed: {}", e.message)))?;
        }
    }
    Ok(())
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
    use super::*;

    fn summary(events: &[(&'static str, Value)]) -> Vec<String> {
        events
            .iter()
            .map(|(m, p)| match *m {
                "Input.insertText" => format!("insert {}", p["text"].as_str().unwrap()),
                _ => format!(
                    "{} {} {} {} {}",
                    p["type"].as_str().unwrap(),
                    p["key"].as_str().unwrap(),
                    p["code"].as_str().unwrap(),
                    p["windowsVirtualKeyCode"],
                    p["text"].as_str().unwrap_or("-")
                ),
            })
            .collect()
    }

    #[test]
    fn typing_sends_key_events_per_character_and_commits_the_rest_as_text() {
        let got = summary(&typing_events("aZ!\r\n\té日本x"));
        assert_eq!(
            got,
            [
                "keyDown a KeyA 65 a",
                "keyUp a KeyA 65 -",
                "keyDown Z KeyZ 90 Z",
                "keyUp Z KeyZ 90 -",
                "keyDown ! Digit1 49 !",
                "keyUp ! Digit1 49 -",
                "keyDown Enter Enter 13 \r",
                "keyUp Enter Enter 13 -",
                "keyDown Tab Tab 9 -",
                "keyUp Tab Tab 9 -",
                "insert é日本",
                "keyDown x KeyX 88 x",
                "keyUp x KeyX 88 -",
            ]
        );
        assert_eq!(summary(&typing_events("😀")), ["insert 😀"]);
        assert!(typing_events("").is_empty());
    }

    #[test]
    fn every_unread_frame_is_named_with_its_reason() {
        let report = |items: Value| -> page_model::FrameReport {
            serde_json::from_value(json!({"url": "http://a/", "items": items})).expect("a report")
        };
        let mut top = report(json!([
            {"n": 0, "role": "button", "name": "Go"},
            {"n": 1, "role": "frame", "name": "deep"},
            {"n": 2, "role": "frame", "name": "read"},
        ]));
        mark_unread(&mut top.items[1], "nested more than 4 frames deep");
        let scans = vec![
            Scan { report: top, handles: vec![], session: None, frame: None },
            Scan {
                report: report(json!([{"n": 0, "role": "frame", "name": "x"}])),
                handles: vec![],
                session: None,
                frame: None,
            },
        ];
        assert_eq!(unread_frames(&scans), ["! deep (not read: nested more than 4 frames deep)"]);
    }

    // The operations in-process, against fake pages.
    use crate::runtime::test_context::{fake_page_model, fake_screenshot, tool, TestContext, FAKE_TITLE};
    use tool_server::ErrorCode;

    /// A browser node added by the person at the app: on the canvas, owned by nobody.
    fn unowned_browser(ctx: &mut TestContext) -> String {
        let kind = NodeKind::browser("https://example.com/").unwrap();
        ctx.add(kind, "Example", (0.0, 900.0, 800.0, 600.0)).to_string()
    }

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
        assert_eq!(page.methods(), ["Runtime.evaluate"], "one load probe");
        assert_eq!(ctx.node(&id).unwrap().rect.x, 640.0, "beside the caller");
        let e = ctx.run("browser_open", json!({"url": "javascript:alert(1)"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }

    #[test]
    fn browser_list_names_each_owner() {
        let mut ctx = TestContext::new();
        let agent = ctx.agent.node_id.clone();
        let unowned = unowned_browser(&mut ctx);
        let owned = ctx.run("browser_open", json!({"url": "https://example.org/"})).unwrap()["nodeId"].clone();
        let list = ctx.run("browser_list", json!({})).unwrap();
        assert_eq!(
            list,
            json!([
                {"nodeId": unowned, "url": "https://example.com/", "title": "", "owner": null},
                {"nodeId": owned, "url": "https://example.org/", "title": "", "owner": agent},
            ])
        );
    }

    #[test]
    fn browser_claim_takes_an_unowned_browser_once() {
        let mut ctx = TestContext::new();
        let b = unowned_browser(&mut ctx);
        let other = ctx.add_agent("Agent B");
        let v = ctx.call(&other, tool("browser_claim", json!({"nodeId": b}))).unwrap();
        assert_eq!(v, json!({"nodeId": b, "owner": other.node_id}));
        let e = ctx.run("browser_claim", json!({"nodeId": b})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(
            e.message(),
            format!("browser {b} is owned by agent {}; ask it to transfer it with browser_transfer", other.node_id)
        );
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (2000.0, 0.0, 100.0, 80.0));
        let e = ctx.run("browser_claim", json!({"nodeId": sticky})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message(), format!("node {sticky} is a sticky node, not a browser"));
    }

    #[test]
    fn browser_transfer_hands_an_owned_browser_to_another_agent() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let other = ctx.add_agent("Agent B");
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (2000.0, 0.0, 100.0, 80.0));
        let e = ctx.run("browser_transfer", json!({"nodeId": b, "agentNodeId": sticky})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.message(), format!("{sticky} is not an agent node of this project"));
        let v = ctx.run("browser_transfer", json!({"nodeId": b, "agentNodeId": other.node_id})).unwrap();
        assert_eq!(v, json!({"nodeId": b, "owner": other.node_id}));
        assert_eq!(ctx.rt.tools.shared.owners().owner(&b), Some(other.node_id.as_str()));
        let e = ctx.run("browser_transfer", json!({"nodeId": b, "agentNodeId": ctx.agent.node_id})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {b} is owned by agent {}, not by you", other.node_id));
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_transfer", json!({"nodeId": unowned, "agentNodeId": other.node_id})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {unowned} has no owner; claim it with browser_claim first"));
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

    /// A browser opened by the first agent (so owned by it).
    fn owned_browser(ctx: &mut TestContext) -> String {
        let v = ctx.run("browser_open", json!({"url": "https://example.com/"})).unwrap();
        v["nodeId"].as_str().expect("a node id").to_owned()
    }

    #[test]
    fn browser_inspect_reads_any_browser_not_owned_by_another_agent() {
        let mut ctx = TestContext::new();
        let b = unowned_browser(&mut ctx);
        let mut expected = fake_page_model("https://example.com/");
        expected["nodeId"] = json!(b);
        assert_eq!(ctx.run("browser_inspect", json!({"nodeId": b})).unwrap(), expected);
        // Refs live app-side: nothing is written into the page.
        let methods = ctx.page_of(&b).unwrap().methods();
        assert!(methods.contains(&"Page.createIsolatedWorld".to_owned()), "{methods:?}");
        assert!(methods.iter().all(|m| !m.contains("setAttribute")), "{methods:?}");
        assert!(!super::super::page_model::COLLECT_FN.contains("setAttribute"));
        let e = ctx.run("browser_inspect", json!({"nodeId": b, "page": 2})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::InvalidArgument, "page 2 is past the last page (1)"));
        let e = ctx.run("browser_inspect", json!({"nodeId": b, "within": "e5"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "{}", e.message());
        let other = ctx.add_agent("Agent B");
        ctx.call(&other, tool("browser_claim", json!({"nodeId": b}))).unwrap();
        let e = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(
            e.message(),
            format!("browser {b} is owned by agent {}; operations on it are refused", other.node_id)
        );
        let v = ctx.call(&other, tool("browser_inspect", json!({"nodeId": b, "screenshot": true}))).unwrap();
        assert_eq!(v["screenshot"]["width"], 4);
        assert_eq!(v["screenshot"]["mimeType"], "image/png");
    }

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

    #[test]
    fn browser_click_presses_the_mouse_at_the_element_centre() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let v = ctx.run("browser_click", json!({"nodeId": b, "ref": "e1"})).unwrap();
        assert_eq!(v, json!({"nodeId": b, "x": 50.0, "y": 20.0}));
        let mouse: Vec<_> = ctx
            .page_of(&b)
            .unwrap()
            .sent()
            .into_iter()
            .filter(|(m, _)| m == "Input.dispatchMouseEvent")
            .map(|(_, p)| (p["type"].as_str().unwrap().to_owned(), p["buttons"].clone(), p["x"].clone()))
            .collect();
        assert_eq!(
            mouse,
            [
                ("mouseMoved".to_owned(), json!(0), json!(50.0)),
                ("mousePressed".to_owned(), json!(1), json!(50.0)),
                ("mouseReleased".to_owned(), json!(0), json!(50.0)),
            ]
        );
        let e = ctx.run("browser_click", json!({"nodeId": b, "selector": "#nope"})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::PageError, "selector matched nothing: #nope"));
        let sent = ctx.page_of(&b).unwrap().sent().len();
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "e9"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message().starts_with("no element with ref e9: it was removed"), "{}", e.message());
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "f3e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "a frame slot this app never gave out: {}", e.message());
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "#go"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.message());
        let page = ctx.page_of(&b).unwrap();
        let after: Vec<_> = page.sent().into_iter().skip(sent).map(|(m, _)| m).collect();
        assert!(!after.iter().any(|m| m.starts_with("Input.")), "nothing was clicked: {after:?}");
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_click", json!({"nodeId": unowned, "ref": "e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {unowned} has no owner; claim it with browser_claim first"));
    }

    #[test]
    fn a_waiting_dialog_is_read_with_inspect_and_answered_with_click_and_type() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let page = ctx.page_of(&b).unwrap();
        let confirm = JsDialog {
            kind: DialogKind::Confirm,
            message: "Delete?".into(),
            default_prompt: String::new(),
            url: "https://example.com/".into(),
        };
        page.open_dialog(confirm.clone());
        let v = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap();
        assert_eq!(
            v["dialog"],
            json!({"type": "confirm", "message": "Delete?", "defaultPrompt": "", "url": "https://example.com/"})
        );
        assert_eq!(v["elements"], "dialog-ok button OK\ndialog-cancel button Cancel\n");
        let sent = page.methods().len();
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused, "{}", e.message());
        assert!(e.message().contains("dialog-ok"), "{}", e.message());
        assert_eq!(page.methods().len(), sent, "nothing reached the blocked page");
        let v = ctx.run("browser_click", json!({"nodeId": b, "ref": "dialog-cancel"})).unwrap();
        assert_eq!((v["accepted"].clone(), v["answered"]["type"].clone()), (json!(false), json!("confirm")));
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "dialog-ok"})).unwrap_err();
        assert_eq!(e.message(), "No dialog is showing");

        page.open_dialog(JsDialog {
            kind: DialogKind::Prompt,
            message: "Name?".into(),
            default_prompt: "x".into(),
            ..confirm
        });
        let v = ctx.run("browser_type", json!({"nodeId": b, "ref": "dialog-input", "text": "Ada"})).unwrap();
        assert_eq!(v["text"], "Ada");
        assert_eq!(*page.dialog_answers.lock(), [(false, None), (true, Some("Ada".to_string()))]);
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_click", json!({"nodeId": unowned, "ref": "dialog-ok"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused, "only the owner answers");
    }

    #[test]
    fn an_open_file_chooser_is_reported_by_click_and_inspect() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let v = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap();
        assert!(v.get("fileChooser").is_none(), "{v}");
        ctx.page_of(&b).unwrap().open_file_chooser(cef_bridge::FileChooser {
            mode: cef_bridge::ChooserMode::OpenMultiple,
            title: String::new(),
            default_path: String::new(),
            accept: vec!["image/*".into()],
        });
        let want = json!({"mode": "openMultiple", "accept": ["image/*"], "answeredBy": "the user, in the window"});
        let v = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap();
        assert_eq!(v["fileChooser"], want);
        let v = ctx.run("browser_click", json!({"nodeId": b, "ref": "e1"})).unwrap();
        assert_eq!(v["fileChooser"], want, "the page keeps working: clicks go on while it is open");
    }

    #[test]
    fn browser_type_focuses_the_element_and_types_key_by_key() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let e = ctx.run("browser_type", json!({"nodeId": b, "text": "hi"})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::InvalidArgument, "no element has focus; pass a selector or ref"));
        let v = ctx.run("browser_type", json!({"nodeId": b, "selector": "#go", "text": "hé!"})).unwrap();
        assert_eq!(v, json!({"nodeId": b, "typed": 3}));
        let typed: Vec<_> =
            ctx.page_of(&b).unwrap().sent().into_iter().filter(|(m, _)| m.starts_with("Input.")).collect();
        let expected: Vec<_> = typing_events("hé!").into_iter().map(|(m, p)| (m.to_owned(), p)).collect();
        assert_eq!(typed, expected);
        // Focused now: typing without a target goes to it.
        assert_eq!(
            ctx.run("browser_type", json!({"nodeId": b, "text": "x"})).unwrap(),
            json!({"nodeId": b, "typed": 1})
        );
    }
}
