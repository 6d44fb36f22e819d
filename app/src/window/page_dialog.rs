//! A page's JavaScript dialog (alert / confirm / prompt / beforeunload) drawn
//! over its browser node's body, for the person to answer: OK or Cancel with
//! the mouse; with the node focused, Enter answers OK, Escape Cancel, typing
//! and Backspace edit a prompt's text. Layout, keys and hit-testing only:
//! the window draws it and hands the answer to the page.

use super::overlay::inside;
use crate::model::NodeId;
use crate::runtime::scene::render_rect;
use crate::runtime::Runtime;
use canvas_render::{Camera, Color, NodeContent, NodeKind, NodeView, Rect};
use cef_bridge::{DialogKind, JsDialog};

/// Widest panel, in logical pixels.
const MAX_WIDTH: f32 = 440.0;
/// Height of a text line.
const LINE: f32 = 21.0;
/// Height of a button.
const BUTTON_H: f32 = 30.0;
/// Width of a button.
const BUTTON_W: f32 = 96.0;
/// Gap around the panel's insides and between buttons.
const GAP: f32 = 10.0;
/// The panel's title bar.
const TITLE_H: f32 = 28.0;
/// Width of a character of the panel's text, generously (for line wrapping).
const CHAR_W: f32 = 7.6;

/// What the person did to an open dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// OK, with a prompt's text.
    Accept(Option<String>),
    /// Cancel (or the only button of an alert, which answers the same way).
    Dismiss,
}

/// A key as the dialog sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogKey {
    /// Enter: OK.
    Enter,
    /// Escape: Cancel.
    Escape,
    /// Backspace: deletes the prompt's last character.
    Backspace,
    /// A character typed into a prompt.
    Char(char),
}

/// An open page dialog and the text typed into it so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDialog {
    /// What the page asked.
    pub dialog: JsDialog,
    /// The prompt's text (starts as its default).
    pub text: String,
}

/// Where the parts of a dialog are on screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// The panel.
    pub panel: Rect,
    /// The prompt's text field, for prompts.
    pub field: Option<Rect>,
    /// The OK button.
    pub ok: Rect,
    /// The Cancel button (alerts have none).
    pub cancel: Option<Rect>,
}

impl PageDialog {
    /// A dialog as the page opened it.
    pub fn new(dialog: JsDialog) -> Self {
        let text = dialog.default_prompt.clone();
        Self { dialog, text }
    }

    /// The title: who asks.
    pub fn title(&self) -> String {
        let host = self.dialog.url.split("://").nth(1).and_then(|r| r.split('/').next()).unwrap_or_default();
        let what = match self.dialog.kind {
            DialogKind::BeforeUnload => "Leave this page?",
            _ => "says",
        };
        if host.is_empty() {
            format!("This page {what}")
        } else {
            format!("{host} {what}")
        }
    }

    fn accept(&self) -> Answer {
        Answer::Accept((self.dialog.kind == DialogKind::Prompt).then(|| self.text.clone()))
    }

    /// Handles one key; `Some` once the dialog is answered.
    pub fn key(&mut self, key: DialogKey) -> Option<Answer> {
        match key {
            DialogKey::Enter => Some(self.accept()),
            DialogKey::Escape => Some(Answer::Dismiss),
            DialogKey::Backspace if self.dialog.kind == DialogKind::Prompt => {
                self.text.pop();
                None
            }
            DialogKey::Char(c) if self.dialog.kind == DialogKind::Prompt && !c.is_control() => {
                self.text.push(c);
                None
            }
            _ => None,
        }
    }

    /// The panel centred in the node's `body` (screen, logical pixels).
    pub fn layout(&self, body: Rect) -> Layout {
        let w = MAX_WIDTH.min(body.w - 2.0 * GAP).max(160.0);
        let per_line = ((w - 2.0 * GAP) / CHAR_W).max(8.0) as usize;
        let rows: usize = self.dialog.message.lines().map(|l| l.chars().count().max(1).div_ceil(per_line)).sum();
        let text_h = LINE * rows.clamp(1, 12) as f32;
        let field_h = if self.dialog.kind == DialogKind::Prompt { BUTTON_H + GAP } else { 0.0 };
        let h = TITLE_H + GAP + text_h + GAP + field_h + BUTTON_H + GAP;
        let x = body.x + ((body.w - w) / 2.0).max(0.0);
        let y = body.y + ((body.h - h) / 3.0).max(0.0);
        let by = y + h - GAP - BUTTON_H;
        let ok = Rect::new(x + w - GAP - BUTTON_W, by, BUTTON_W, BUTTON_H);
        let cancel =
            (self.dialog.kind != DialogKind::Alert).then(|| Rect::new(ok.x - GAP - BUTTON_W, by, BUTTON_W, BUTTON_H));
        let field = (self.dialog.kind == DialogKind::Prompt)
            .then(|| Rect::new(x + GAP, by - GAP - BUTTON_H, w - 2.0 * GAP, BUTTON_H));
        Layout { panel: Rect::new(x, y, w, h), field, ok, cancel }
    }

    /// A press at (x, y): OK or Cancel when on one; `None` elsewhere (the page stays blocked).
    pub fn click(&self, body: Rect, x: f32, y: f32) -> Option<Answer> {
        let l = self.layout(body);
        if inside(&l.ok, x, y) {
            return Some(self.accept());
        }
        l.cancel.filter(|c| inside(c, x, y)).map(|_| Answer::Dismiss)
    }

