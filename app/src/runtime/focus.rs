//! Which node has the keyboard: giving it to a node (or back to the canvas)
//! tells the pages and terminals involved, as a desktop tells windows.

use super::Runtime;
use crate::model::NodeId;

impl Runtime {
    /// Gives the keyboard to `new` (`None`: the canvas): the old node's page
    /// or terminal hears it lost focus (a terminal that asked, through its
    /// focus reports), the new one that it gained it; the person has seen
    /// the new node (it no longer calls them), and the gesture ends.
    pub fn set_focus(&mut self, new: Option<NodeId>) {
        if self.focus == new {
            return;
        }
        if let Some(old) = self.focus.take() {
            self.tell_focus(&old, false);
        }
        if let Some(id) = &new {
            self.tell_focus(id, true);
            self.attention_seen(id);
        }
        self.focus = new;
        self.workspace.end_coalescing();
        self.request_redraw();
    }

    fn tell_focus(&self, id: &NodeId, focused: bool) {
        if let Some((_, b)) = self.browsers.for_node(id) {
            if let Err(e) = b.set_focus(focused) {
                tracing::debug!(node = %id, error = %e, "page focus not changed");
            }
        }
        if let Some(t) = self.terminals.get(id) {
            let modes = t.term.input_modes();
            t.term.with_screen(|s| s.set_focused(focused));
            if let Some(bytes) = terminal::keys::encode_focus(focused, &modes) {
                if let Err(e) = t.term.write(bytes.to_vec()) {
                    tracing::debug!(node = %id, error = %e, "focus report not written");
                }
            }
        }
    }
}
