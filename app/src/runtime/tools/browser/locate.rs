//! Where a click or typing lands: the element of a ref or selector scrolled
//! into view, checked visible and uncovered in its own frame and in every
//! page around it, and its centre in the top viewport.

use super::super::context::ToolShared;
use super::page_model::{describe, frame_ids};
use super::refs::{gone_ref, parse_ref, query_selector, resolve_node, Frames};
use super::session::{answered, step_error, Session, GROUP, WORLD};
use page_driver::{BackendNodeId, FrameId, FunctionCall, ObjectId, Page, PageExt as _, Quad};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_server::ToolError;

/// Scrolls the element (`this`) into view and checks a click there would
/// reach it: connected, rendered, inside the viewport and the topmost element
/// at its centre (hit test through shadow roots). With `focus`, focuses it.
const LOCATE_FN: &str = r#"function (args) {
  const el = this;
  const what = (n) => n ? n.localName + (n.id ? '#' + n.id : '') + (typeof n.className === 'string' && n.className.trim() ? '.' + n.className.trim().split(/\s+/).join('.') : '') : 'nothing';
  // A node of a document the frame has left still has a root, but no window.
  if (!el.isConnected || !el.ownerDocument || !el.ownerDocument.defaultView) return {error: 'gone'};
  el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  if (el.checkVisibility && !el.checkVisibility({checkVisibilityCSS: true})) return {error: 'hidden', detail: 'it is hidden (display, visibility or content-visibility)'};
  const r = el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return {error: 'hidden', detail: 'it has no size'};
  const win = el.ownerDocument.defaultView;
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  if (x < 0 || y < 0 || x >= win.innerWidth || y >= win.innerHeight) return {error: 'hidden', detail: 'it lies outside the page and scrolling cannot reach it'};
  const scope = el.getRootNode();
  const top = (scope.elementFromPoint ? scope : el.ownerDocument).elementFromPoint(x, y);
  const inside = (n) => { for (; n; n = n.parentNode || n.host) { if (n === el) return true; } return false; };
  // A label's own control is reached through its label.
  const label = top && top.closest && top.closest('label');
  if (!inside(top) && !(label && label.control === el)) return {error: 'covered', detail: 'covered by ' + what(top)};
  if (args.focus) {
    el.focus();
    let a = el.ownerDocument.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    if (!inside(a)) return {error: 'unfocusable'};
    try { if (typeof el.value === 'string' && el.setSelectionRange) el.setSelectionRange(el.value.length, el.value.length); } catch (e) {}
  }
  return {x, y};
}"#;

/// [`LOCATE_FN`]'s argument.
#[derive(Serialize)]
struct LocateArgs {
    focus: bool,
}

/// [`PARENT_HIT_FN`]'s argument.
#[derive(Serialize)]
struct ParentArgs {
    x: f64,
    y: f64,
    owner: bool,
}

/// What [`LOCATE_FN`] and [`PARENT_HIT_FN`] answer: a point (and whether
/// its page is the top one), or why a click there would miss.
#[derive(Debug, Default, Deserialize)]
struct Hit {
    error: Option<String>,
    detail: Option<String>,
    #[serde(default)]
    x: f64,
    #[serde(default)]
    y: f64,
    #[serde(default)]
    top: bool,
}

/// Where a click on the element of a ref or selector lands, in the page's
/// viewport: scrolled into view, checked visible and uncovered (and focused
/// for typing). Fails, touching nothing, when it is gone, hidden or covered.
pub(super) fn locate(
    shared: &ToolShared,
    page: &dyn Page,
    element_ref: Option<&str>,
    selector: Option<&str>,
    focus: bool,
) -> Result<(f64, f64), ToolError> {
    let mut frames = Frames::new(page, shared);
    let main = frames.main();
    let result = (|| {
        let (what, session, object, frame) = match (element_ref, selector) {
            (Some(r), _) => {
                let (session, object) = frames.resolve_ref(r)?;
                let frame = parse_ref(r)?.frame.and_then(|slot| shared.frame_id(slot)).map(FrameId::new);
                (format!("ref {r}"), session, object, frame)
            }
            (None, Some(sel)) => (format!("selector {sel}"), None, query_selector(main, sel)?, None),
            (None, None) => return Err(ToolError::invalid_argument("pass a selector or ref")),
        };
        let s = Session { page, id: session.as_ref() };
        let fail = |hit: Option<Hit>| -> Result<Hit, ToolError> {
            let hit = hit.unwrap_or_default();
            let Some(e) = hit.error.as_deref() else {
                return Ok(hit);
            };
            let detail = hit.detail.as_deref().unwrap_or("");
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
        let run = |focus: bool| -> Result<Hit, ToolError> {
            let args = LocateArgs { focus };
            fail(page.call_function(s.id, &object, LOCATE_FN, &args, GROUP).map_err(step_error)?)
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
        let quads = page.content_quads(s.id, &object).map_err(step_error)?;
        let (mut x, mut y) = quads
            .first()
            .and_then(Quad::centre)
            .ok_or_else(|| ToolError::refused(format!("{what}: the element has no box on screen; nothing was done")))?;
        if let Some(frame) = frame {
            let owner = page.frame_owner(None, &frame).map_err(step_error)?;
            let (dx, dy) = page.box_model(None, owner).map_err(step_error)?.content.origin();
            x += dx;
            y += dy;
        }
        Ok((x, y))
    })();
    frames.close();
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
    object: &ObjectId,
    at: &Hit,
    fail: &dyn Fn(Option<Hit>) -> Result<Hit, ToolError>,
) -> Result<(), ToolError> {
    let (mut x, mut y) = (at.x, at.y);
    let (mut session, mut object, mut owner) = (s, object.clone(), false);
    for _ in 0..MAX_PARENT_STEPS {
        let args = ParentArgs { x, y, owner };
        let reached = session.page.call_function(session.id, &object, PARENT_HIT_FN, &args, GROUP);
        let reached = fail(reached.map_err(step_error)?)?;
        (x, y) = (reached.x, reached.y);
        if reached.top {
            return Ok(());
        }
        // Which frame the walk stopped in: the one whose document is the page reached.
        let call = FunctionCall {
            object: &object,
            declaration: PARENT_DOC_FN,
            args: Value::Object(Default::default()),
            by_value: false,
            group: GROUP,
        };
        let doc = session.page.call_function_on(session.id, &call).map_err(step_error)?;
        let Some(doc) = doc.object_id else {
            return Ok(());
        };
        let Some(Some((doc_backend, _))) = describe(session, &[&doc])?.into_iter().next() else {
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
        let Some(backend) = answered(session.page.frame_owner(session.id, &at_frame))? else {
            return Ok(());
        };
        object =
            resolve_node(session, backend).ok_or_else(|| ToolError::page_error("the element's frame was removed"))?;
        owner = true;
    }
    Ok(())
}

/// The frame (of `frames`, a session's) whose document has backend node id `doc`.
fn frame_of_document(s: Session, frames: &[FrameId], doc: BackendNodeId) -> Result<Option<FrameId>, ToolError> {
    for f in frames {
        // An isolated world reaches the document of a frame of any origin.
        let Some(context) = answered(s.page.create_isolated_world(s.id, f, WORLD))? else {
            continue;
        };
        let Some(document) = answered(s.page.evaluate_object(s.id, "document", Some(context), GROUP))? else {
            continue;
        };
        let Some(object) = document.object_id else {
            continue;
        };
        if describe(s, &[&object])?.into_iter().next().flatten().map(|d| d.0) == Some(doc) {
            return Ok(Some(f.clone()));
        }
    }
    Ok(None)
}
