//! `browser_inspect`: the page model, read frame by frame (iframes
//! followed into their frames, in process or through a child session), a
//! page of elements at a time, with refs held app-side.

use super::super::context::OpContext;
use super::capture::capture;
use super::dialog::{dialog_page, file_chooser_json};
use super::page_model::{
    collect, describe, element_line, frame_ids, page_starts, Item, Landmark, Listed, NodeRef, Root, Scan,
};
use super::refs::{query_selector, Frames};
use super::session::Session;
use super::target::target;
use page_driver::{ObjectId, SessionId};
use serde_json::{json, Value};
use tool_server::{InspectArgs, ToolError};

/// Default cap on inspect's page text.
const DEFAULT_TEXT_CHARS: u64 = 2_000;

/// `browser_inspect`: the page model (one line an element, refs held
/// app-side), a page of elements at a time, optionally with a screenshot.
pub(crate) fn inspect(ctx: &OpContext, args: InspectArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_read(id, ctx.caller())?;
    if let Some(d) = t.handle.dialog() {
        return Ok(dialog_page(&d, &t.node));
    }
    let page = t.handle.page();
    // Later pages of the element list come without the text (the first page had it).
    let later = args.page.is_some_and(|p| p > 1);
    let max_chars = args.max_chars.or((!later).then_some(DEFAULT_TEXT_CHARS));
    let mut reader = Reader { frames: Frames::new(&*page, &ctx.shared), scans: vec![] };
    let result = reader.read(&args, max_chars);
    reader.frames.close();
    let mut model = result?;
    model["nodeId"] = json!(t.node);
    if let Some(c) = t.handle.file_chooser() {
        model["fileChooser"] = file_chooser_json(&c);
    }
    if args.screenshot == Some(true) {
        model["screenshot"] = capture(ctx, &t)?;
    }
    Ok(model)
}

/// Reads the page frame by frame, following iframes into their own
/// frames (in-process, or through a child session when out of process).
struct Reader<'a> {
    /// The page, and the child sessions opened for out-of-process frames.
    frames: Frames<'a>,
    scans: Vec<Scan>,
}

/// An entry of the merged element list: scan index, item index, depth.
type Entry = (usize, usize, usize);

/// Deepest iframe nesting inspect follows.
const MAX_FRAME_DEPTH: usize = 4;

