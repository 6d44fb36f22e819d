//! The page model `browser_inspect` returns: what the page script reports
//! for each frame, the refs that name elements app-side (DevTools backend
//! node ids, never attributes written into the page), and the compact text
//! an agent reads (one line an element, hrefs made relative).

use super::session::{answered, step_error, Session, GROUP, WORLD};
use page_driver::{BackendNodeId, FrameId, FunctionCall, ObjectId};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use tool_server::ToolError;

/// Most elements one answer lists; the rest are named and reachable with
/// `page`, `within` or `selector`.
pub(super) const PAGE_SIZE: usize = 150;
/// Most characters of element lines one answer lists (long names and hrefs
/// make a page end sooner).
pub(super) const PAGE_CHARS: usize = 6_000;

/// Splits lines of the given sizes into pages of at most [`PAGE_SIZE`]
/// lines and [`PAGE_CHARS`] characters (a page holds at least one line):
/// the start of each page.
pub(super) fn page_starts(sizes: &[usize]) -> Vec<usize> {
    let mut starts = vec![0];
    let (mut count, mut chars) = (0, 0);
    for (i, &size) in sizes.iter().enumerate() {
        if count > 0 && (count == PAGE_SIZE || chars + size > PAGE_CHARS) {
            starts.push(i);
            (count, chars) = (0, 0);
        }
        count += 1;
        chars += size;
    }
    starts
}

