//! A browser node's downloads, on a shelf along the bottom of its page:
//! each download's name, size and state, a bar while it runs, "Open
//! folder" once it is saved and "Clear" to put it away (the file stays). Layout
//! and hit-testing only: the window draws the views and acts on a press.

use super::overlay::inside;
use crate::model::NodeId;
use crate::runtime::downloads::DownloadEntry;
use crate::runtime::Runtime;
use canvas_render::{Camera, Color, NodeContent, NodeKind, NodeView, Rect};
use cef_bridge::DownloadState;
use std::path::PathBuf;

/// Height of the shelf: its title bar, then one row of downloads.
const SHELF_H: f32 = 74.0;
/// Height of a download's pill (a title bar's).
const PILL_H: f32 = 30.0;
/// Widest download.
const ENTRY_MAX_W: f32 = 440.0;
/// Gap around and between the shelf's parts.
const GAP: f32 = 8.0;
/// Width of the "Open folder" and "Clear" buttons (icon and label).
const OPEN_W: f32 = 124.0;
const CLOSE_W: f32 = 76.0;
/// A page smaller than this on screen gets no shelf (it would cover the page).
const MIN_BODY: (f32, f32) = (260.0, 160.0);

/// What a press on the shelf asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShelfAction {
    /// Open the folder the download was saved in.
    OpenFolder(PathBuf),
    /// Put the download's entry away.
    Dismiss(String),
    /// Nothing (the press was on the shelf, not a button): the page does not get it.
    Nothing,
}

/// One node's shelf, on screen in logical pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Shelf {
    /// The browser node.
    pub node: NodeId,
    /// The node's page on screen.
    pub body: Rect,
    /// Its downloads, oldest first.
    pub entries: Vec<DownloadEntry>,
}

/// Where one download's parts are, on screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EntryLayout {
    /// The pill with its name and state.
    pub pill: Rect,
    /// The progress bar under it, while it runs.
    pub bar: Option<Rect>,
    /// "Open folder", once it is saved.
    pub open: Option<Rect>,
    /// "Clear", once it has ended.
    pub close: Option<Rect>,
}

impl Shelf {
    /// The shelf's panel.
    pub fn panel(&self) -> Rect {
        let b = self.body;
        Rect::new(b.x + GAP, b.y + b.h - GAP - SHELF_H, b.w - 2.0 * GAP, SHELF_H)
    }

    /// Where each download's parts are, in the order of `entries`.
    pub fn layout(&self) -> Vec<EntryLayout> {
        let panel = self.panel();
        let n = self.entries.len().max(1) as f32;
        let w = ((panel.w - GAP * (n + 1.0)) / n).min(ENTRY_MAX_W);
        let y = panel.y + PILL_H + (panel.h - PILL_H - PILL_H) / 2.0 - 2.0;
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let pill = Rect::new(panel.x + GAP + i as f32 * (w + GAP), y, w, PILL_H);
                let ended = e.state != DownloadState::InProgress;
                let close = ended.then(|| Rect::new(pill.x + pill.w - CLOSE_W - 3.0, y + 3.0, CLOSE_W, PILL_H - 6.0));
                let open = (e.state == DownloadState::Completed && e.path.is_some() && w >= OPEN_W + CLOSE_W + 120.0)
                    .then(|| Rect::new(pill.x + pill.w - CLOSE_W - OPEN_W - 6.0, y + 3.0, OPEN_W, PILL_H - 6.0));
                let bar = (!ended).then(|| {
                    let f = e.fraction().unwrap_or(0.08);
                    Rect::new(pill.x, pill.y + pill.h + 3.0, (pill.w * f).max(4.0), 4.0)
                });
                EntryLayout { pill, bar, open, close }
            })
            .collect()
    }

    /// What a press at (x, y) asks for; `None` when it is not on the shelf.
    pub fn press(&self, x: f32, y: f32) -> Option<ShelfAction> {
        if !inside(&self.panel(), x, y) {
            return None;
        }
        for (e, l) in self.entries.iter().zip(self.layout()) {
            if l.close.is_some_and(|r| inside(&r, x, y)) {
                return Some(ShelfAction::Dismiss(e.guid.clone()));
            }
            let folder = e.path.as_ref().and_then(|p| p.parent()).map(PathBuf::from);
            if let (Some(r), Some(folder)) = (l.open, folder) {
                if inside(&r, x, y) {
                    return Some(ShelfAction::OpenFolder(folder));
                }
            }
        }
        Some(ShelfAction::Nothing)
    }

    /// The overlay views: the panel, each download's pill, bar and buttons (`base` keys them).
    pub fn views(&self, base: u64) -> Vec<NodeView> {
        let view = |id: u64, rect: Rect, kind: NodeKind, title: String, color: Color, z: i32| NodeView {
            z,
            ..super::overlay::panel(id, rect, kind, title, color, NodeContent::Empty)
        };
        let running = self.entries.iter().filter(|e| e.state == DownloadState::InProgress).count();
        let title = match running {
            0 => "Downloads".to_string(),
            n => format!("Downloads · {n} running"),
        };
        let mut out = vec![view(base, self.panel(), NodeKind::Artifact, title, Color::hex(0x5b9cff), 4)];
        for (i, (e, l)) in self.entries.iter().zip(self.layout()).enumerate() {
            let k = base + 1 + 4 * i as u64;
            let color = match e.state {
                DownloadState::Completed => Color::hex(0x9ece6a),
                DownloadState::InProgress => Color::hex(0x5b9cff),
                DownloadState::Canceled => Color::hex(0xf7768e),
            };
            let mut pill = view(k, l.pill, NodeKind::Group, format!("{} — {}", e.name, e.summary()), color, 5);
            pill.focused = e.state == DownloadState::InProgress;
            out.push(pill);
            if let Some(r) = l.bar {
                out.push(view(k + 1, r, NodeKind::Sticky, String::new(), color, 6));
            }
            if let Some(r) = l.open {
                out.push(view(k + 2, r, NodeKind::Group, "Open folder".into(), Color::hex(0x7aa2f7), 6));
            }
            if let Some(r) = l.close {
                out.push(view(k + 3, r, NodeKind::Group, "Clear".into(), Color::hex(0x565f89), 6));
            }
        }
        out
    }
}

