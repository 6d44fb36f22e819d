//! Browser operations of the agent tool runtime. Ownership checks and node
//! lookups happen on the main thread; everything that waits on the page
//! (DevTools replies, loads) happens on the operation's worker thread, since
//! the main thread must keep pumping CEF for those replies to arrive.

use super::context::{beside, caller_project, model_error, target_node, KindTag, OpContext};
use crate::model::{NodeId, NodeKind};
use crate::runtime::engine::Browser;
use base64::Engine as _;
use cef_bridge::DevToolsChannel;
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
const DEFAULT_TEXT_CHARS: u64 = 4_000;
/// Most interactive elements inspect lists.
const MAX_ELEMENTS: u32 = 300;

/// The page model script: interactive elements with stable refs (kept in
/// `data-termsprawl-ref` attributes so a ref names the same element across
/// calls), roles, accessible names, values, boxes, and the visible text.
const INSPECT_JS: &str = r#"((args) => {
  const root = args.selector ? document.querySelector(args.selector) : (document.body || document.documentElement);
  if (!root) return {error: 'selector matched nothing: ' + args.selector};
  const q = 'a[href],button,input,select,textarea,summary,[role],[onclick],[tabindex],[contenteditable=""],[contenteditable="true"]';
  const found = Array.from(root.querySelectorAll(q));
  if (root.matches && root.matches(q)) found.unshift(root);
  const clip = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n) + '…' : s; };
  const implicitRole = (el) => {
    const t = el.tagName.toLowerCase();
    if (t === 'a') return 'link';
    if (t === 'button' || t === 'summary') return 'button';
    if (t === 'select') return el.multiple ? 'listbox' : 'combobox';
    if (t === 'textarea') return 'textbox';
    if (t === 'input') {
      const ty = (el.type || 'text').toLowerCase();
      return ({checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
               button: 'button', submit: 'button', reset: 'button', image: 'button'})[ty] || 'textbox';
    }
    if (el.isContentEditable) return 'textbox';
    return 'generic';
  };
  const nameOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return aria;
    const by = el.getAttribute('aria-labelledby');
    if (by) { const t = by.split(/\s+/).map(id => document.getElementById(id)).filter(Boolean).map(e => e.innerText).join(' '); if (t.trim()) return t; }
    if (el.labels && el.labels.length) return Array.from(el.labels).map(l => l.innerText).join(' ');
    if (el.alt) return el.alt;
    const t = el.tagName.toLowerCase();
    if (t === 'input' && ['button', 'submit', 'reset'].includes((el.type || '').toLowerCase())) return el.value;
    if (t !== 'input' && t !== 'textarea' && t !== 'select' && el.innerText && el.innerText.trim()) return el.innerText;
    return el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('name') || '';
  };
  window.__termsprawlRefSeq = window.__termsprawlRefSeq || 0;
  const elements = [];
  let truncated = false;
  for (const el of found) {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none') continue;
    if (elements.length >= args.maxElements) { truncated = true; break; }
    let ref = el.getAttribute('data-termsprawl-ref');
    if (!ref) { ref = 'e' + (++window.__termsprawlRefSeq); el.setAttribute('data-termsprawl-ref', ref); }
    const e = {ref, role: el.getAttribute('role') || implicitRole(el), name: clip(nameOf(el), 120), tag: el.tagName.toLowerCase(),
               box: {x: Math.round(r.left), y: Math.round(r.top), width: Math.round(r.width), height: Math.round(r.height)}};
    if ('value' in el && el.tagName !== 'BUTTON' && typeof el.value === 'string') e.value = clip(el.value, 200);
    if (el.type === 'checkbox' || el.type === 'radio') e.checked = !!el.checked;
    if (el.disabled) e.disabled = true;
    if (el.tagName === 'A' && el.href) e.href = el.href;
    const text = clip(el.innerText, 80);
    if (text && text !== e.name) e.text = text;
    elements.push(e);
  }
  const all = (root.innerText || '').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
  return {url: location.href, title: document.title, text: all.slice(0, args.maxChars), textTruncated: all.length > args.maxChars,
          elements, elementsTruncated: truncated,
          viewport: {width: innerWidth, height: innerHeight, scrollX: Math.round(scrollX), scrollY: Math.round(scrollY)}};
})"#;

