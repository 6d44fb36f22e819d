//! A terminal's callbacks, routed to the main thread as runtime jobs.

use super::super::AppHandle;
use crate::model::NodeId;
use terminal::{ExitStatus, TerminalHost, TerminalSignal};

/// The most of a program's title kept (a title bar shows far less).
const MAX_TITLE_CHARS: usize = 300;

/// Routes a terminal's callbacks to the main thread.
pub(super) struct NodeHost {
    /// The node the terminal belongs to.
    pub(super) node: NodeId,
    /// The way to the main thread.
    pub(super) app: AppHandle,
    /// The nodes the window does not show.
    pub(super) out_of_view: super::nodes::OutOfView,
}

impl TerminalHost for NodeHost {
    fn wakeup(&self) {
        // Output of a node nobody sees asks for no redraw (`Runtime::node_changed`):
        // no job, no wake of the loop (50 terminals printing woke it 50 times a second).
        if self.out_of_view.contains(&self.node) {
            return;
        }
        let id = self.node.clone();
        let _ = self.app.post(move |rt| rt.node_changed(&id));
    }
    fn title_changed(&self, title: Option<String>) {
        // The program's title is live state shown in the title bar, not an edit
        // of the canvas: it neither lands in the undo history nor in canvas.json.
        let title = title.map(|t| t.chars().filter(|c| !c.is_control()).take(MAX_TITLE_CHARS).collect::<String>());
        let title = title.filter(|t| !t.trim().is_empty());
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Some(t) = rt.terminals.live_mut(&id) {
                t.program_title = title;
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
                rt.refresh_attention();
                rt.request_redraw();
            }
        });
    }
    fn clipboard_store(&self, text: String) {
        let _ = self.app.post(move |rt| rt.clipboard = Some(text));
    }
    fn exited(&self, status: ExitStatus) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| rt.terminal_exited(&id, status));
    }
    fn signal(&self, signal: TerminalSignal) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| rt.terminal_signal(&id, signal));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeKind;
    use crate::runtime::terminals::nodes::OutOfView;
    use crate::runtime::test_context::TestContext;

    #[test]
    fn output_of_a_node_out_of_view_wakes_nobody() {
        let mut ctx = TestContext::new();
        let id = ctx.add(NodeKind::Sticky { text: "x".into() }, "n", (0.0, 0.0, 300.0, 200.0));
        let out = OutOfView::default();
        let host = NodeHost { node: id.clone(), app: ctx.rt.handle(), out_of_view: out.clone() };
        ctx.rt.take_redraw();
        host.wakeup();
        ctx.rt.tick();
        assert!(ctx.rt.take_redraw(), "output in view redraws");
        out.set([id.clone()].into_iter().collect());
        host.wakeup();
        ctx.rt.tick();
        assert!(!ctx.rt.take_redraw(), "output out of view asks for nothing");
    }
}