/// The shelves of the active project's browser nodes that have downloads and room for them.
pub fn shelves(rt: &Runtime, camera: &Camera, scale: f32) -> Vec<Shelf> {
    let Some(project) = rt.project() else { return vec![] };
    project
        .nodes()
        .filter_map(|n| {
            let entries = rt.downloads().of(&n.id);
            if entries.is_empty() {
                return None;
            }
            let body = crate::window::page_dialog::body_on_screen(rt, camera, scale, &n.rect);
            (body.w >= MIN_BODY.0 && body.h >= MIN_BODY.1).then(|| Shelf {
                node: n.id.clone(),
                body,
                entries: entries.to_vec(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(guid: &str, state: DownloadState) -> DownloadEntry {
        DownloadEntry {
            guid: guid.into(),
            name: format!("{guid}.txt"),
            path: Some(PathBuf::from(format!("/home/p/Downloads/{guid}.txt"))),
            received: 512,
            total: 1024,
            state,
        }
    }

    fn shelf(entries: Vec<DownloadEntry>) -> Shelf {
        Shelf { node: NodeId::new("web").unwrap(), body: Rect::new(100.0, 80.0, 900.0, 600.0), entries }
    }

    fn centre(r: Rect) -> (f32, f32) {
        (r.x + r.w / 2.0, r.y + r.h / 2.0)
    }

    #[test]
    fn buttons_do_what_they_say_and_the_shelf_keeps_its_presses() {
        let s = shelf(vec![entry("done", DownloadState::Completed), entry("busy", DownloadState::InProgress)]);
        let l = s.layout();
        assert!(l.iter().all(|e| inside(&s.body, e.pill.x, e.pill.y) && e.pill.y + e.pill.h <= s.body.y + s.body.h));
        let (x, y) = centre(l[0].open.expect("a saved download can show its folder"));
        assert_eq!(s.press(x, y), Some(ShelfAction::OpenFolder(PathBuf::from("/home/p/Downloads"))));
        let (x, y) = centre(l[0].close.expect("an ended download can be put away"));
        assert_eq!(s.press(x, y), Some(ShelfAction::Dismiss("done".into())));
        assert!(l[1].open.is_none() && l[1].close.is_none(), "a running download has neither");
        assert_eq!(l[1].bar.map(|b| b.w), Some(l[1].pill.w * 0.5), "its bar shows how far it is");
        let (x, y) = centre(l[1].pill);
        assert_eq!(s.press(x, y), Some(ShelfAction::Nothing));
        assert_eq!(s.press(s.body.x + 10.0, s.body.y + 10.0), None, "above the shelf is the page");
        let v = s.views(1);
        assert_eq!(v[0].title, "Downloads · 1 running");
        assert_eq!(v[1].title, "done.txt — 512 B · done");
        assert_eq!(v.len(), 1 + 3 + 2, "panel; pill, open, close; pill, bar");
    }
}