/// Finds an element by ref or selector, scrolls it into view and returns its
/// centre in viewport CSS pixels, and whether it is the topmost element there.
const LOCATE_JS: &str = r#"((args) => {
  let el;
  try { el = args.ref ? document.querySelector('[data-termsprawl-ref="' + CSS.escape(args.ref) + '"]') : document.querySelector(args.selector); }
  catch (e) { return {error: 'invalid selector: ' + args.selector}; }
  if (!el) return {error: args.ref ? 'no element with ref ' + args.ref + ' (refs come from browser_inspect on the current page)' : 'selector matched nothing: ' + args.selector};
  el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  const r = el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return {error: 'the element is not visible'};
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const top = document.elementFromPoint(x, y);
  if (args.focus) {
    el.focus();
    if (document.activeElement !== el && !el.contains(document.activeElement)) return {error: 'the element cannot take keyboard focus'};
    try { if (typeof el.value === 'string' && el.setSelectionRange) el.setSelectionRange(el.value.length, el.value.length); } catch (e) {}
  }
  return {x, y, covered: !!top && top !== el && !el.contains(top)};
})"#;

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
    if let Some(ex) = r.get("exceptionDetails") {
        let msg = ex
            .pointer("/exception/description")
            .and_then(Value::as_str)
            .or_else(|| ex.get("text").and_then(Value::as_str))
            .unwrap_or("script error");
        return Err(ToolError::page_error(format!("page script failed: {}", msg.lines().next().unwrap_or(msg))));
    }
    Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

/// Calls `script` (a function expression) with `args` as JSON.
fn call_script(dt: &DevToolsChannel, script: &str, args: &Value) -> Result<Value, ToolError> {
    let v = evaluate(dt, &format!("{script}({args})"))?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(ToolError::page_error(e));
    }
    Ok(v)
}

/// A DevTools failure (the page went away, a command timed out…) as the agent sees it.
fn page_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::page_error(e.to_string())
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
                NodeKind::Browser { tabs, active_tab } => {
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

/// `browser_inspect`: the compact page model, optionally with a screenshot.
pub(crate) fn inspect(ctx: &OpContext, args: InspectArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_read(id, ctx.caller())?;
    let script_args = json!({
        "selector": args.selector,
        "maxChars": args.max_chars.unwrap_or(DEFAULT_TEXT_CHARS),
        "maxElements": MAX_ELEMENTS,
    });
    let mut page = call_script(&t.handle.devtools(), INSPECT_JS, &script_args)?;
    page["nodeId"] = json!(t.node);
    if args.screenshot == Some(true) {
        page["screenshot"] = capture(ctx, &t)?;
    }
    Ok(page)
}

/// Resolves the ref or selector of a click/type request to a viewport point.
fn locate(
    dt: &DevToolsChannel,
    element_ref: Option<&str>,
    selector: Option<&str>,
    focus: bool,
) -> Result<Value, ToolError> {
    let args = json!({"ref": element_ref, "selector": selector, "focus": focus});
    call_script(dt, LOCATE_JS, &args)
}

/// `browser_click`: real mouse events at the element's centre.
pub(crate) fn click(ctx: &OpContext, args: ClickArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    let dt = t.handle.devtools();
    let at = locate(&dt, args.element_ref.as_deref(), args.selector.as_deref(), false)?;
    let position = |axis: &str| at[axis].as_f64().ok_or_else(|| ToolError::page_error("no element position"));
    let (x, y) = (position("x")?, position("y")?);
    let mouse = |kind: &str, buttons: u32| {
        dt.call("Input.dispatchMouseEvent", json!({"type": kind, "x": x, "y": y, "button": if kind == "mouseMoved" { "none" } else { "left" }, "buttons": buttons, "clickCount": 1}), DEVTOOLS_TIMEOUT)
            .map_err(page_error)
    };
    mouse("mouseMoved", 0)?;
    mouse("mousePressed", 1)?;
    mouse("mouseReleased", 0)?;
    Ok(json!({"nodeId": t.node, "x": x, "y": y, "covered": at["covered"]}))
}

/// `browser_type`: focuses the element (or keeps the focused one) and types the text.
pub(crate) fn type_text(ctx: &OpContext, args: TypeArgs) -> Result<Value, ToolError> {
    let (id, text) = (args.node_id.as_str(), args.text.as_str());
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    let dt = t.handle.devtools();
    if args.element_ref.is_some() || args.selector.is_some() {
        locate(&dt, args.element_ref.as_deref(), args.selector.as_deref(), true)?;
    } else if evaluate(&dt, FOCUSED_JS)?.get("focused") != Some(&Value::Bool(true)) {
        return Err(ToolError::invalid_argument("no element has focus; pass a selector or ref"));
    }
    send_in_order(&dt, &typing_events(text))?;
    Ok(json!({"nodeId": t.node, "typed": text.chars().count()}))
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
        assert_eq!(v, json!({"nodeId": b, "x": 50.0, "y": 20.0, "covered": false}));
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
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_click", json!({"nodeId": unowned, "ref": "e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {unowned} has no owner; claim it with browser_claim first"));
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