/// The collector, run with `this` = the document (or subtree) to read, in an
/// isolated world of each frame so the page cannot see or patch it. It returns
/// the array of nodes that need refs (elements, iframes, landmarks) with the
/// report as a JSON string in its `info` property, so one `getProperties` call
/// yields both the report and a handle on every node.
pub(super) const COLLECT_FN: &str = r#"function (args) {
  const root = this, doc = root.ownerDocument || root, win = doc.defaultView;
  const INTERACTIVE = 'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,iframe,frame,[onclick],[contenteditable=""],[contenteditable=true],[tabindex]:not([tabindex="-1"]),[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=option],[role=switch],[role=textbox],[role=combobox],[role=searchbox],[role=slider],[role=spinbutton],[role=treeitem]';
  const LANDMARK = 'nav,main,aside,[role=navigation],[role=main],[role=complementary],[role=banner],[role=contentinfo],[role=search],[role=region][aria-label],body>header,body>footer';
  const clip = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n) + '…' : s; };
  const implicitRole = (el) => {
    const t = el.localName;
    if (t === 'a' || t === 'area') return 'link';
    if (t === 'button' || t === 'summary') return 'button';
    if (t === 'select') return el.multiple ? 'listbox' : 'combobox';
    if (t === 'textarea') return 'textbox';
    if (t === 'iframe' || t === 'frame') return 'frame';
    if (t === 'input') {
      const ty = (el.type || 'text').toLowerCase();
      return ({checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
               button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button'})[ty] || 'textbox';
    }
    if (el.isContentEditable) return 'textbox';
    return 'generic';
  };
  const landmarkRole = (el) => el.getAttribute('role') || ({nav: 'navigation', main: 'main', aside: 'complementary', header: 'banner', footer: 'contentinfo'})[el.localName] || 'region';
  const byId = (el, id) => { const r = el.getRootNode(); return (r.getElementById ? r : doc).getElementById(id); };
  const nameOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria && aria.trim()) return aria;
    const by = el.getAttribute('aria-labelledby');
    if (by) { const t = by.split(/\s+/).map(id => byId(el, id)).filter(Boolean).map(e => e.textContent).join(' '); if (t.trim()) return t; }
    if (el.labels && el.labels.length) return Array.from(el.labels).map(l => l.innerText).join(' ');
    const t = el.localName;
    if (t === 'img' || t === 'area') return el.alt || '';
    if (t === 'input' && ['button', 'submit', 'reset'].includes((el.type || '').toLowerCase())) return el.value;
    if (t !== 'input' && t !== 'textarea' && t !== 'select' && t !== 'iframe') {
      const text = el.innerText;
      if (text && text.trim()) return text;
      const img = el.querySelector('img[alt]');
      if (img && img.alt) return img.alt;
    }
    return el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('name') || '';
  };
  const de = doc.documentElement;
  const pageW = Math.max(de.scrollWidth, win.innerWidth), pageH = Math.max(de.scrollHeight, win.innerHeight);
  const nodes = [], items = [], landmarks = [], lmIndex = new Map();
  let hidden = 0, off = 0;
  const landmarkOf = (el) => {
    for (let n = el; n; ) {
      const l = n.parentElement ? n.parentElement.closest(LANDMARK) : null;
      if (l) return l;
      const r = n.getRootNode();
      n = r.host || null;
    }
    return null;
  };
  const lmOf = (el) => {
    const l = landmarkOf(el);
    if (!l) return -1;
    let i = lmIndex.get(l);
    if (i === undefined) {
      i = landmarks.length;
      lmIndex.set(l, i);
      nodes.push(l);
      landmarks.push({n: nodes.length - 1, role: landmarkRole(l), name: clip(l.getAttribute('aria-label') || (l.getAttribute('aria-labelledby') ? nameOf(l) : ''), 40), listed: 0, off: 0});
    }
    return i;
  };
  const consider = (el) => {
    if (!el.matches(INTERACTIVE)) return;
    if (el.checkVisibility ? !el.checkVisibility({checkVisibilityCSS: true}) : getComputedStyle(el).visibility === 'hidden') { hidden++; return; }
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) { hidden++; return; }
    const lm = lmOf(el);
    // Where scrolling cannot bring it: an off-canvas drawer, a skip link parked at -9999px.
    const x = r.left + win.scrollX, y = r.top + win.scrollY;
    if (x + r.width <= 0 || y + r.height <= 0 || x >= pageW || y >= pageH) {
      off++;
      if (lm >= 0) landmarks[lm].off++;
      return;
    }
    if (lm >= 0) landmarks[lm].listed++;
    nodes.push(el);
    const role = el.getAttribute('role') || implicitRole(el);
    const e = {n: nodes.length - 1, role, name: clip(nameOf(el), 80), lm};
    if (role === 'frame') e.name = clip(el.title || el.name || '', 40);
    const t = el.localName;
    if ((t === 'input' || t === 'textarea' || t === 'select') && typeof el.value === 'string' && !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(el.type)) e.value = clip(el.value, 100);
    if (el.type === 'checkbox' || el.type === 'radio') e.checked = !!el.checked;
    else if (el.hasAttribute('aria-checked')) e.checked = el.getAttribute('aria-checked') === 'true';
    if (el.hasAttribute('aria-expanded')) e.expanded = el.getAttribute('aria-expanded') === 'true';
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') e.disabled = true;
    if ((t === 'a' || t === 'area') && el.href) e.href = el.href;
    if (role === 'frame') e.src = el.src || '';
    items.push(e);
  };
  const scan = (r) => {
    if (r.nodeType === 1) { consider(r); if (r.shadowRoot) scan(r.shadowRoot); }
    for (const el of r.querySelectorAll('*')) { consider(el); if (el.shadowRoot) scan(el.shadowRoot); }
  };
  scan(root);
  const info = {url: doc.URL, title: doc.title, items, landmarks, hidden, off,
                viewport: [win.innerWidth, win.innerHeight, Math.round(win.scrollX), Math.round(win.scrollY), pageW, pageH]};
  if (args.maxChars !== null) {
    const all = ((root.body || root).innerText || '').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
    info.text = all.slice(0, args.maxChars);
    info.textChars = all.length;
  }
  nodes.info = JSON.stringify(info);
  return nodes;
}"#;

/// One interactive element as the collector reports it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(super) struct Item {
    /// Index into the collector's node array.
    pub n: usize,
    pub role: String,
    #[serde(default)]
    pub name: String,
    /// Landmark index, -1 for none.
    #[serde(default = "no_landmark")]
    pub lm: i64,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub checked: Option<bool>,
    #[serde(default)]
    pub expanded: Option<bool>,
    #[serde(default)]
    pub disabled: bool,
    #[serde(default)]
    pub href: Option<String>,
    /// The frame's address, for iframes.
    #[serde(default)]
    pub src: Option<String>,
}

fn no_landmark() -> i64 {
    -1
}

/// A landmark (navigation, main…) that holds interactive elements.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(super) struct Landmark {
    pub n: usize,
    pub role: String,
    #[serde(default)]
    pub name: String,
    /// Its elements that are listed (on some page).
    pub listed: usize,
    /// Its elements that scrolling cannot reach (an off-canvas drawer).
    pub off: usize,
}

