//! The window's side of pages' file choosers: which browser node's page
//! waits on one, its picker's presses and wheel, and the answer handed to
//! the page (see `file_picker` for the picker itself; its keys come through
//! the overlay stack).

use super::file_picker::Outcome;
use super::overlay::inside;
use super::overlay_stack::Layer;
use super::page_dialog::body_on_screen;
use super::App;
use crate::model::NodeId;
use canvas_render::Rect;

impl App {
    /// Matches the open pickers to the choosers pages wait on now; returns each one's node body on screen.
    pub(super) fn sync_file_pickers(&mut self) -> Vec<(NodeId, Rect)> {
        let Some(rt) = self.rt.as_ref() else { return vec![] };
        let Some(project) = rt.project() else { return vec![] };
        let root = project.folder().to_path_buf();
        let open: Vec<_> = project
            .nodes()
            .filter_map(|n| {
                let (_, b) = rt.browsers().for_node(&n.id)?;
                let chooser = b.file_chooser()?;
                Some((n.id.clone(), chooser, body_on_screen(rt, &self.camera, self.ui_scale, &n.rect)))
            })
            .collect();
        let waiting: Vec<_> = open.iter().map(|(id, chooser, body)| (id, chooser, *body)).collect();
        self.dirty |= self.overlays.sync_file_pickers(&waiting, &root);
        open.into_iter().map(|(id, _, body)| (id, body)).collect()
    }

    /// A press on a picker's panel: true when it was on one (the page does not get it).
    pub(super) fn file_picker_press(&mut self, x: f32, y: f32) -> bool {
        for (id, body) in self.sync_file_pickers() {
            let Some(p) = self.overlays.file_picker_mut(&id) else { continue };
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
            let Some(p) = self.overlays.file_picker_mut(&id) else { continue };
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
                let p = self.overlays.file_picker(id)?;
                Some(p.views(*body, crate::runtime::scene::stable_key(&format!("file picker {id}"))))
            })
            .flatten()
            .collect()
    }

    pub(super) fn answer_file_chooser(&mut self, id: &NodeId, outcome: Outcome) {
        self.overlays.close_of(Layer::FilePicker, id);
        self.dirty = true;
        let paths = match outcome {
            Outcome::Chosen(paths) => Some(paths),
            Outcome::Cancelled => None,
        };
        tracing::info!(node = %id, chosen = paths.as_ref().map_or(0, Vec::len), "file chooser answered by the person");
        let Some((_, b)) = self.rt.as_ref().and_then(|rt| rt.browsers().for_node(id)) else { return };
        if let Err(e) = b.answer_file_chooser(paths) {
            tracing::debug!(node = %id, error = %e, "file chooser answer not delivered");
        }
    }
}
