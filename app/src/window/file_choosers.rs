//! The window's side of pages' file choosers: which browser node's page
//! waits on one, its picker's keys, presses and wheel, and the answer handed
//! to the page (see `file_picker` for the picker itself).

use super::file_picker::{FilePicker, Outcome, PickerKey};
use super::overlay::inside;
use super::page_dialog::body_on_screen;
use super::App;
use crate::model::NodeId;
use canvas_render::Rect;
use winit::keyboard::{Key, NamedKey};

impl App {
    /// Matches the open pickers to the choosers pages wait on now; returns each one's node body on screen.
    pub(super) fn sync_file_pickers(&mut self) -> Vec<(NodeId, Rect)> {
        let Some(rt) = self.rt.as_ref() else { return vec![] };
        let Some(project) = rt.project() else { return vec![] };
        let root = project.folder().to_path_buf();
        let open: Vec<_> = project
            .nodes()
            .filter_map(|n| {
                let (_, b) = rt.browsers.for_node(&n.id)?;
                let chooser = b.file_chooser()?;
                Some((n.id.clone(), chooser, body_on_screen(rt, &self.camera, self.ui_scale, &n.rect)))
            })
            .collect();
        let before = self.file_pickers.len();
        self.file_pickers.retain(|id, p| open.iter().any(|(o, c, _)| o == id && *c == p.chooser));
        for (id, chooser, _) in &open {
            if !self.file_pickers.contains_key(id) {
                self.file_pickers.insert(id.clone(), FilePicker::new(chooser.clone(), &root));
                self.dirty = true;
            }
        }
        self.dirty |= before != self.file_pickers.len();
        open.into_iter().map(|(id, _, body)| (id, body)).collect()
    }

    /// A key for the picker of node `id` (its page waits on it: no key reaches the page).
    pub(super) fn file_picker_key(&mut self, id: &NodeId, key: &Key, text: Option<&str>) {
        let k = match key {
            Key::Named(NamedKey::Enter) => Some(PickerKey::Enter),
            Key::Named(NamedKey::Escape) => Some(PickerKey::Escape),
            Key::Named(NamedKey::Backspace) => Some(PickerKey::Backspace),
            Key::Named(NamedKey::ArrowUp) => Some(PickerKey::Up),
            Key::Named(NamedKey::ArrowDown) => Some(PickerKey::Down),
            Key::Named(NamedKey::Space) => Some(PickerKey::Space),
            _ => text.and_then(|t| t.chars().next()).filter(|c| !c.is_control()).map(PickerKey::Char),
        };
        let Some(k) = k else { return };
        let Some(body) = self.sync_file_pickers().into_iter().find(|(n, _)| n == id).map(|(_, b)| b) else { return };
        self.dirty = true;
        if let Some(outcome) = self.file_pickers.get_mut(id).and_then(|p| p.key_over(body, k)) {
            self.answer_file_chooser(id, outcome);
        }
    }

    /// A press on a picker's panel: true when it was on one (the page does not get it).
    pub(super) fn file_picker_press(&mut self, x: f32, y: f32) -> bool {
        for (id, body) in self.sync_file_pickers() {
            let Some(p) = self.file_pickers.get_mut(&id) else { continue };
            if !inside(&p.layout(body).panel, x, y) {
                continue;
            }
            self.dirty = true;
            if let Some(outcome) = p.click(body, x, y) {
                self.answer_file_chooser(&id, outcome);
            }
            return true;
        }
        false
    }

    /// The wheel over a picker's panel scrolls its list; true when it was over one.
    pub(super) fn file_picker_wheel(&mut self, x: f32, y: f32, lines: f32) -> bool {
        for (id, body) in self.sync_file_pickers() {
            let Some(p) = self.file_pickers.get_mut(&id) else { continue };
            if inside(&p.layout(body).panel, x, y) {
                // Wheel up (positive lines) shows earlier rows.
                p.scroll((-lines * 3.0).round() as i32);
                self.dirty = true;
                return true;
            }
        }
        false
    }

    /// The overlay views of every open picker.
    pub(super) fn file_picker_views(&self, bodies: &[(NodeId, Rect)]) -> Vec<canvas_render::NodeView> {
        bodies
            .iter()
            .filter_map(|(id, body)| {
                let p = self.file_pickers.get(id)?;
                Some(p.views(*body, crate::runtime::scene::stable_key(&format!("file picker {id}"))))
            })
            .flatten()
            .collect()
    }

    fn answer_file_chooser(&mut self, id: &NodeId, outcome: Outcome) {
        self.file_pickers.remove(id);
        self.dirty = true;
        let paths = match outcome {
            Outcome::Chosen(paths) => Some(paths),
            Outcome::Cancelled => None,
        };
        tracing::info!(node = %id, chosen = paths.as_ref().map_or(0, Vec::len), "file chooser answered by the person");
        let Some((_, b)) = self.rt.as_ref().and_then(|rt| rt.browsers.for_node(id)) else { return };
        if let Err(e) = b.answer_file_chooser(paths) {
            tracing::debug!(node = %id, error = %e, "file chooser answer not delivered");
        }
    }
}