/// What the collector reports for one frame (or subtree).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(super) struct FrameReport {
    pub url: String,
    #[serde(default)]
    pub title: String,
    pub items: Vec<Item>,
    #[serde(default)]
    pub landmarks: Vec<Landmark>,
    /// Interactive elements that are hidden or have no size (not counted as visible).
    #[serde(default)]
    pub hidden: usize,
    /// Interactive elements that scrolling cannot reach.
    #[serde(default)]
    pub off: usize,
    /// innerWidth, innerHeight, scrollX, scrollY, page width, page height.
    #[serde(default)]
    pub viewport: Vec<i64>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default, rename = "textChars")]
    pub text_chars: usize,
}

/// An element ref: a backend node id, in the page's own process (`e42`) or in
/// an out-of-process frame the app keeps a table of (`f2e42`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NodeRef {
    /// Index into the app's table of out-of-process frames, `None` for the page's process.
    pub frame: Option<usize>,
    pub backend: BackendNodeId,
}

impl NodeRef {
    /// Parses `e42` or `f2e42`.
    pub fn parse(s: &str) -> Option<NodeRef> {
        let (frame, rest) = match s.strip_prefix('f') {
            Some(rest) => {
                let (f, node) = rest.split_once('e')?;
                (Some(f.parse().ok()?), node)
            }
            None => (None, s.strip_prefix('e')?),
        };
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(NodeRef { frame, backend: BackendNodeId(rest.parse().ok()?) })
    }
}

impl std::fmt::Display for NodeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.frame {
            Some(frame) => write!(f, "f{frame}e{}", self.backend.0),
            None => write!(f, "e{}", self.backend.0),
        }
    }
}

/// An element in the merged list of every frame, with its ref once resolved.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Listed {
    pub item: Item,
    /// Nesting depth (0 for the top document, 1 inside an iframe…).
    pub depth: usize,
    /// Address of the document it is in, for relative hrefs.
    pub base: String,
    pub node_ref: Option<NodeRef>,
}

/// Longest fragment kept whole in an href; longer ones are cut (the link is still clicked by ref).
const MAX_FRAGMENT: usize = 24;

/// An `href` as short as it can be said relative to `base` (the document's
/// address): `#id` on the same page, a relative path on the same origin,
/// the whole address elsewhere. A fragment that only spells the link's
/// `name` (a table of contents: "4.1. if Statements" → `#if-statements`) is
/// left out, a long one cut with `…`.
pub(super) fn short_href(href: &str, base: &str, name: &str) -> String {
    let (Ok(h), Ok(b)) = (url::Url::parse(href), url::Url::parse(base)) else {
        return href.to_owned();
    };
    if h.origin() != b.origin() || !matches!(h.scheme(), "http" | "https") {
        return href.to_owned();
    }
    let same_page = h.path() == b.path() && h.query() == b.query();
    let fragment = h.fragment().map(|f| {
        // On the same page the fragment is all there is to say.
        if spells(name, f) && !same_page {
            String::new()
        } else if f.chars().count() > MAX_FRAGMENT {
            format!("#{}…", f.chars().take(MAX_FRAGMENT).collect::<String>())
        } else {
            format!("#{f}")
        }
    });
    if same_page {
        return match fragment {
            Some(f) if !f.is_empty() => f,
            _ => "#".to_owned(),
        };
    }
    let mut bare = h.clone();
    bare.set_fragment(None);
    let path = b.make_relative(&bare).filter(|r| !r.is_empty() && r.len() <= bare.path().len()).unwrap_or_else(|| {
        let mut s = bare.path().to_owned();
        if let Some(q) = bare.query() {
            s.push('?');
            s.push_str(q);
        }
        s
    });
    path + fragment.as_deref().unwrap_or("")
}

/// Whether `fragment` is only `name` spelled as an id (words joined by `-`).
fn spells(name: &str, fragment: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let (n, f) = (words(name), words(fragment));
    !f.is_empty() && f.iter().all(|w| n.contains(w))
}

/// One element as a line: `ref role name [state] → href`.
pub(super) fn element_line(e: &Listed, out: &mut String) {
    for _ in 0..e.depth {
        out.push(' ');
    }
    match e.node_ref {
        Some(r) => {
            let _ = write!(out, "{r} ");
        }
        None => out.push_str("? "),
    }
    let i = &e.item;
    out.push_str(&i.role);
    if !i.name.is_empty() {
        out.push(' ');
        out.push_str(&i.name);
    }
    if let Some(v) = i.value.as_deref().filter(|v| !v.is_empty()) {
        let _ = write!(out, " ={v}");
    }
    match i.checked {
        Some(true) => out.push_str(" [checked]"),
        Some(false) => out.push_str(" [unchecked]"),
        None => {}
    }
    match i.expanded {
        Some(true) => out.push_str(" [expanded]"),
        Some(false) => out.push_str(" [collapsed]"),
        None => {}
    }
    if i.disabled {
        out.push_str(" [disabled]");
    }
    if let Some(h) = &i.href {
        let short = short_href(h, &e.base, &i.name);
        if short != i.name {
            let _ = write!(out, " → {short}");
        }
    }
    if let Some(src) = &i.src {
        let _ = write!(out, " {}:", short_href(src, &e.base, ""));
    }
    out.push('\n');
}