impl Reader<'_> {
    fn read(&mut self, args: &InspectArgs, max_chars: Option<u64>) -> Result<Value, ToolError> {
        let main = self.frames.main();
        let local = frame_ids(main)?;
        let top = local.first().cloned().ok_or_else(|| ToolError::page_error("the page has no frame"))?;
        // The subtree to read: a ref's element, a selector's, or the whole top document.
        let scoped = match (&args.within, &args.selector) {
            (Some(r), _) => Some(self.frames.resolve_ref(r)?),
            (None, Some(sel)) => Some((None, query_selector(main, sel)?)),
            (None, None) => None,
        };
        let first = match &scoped {
            Some((session, object)) => {
                let s = Session { page: main.page, id: session.as_ref() };
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
        self.expand(0, 0, &mut entries)?;
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
        let refs = self.refs_for(&shown)?;
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
            let landmarks = self.landmark_hints()?;
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
            let drawers = self.offscreen_hints()?;
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
    fn expand(&mut self, index: usize, depth: usize, out: &mut Vec<Entry>) -> Result<(), ToolError> {
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
                match self.read_frame(index, k) {
                    Ok(Some(child)) => {
                        children.insert(k, child);
                        continue;
                    }
                    Ok(None) => "its document could not be reached (still loading, or not a frame)".to_owned(),
                    // Nothing more will answer.
                    Err(e) if self.frames.page.crashed() => return Err(e),
                    Err(e) => e.message().to_owned(),
                }
            };
            mark_unread(&mut self.scans[index].report.items[k], &why);
        }
        for k in 0..self.scans[index].report.items.len() {
            out.push((index, k, depth));
            if let Some(&child) = children.get(&k) {
                self.expand(child, depth + 1, out)?;
            }
        }
        Ok(())
    }

    /// Reads the frame of scan `index`'s iframe item `k`: a new scan's index.
    fn read_frame(&mut self, index: usize, k: usize) -> Result<Option<usize>, ToolError> {
        let page = self.frames.page;
        let scan = &self.scans[index];
        let Some(object) = scan.handles.get(scan.report.items[k].n).cloned().flatten() else {
            return Ok(None);
        };
        let session_id = scan.session.clone();
        let s = Session { page, id: session_id.as_ref() };
        let Some(Some((_, Some(frame_id)))) = describe(s, &[&object])?.into_iter().next() else {
            return Ok(None);
        };
        let local = frame_ids(s)?;
        let (report, handles, session, frame) = if local.contains(&frame_id) {
            let (r, h) = collect(s, Root::Frame(&frame_id), None)?;
            (r, h, session_id, self.scans[index].frame)
        } else {
            // Out of process (another site): read it through a child session of its own.
            let child = self.frames.attach(&frame_id)?;
            let cs = Session { page, id: Some(&child) };
            let (r, h) = collect(cs, Root::Frame(&frame_id), None)?;
            (r, h, Some(child), Some(self.frames.shared.frame_slot(frame_id.as_str())))
        };
        self.scans.push(Scan { report, handles, session, frame });
        Ok(Some(self.scans.len() - 1))
    }

    /// The out-of-process frame slot of a session opened by this reader.
    fn slot_of_session(&self, session: &Option<SessionId>) -> Option<usize> {
        session.as_ref().and_then(|s| self.scans.iter().find(|x| x.session.as_ref() == Some(s)).and_then(|x| x.frame))
    }

    /// Refs of the entries, resolved per scan in one batch each.
    fn refs_for(&self, entries: &[Entry]) -> Result<Vec<Option<NodeRef>>, ToolError> {
        let mut out = vec![None; entries.len()];
        for (si, scan) in self.scans.iter().enumerate() {
            let mine: Vec<(usize, &ObjectId)> = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.0 == si)
                .filter_map(|(at, e)| scan.handles.get(scan.report.items[e.1].n)?.as_ref().map(|o| (at, o)))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let s = Session { page: self.frames.page, id: scan.session.as_ref() };
            let objects: Vec<&ObjectId> = mine.iter().map(|(_, o)| *o).collect();
            for ((at, _), d) in mine.iter().zip(describe(s, &objects)?) {
                out[*at] = d.map(|(backend, _)| NodeRef { frame: scan.frame, backend });
            }
        }
        Ok(out)
    }

    /// Landmarks of the top scan with their element counts: `e12 navigation Menu 40`.
    fn landmark_hints(&self) -> Result<String, ToolError> {
        self.landmark_list(|l| l.listed > 0, |l| l.listed)
    }

    /// Landmarks holding elements outside the page, with how many.
    fn offscreen_hints(&self) -> Result<String, ToolError> {
        self.landmark_list(|l| l.off > 0, |l| l.off)
    }

    fn landmark_list(
        &self,
        keep: impl Fn(&Landmark) -> bool,
        count: impl Fn(&Landmark) -> usize,
    ) -> Result<String, ToolError> {
        let scan = &self.scans[0];
        // The biggest few, in page order.
        let mut chosen: Vec<&Landmark> = scan.report.landmarks.iter().filter(|l| keep(l)).collect();
        chosen.sort_by_key(|l| std::cmp::Reverse(count(l)));
        chosen.truncate(6);
        chosen.sort_by_key(|l| l.n);
        let objects: Vec<&ObjectId> = chosen.iter().filter_map(|l| scan.handles.get(l.n)?.as_ref()).collect();
        if objects.len() != chosen.len() {
            return Ok(String::new());
        }
        let s = Session { page: self.frames.page, id: scan.session.as_ref() };
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::unowned_browser;
    use super::*;
    use crate::runtime::test_context::TestContext;
    use crate::runtime::test_context::{fake_page_model, tool};
    use page_driver::Method;
    use serde_json::json;
    use tool_server::ErrorCode;

    #[test]
    fn every_unread_frame_is_named_with_its_reason() {
        let report = |items: Value| -> super::super::page_model::FrameReport {
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

    #[test]
    fn browser_inspect_reads_any_browser_not_owned_by_another_agent() {
        let mut ctx = TestContext::new();
        let b = unowned_browser(&mut ctx);
        let mut expected = fake_page_model("https://example.com/");
        expected["nodeId"] = json!(b);
        assert_eq!(ctx.run("browser_inspect", json!({"nodeId": b})).unwrap(), expected);
        // Refs live app-side: nothing is written into the page.
        let methods = ctx.page_of(&b).unwrap().methods();
        assert!(methods.contains(&Method::CreateIsolatedWorld), "{methods:?}");
        assert!(methods.iter().all(|m| !m.name().contains("setAttribute")), "{methods:?}");
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
}