    /// The overlay views: panel, text field, buttons (`base` keys them).
    pub fn views(&self, body: Rect, base: u64) -> Vec<NodeView> {
        let l = self.layout(body);
        let accent = Color::hex(0x5b9cff);
        let view = |id: u64, rect: Rect, kind: NodeKind, title: String, color: Color, content: NodeContent| NodeView {
            z: 4,
            ..super::overlay::panel(id, rect, kind, title, color, content)
        };
        let mut panel = view(
            base,
            l.panel,
            NodeKind::Artifact,
            self.title(),
            accent,
            NodeContent::Text(self.dialog.message.clone()),
        );
        panel.focused = true;
        let mut out = vec![panel];
        if let Some(f) = l.field {
            let mut v = view(
                base + 1,
                f,
                NodeKind::Group,
                format!("{}\u{258f}", self.text),
                Color::hex(0x9aa5ce),
                NodeContent::Empty,
            );
            v.z = 5;
            out.push(v);
        }
        let mut ok = view(base + 2, l.ok, NodeKind::Group, "OK".into(), accent, NodeContent::Empty);
        (ok.focused, ok.selected, ok.z) = (true, true, 5);
        out.push(ok);
        if let Some(c) = l.cancel {
            let mut v = view(base + 3, c, NodeKind::Group, "Cancel".into(), Color::hex(0x565f89), NodeContent::Empty);
            v.z = 5;
            out.push(v);
        }
        out
    }
}

/// Every browser node of the active project whose page waits on a dialog,
/// with the node's body on screen in logical pixels (`scale` window pixels each).
pub fn open_dialogs(rt: &Runtime, camera: &Camera, scale: f32) -> Vec<(NodeId, JsDialog, Rect)> {
    let Some(project) = rt.project() else { return vec![] };
    project
        .nodes()
        .filter_map(|n| {
            let (_, b) = rt.browsers().for_node(&n.id)?;
            let dialog = b.dialog()?;
            Some((n.id.clone(), dialog, body_on_screen(rt, camera, scale, &n.rect)))
        })
        .collect()
}

/// A node's body (below its title bar) on screen, in logical pixels (`scale` window pixels each).
pub fn body_on_screen(rt: &Runtime, camera: &Camera, scale: f32, rect: &crate::model::Rect) -> Rect {
    let theme = rt.gfx().map(|g| g.renderer.theme().clone()).unwrap_or_default();
    let body = camera.world_rect_to_screen(canvas_render::body_rect(render_rect(rect), &theme));
    Rect::new(body.x / scale, body.y / scale, body.w / scale, body.h / scale)
}

/// Whether (x, y) is on the dialog's panel.
pub fn on_panel(d: &PageDialog, body: Rect, x: f32, y: f32) -> bool {
    inside(&d.layout(body).panel, x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialog(kind: DialogKind) -> PageDialog {
        PageDialog::new(JsDialog {
            kind,
            message: "Delete it?".into(),
            default_prompt: if kind == DialogKind::Prompt { "def".into() } else { String::new() },
            url: "http://127.0.0.1:8080/page".into(),
        })
    }

    #[test]
    fn keys_answer_and_edit_a_prompt() {
        let mut d = dialog(DialogKind::Prompt);
        assert_eq!(d.key(DialogKey::Backspace), None);
        assert_eq!(d.key(DialogKey::Char('x')), None);
        assert_eq!(d.key(DialogKey::Char('\u{8}')), None, "control characters are not text");
        assert_eq!(d.key(DialogKey::Enter), Some(Answer::Accept(Some("dex".into()))));
        assert_eq!(d.key(DialogKey::Escape), Some(Answer::Dismiss));
        let mut c = dialog(DialogKind::Confirm);
        assert_eq!(c.key(DialogKey::Char('y')), None);
        assert_eq!(c.key(DialogKey::Enter), Some(Answer::Accept(None)), "only prompts carry text");
        assert_eq!(c.title(), "127.0.0.1:8080 says");
        assert_eq!(dialog(DialogKind::BeforeUnload).title(), "127.0.0.1:8080 Leave this page?");
    }

    #[test]
    fn clicks_answer_on_buttons_inside_the_node_body() {
        let body = Rect::new(100.0, 50.0, 800.0, 600.0);
        let d = dialog(DialogKind::Confirm);
        let l = d.layout(body);
        assert!(
            l.panel.x >= body.x && l.panel.x + l.panel.w <= body.x + body.w && l.panel.y + l.panel.h <= body.y + body.h
        );
        let centre = |r: Rect| (r.x + r.w / 2.0, r.y + r.h / 2.0);
        let (x, y) = centre(l.ok);
        assert_eq!(d.click(body, x, y), Some(Answer::Accept(None)));
        let (x, y) = centre(l.cancel.expect("confirm has Cancel"));
        assert_eq!(d.click(body, x, y), Some(Answer::Dismiss));
        assert_eq!(d.click(body, l.panel.x + 2.0, l.panel.y + 2.0), None);
        let alert = dialog(DialogKind::Alert);
        assert!(alert.layout(body).cancel.is_none() && alert.layout(body).field.is_none());
        let prompt = dialog(DialogKind::Prompt);
        assert!(prompt.layout(body).field.is_some());
        assert_eq!(prompt.views(body, 1).len(), 4, "panel, field, OK, Cancel");
    }
}