/// The collector's one argument.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CollectArgs {
    /// How much of the page's text to return (`null`: none).
    max_chars: Option<u64>,
}

/// The collector's report on one document or subtree, with handles on its nodes.
pub(super) struct Scan {
    pub report: FrameReport,
    /// Remote object of each node the report indexes.
    pub handles: Vec<Option<ObjectId>>,
    /// Child session it was read through (`None`: the page's own).
    pub session: Option<page_driver::SessionId>,
    /// Slot in the app's table of out-of-process frames (for refs).
    pub frame: Option<usize>,
}

/// Reads one frame (its isolated world) or one subtree (`root`, an object).
pub(super) fn collect(
    s: Session,
    root: Root,
    max_chars: Option<u64>,
) -> Result<(FrameReport, Vec<Option<ObjectId>>), ToolError> {
    let args = CollectArgs { max_chars };
    let nodes = match root {
        Root::Frame(frame_id) => {
            let context = s.page.create_isolated_world(s.id, frame_id, WORLD).map_err(step_error)?;
            let args = serde_json::to_string(&args).map_err(|e| ToolError::failed(e.to_string()))?;
            let expression = format!("({COLLECT_FN}).call(document, {args})");
            s.page.evaluate_object(s.id, &expression, Some(context), GROUP).map_err(step_error)?
        }
        Root::Object(object) => {
            let args = serde_json::to_value(&args).map_err(|e| ToolError::failed(e.to_string()))?;
            let call = FunctionCall { object, declaration: COLLECT_FN, args, by_value: false, group: GROUP };
            s.page.call_function_on(s.id, &call).map_err(step_error)?
        }
    };
    let array = nodes.object_id.ok_or_else(|| ToolError::page_error("the page model script returned nothing"))?;
    let props = s.page.properties(s.id, &array).map_err(step_error)?;
    let mut handles = vec![];
    let mut report = None;
    for p in props {
        if p.name == "info" {
            let text = p.value.and_then(|v| v.value).and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
            report = Some(
                serde_json::from_str::<FrameReport>(&text)
                    .map_err(|e| ToolError::page_error(format!("unreadable page model: {e}")))?,
            );
        } else if let Ok(i) = p.name.parse::<usize>() {
            if handles.len() <= i {
                handles.resize(i + 1, None);
            }
            handles[i] = p.value.and_then(|v| v.object_id);
        }
    }
    let report = report.ok_or_else(|| ToolError::page_error("the page model script returned no report"))?;
    Ok((report, handles))
}

