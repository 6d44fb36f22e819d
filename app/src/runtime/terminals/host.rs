//! A terminal's callbacks, routed to the main thread as runtime jobs.

use super::super::AppHandle;
use crate::model::{Command, NodeId};
use terminal::{ExitStatus, TerminalHost};

/// Routes a terminal's callbacks to the main thread.
pub(super) struct NodeHost {
    /// The node the terminal belongs to.
    pub(super) node: NodeId,
    /// The way to the main thread.
    pub(super) app: AppHandle,
}

impl TerminalHost for NodeHost {
    fn wakeup(&self) {
        let _ = self.app.post(|rt| rt.request_redraw());
    }
    fn title_changed(&self, title: Option<String>) {
        let Some(title) = title.filter(|t| !t.trim().is_empty()) else { return };
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Err(e) = rt.workspace.apply(Command::SetTitle { id, title }) {
                tracing::debug!(error = %e, "terminal title not recorded");
            }
            rt.request_redraw();
        });
    }
    fn bell(&self) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if rt.focus.as_ref() != Some(&id) {
                if let Some(t) = rt.terminals.live_mut(&id) {
                    t.bell = true;
                }
                rt.request_redraw();
            }
        });
    }
    fn clipboard_store(&self, text: String) {
        let _ = self.app.post(move |rt| rt.clipboard = Some(text));
    }
    fn exited(&self, status: ExitStatus) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Some(t) = rt.terminals.live_mut(&id) {
                t.exited = Some(status);
            }
            rt.request_redraw();
        });
    }
}