/// What the collector reads from.
#[derive(Clone, Copy)]
pub(super) enum Root<'a> {
    /// A frame's whole document.
    Frame(&'a FrameId),
    /// A subtree, by remote object.
    Object(&'a ObjectId),
}

/// The frame ids of a session's frame tree, root first.
pub(super) fn frame_ids(s: Session) -> Result<Vec<FrameId>, ToolError> {
    Ok(s.page.frame_tree(s.id).map_err(step_error)?.ids())
}

/// A described node: its backend node id, and its frame's id when it owns a frame.
pub(super) type Described = Option<(BackendNodeId, Option<FrameId>)>;

/// Backend node id (and frame id, for a frame owner) of each object, asked all at once.
pub(super) fn describe(s: Session, objects: &[&ObjectId]) -> Result<Vec<Described>, ToolError> {
    let pending =
        objects.iter().map(|o| s.page.describe_node(s.id, o).map_err(step_error)).collect::<Result<Vec<_>, _>>()?;
    pending.into_iter().map(|p| Ok(answered(p.wait())?.map(|node| (node.backend_node_id, node.frame_id)))).collect()
}

/// Lets go of what inspect held in the page (nothing to let go of, and
/// nobody to answer, once the renderer died).
pub(super) fn release(s: Session) {
    if s.page.crashed() {
        return;
    }
    let _ = s.page.release_object_group(s.id, GROUP);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_end_at_the_line_or_character_budget() {
        assert_eq!(page_starts(&[]), [0]);
        assert_eq!(page_starts(&[10; 300]), [0, 150]);
        assert_eq!(page_starts(&[10; 301]), [0, 150, 300]);
        assert_eq!(page_starts(&[100; 130]), [0, 60, 120]);
        assert_eq!(page_starts(&[9_000, 10, 9_000]), [0, 1, 2], "a line longer than a page is a page");
    }

    #[test]
    fn refs_round_trip_and_reject_anything_else() {
        for s in ["e1", "e123456", "f0e7", "f12e3"] {
            assert_eq!(NodeRef::parse(s).map(|r| r.to_string()).as_deref(), Some(s));
        }
        assert_eq!(NodeRef::parse("f2e9"), Some(NodeRef { frame: Some(2), backend: BackendNodeId(9) }));
        for bad in ["", "e", "x1", "e1a", "fe1", "f1", "f1e", "e-1", "e 1", "dialog-ok", "e99999999999999999999999"] {
            assert_eq!(NodeRef::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn hrefs_are_said_relative_to_the_page() {
        let base = "http://127.0.0.1:8000/library/stdtypes.html";
        let short = |href: &str| short_href(href, base, "");
        assert_eq!(short("http://127.0.0.1:8000/library/stdtypes.html#str"), "#str");
        assert_eq!(short("http://127.0.0.1:8000/library/stdtypes.html"), "#");
        assert_eq!(short("http://127.0.0.1:8000/library/functions.html#len"), "functions.html#len");
        assert_eq!(short("http://127.0.0.1:8000/reference/index.html"), "/reference/index.html", "the shorter");
        assert_eq!(short("http://127.0.0.1:8000/library/x/y.html"), "x/y.html");
        assert_eq!(short("http://127.0.0.1:9000/x.html"), "http://127.0.0.1:9000/x.html");
        assert_eq!(short("mailto:a@b.c"), "mailto:a@b.c");
        assert_eq!(short("not a url"), "not a url");
        assert_eq!(
            short("http://127.0.0.1:8000/tutorial/controlflow.html#break-and-continue-statements-and-else"),
            "/tutorial/controlflow.html#break-and-continue-state…"
        );
        // A fragment that only spells the link's name says nothing the name does not.
        let toc = "http://127.0.0.1:8000/library/controlflow.html#if-statements";
        assert_eq!(short_href(toc, base, "4.1. if Statements"), "controlflow.html");
        assert_eq!(short_href(toc, base, "Conditions"), "controlflow.html#if-statements");
        assert_eq!(short_href("http://127.0.0.1:8000/library/stdtypes.html#str.split", base, "split"), "#str.split");
        assert_eq!(
            short_href("http://127.0.0.1:8000/library/stdtypes.html#str", base, "str"),
            "#str",
            "never a bare #"
        );
    }

    #[test]
    fn an_element_line_says_role_name_state_and_href() {
        let item = |role: &str, name: &str| Item {
            n: 0,
            role: role.into(),
            name: name.into(),
            lm: -1,
            value: None,
            checked: None,
            expanded: None,
            disabled: false,
            href: None,
            src: None,
        };
        let base = "http://127.0.0.1:8000/a/b.html".to_owned();
        let mut out = String::new();
        let mut link = item("link", "Next");
        link.href = Some("http://127.0.0.1:8000/a/c.html".into());
        let mut same = item("link", "http://127.0.0.1:9/");
        same.href = Some("http://127.0.0.1:9/".into());
        let mut input = item("textbox", "Name");
        input.value = Some("Ada".into());
        input.disabled = true;
        let mut check = item("checkbox", "Agree");
        check.checked = Some(false);
        let mut frame = item("frame", "ads");
        frame.src = Some("http://localhost:9000/f.html".into());
        let mut empty = item("textbox", "Search");
        empty.value = Some(String::new());
        let all = [(link, 0), (input, 0), (check, 1), (frame, 0), (item("button", ""), 0), (same, 0), (empty, 0)];
        for (i, (it, depth)) in all.into_iter().enumerate() {
            let node_ref =
                (i != 4).then_some(NodeRef { frame: (depth == 1).then_some(1), backend: BackendNodeId(10 + i as u64) });
            element_line(&Listed { item: it, depth, base: base.clone(), node_ref }, &mut out);
        }
        assert_eq!(
            out,
            "e10 link Next → c.html\ne11 textbox Name =Ada [disabled]\n f1e12 checkbox Agree [unchecked]\ne13 frame ads http://localhost:9000/f.html:\n? button\ne15 link http://127.0.0.1:9/\ne16 textbox Search\n"
        );
    }
}
