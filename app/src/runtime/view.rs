//! What the person sees, as the runtime applies it: the window's view, the
//! front page headless, which nodes are on screen, and pacing every page
//! through [`Pacing`] (see `on_screen.rs` for the rules).

use super::on_screen::{OnScreen, PaintWants};
use super::Runtime;
use crate::model::{NodeId, TabAddress};

impl Runtime {
    /// Tells the runtime what the window shows (`None`: no view, as headless).
    pub fn set_on_screen(&mut self, view: Option<OnScreen>) {
        if self.pacing.set_view(view) {
            self.pace_pages();
        }
    }

    /// Makes `node` the front one, as a tab brought to front is in Chromium
    /// (headless its page is the visible one; see `on_screen.rs`).
    pub fn bring_to_front(&mut self, node: NodeId) {
        if self.pacing.bring_to_front(node) {
            self.pace_pages();
        }
    }

    /// Keeps every shown page live headless (`true`, for a canvas shot) or
    /// paces them as tabs of one window (`false`, the default).
    pub fn keep_pages_live(&mut self, live: bool) {
        self.pacing.set_all_live(live);
        self.pace_pages();
    }

    /// The pages CDP clients need painted, for the facade's thread.
    pub fn paint_wants(&self) -> PaintWants {
        self.pacing.wants().clone()
    }

    /// Whether a node is on screen (always, without a view).
    pub fn on_screen(&self, id: &NodeId) -> bool {
        let Some(view) = self.pacing.view() else { return true };
        self.project().and_then(|p| p.node(id)).is_some_and(|n| view.shows(&n.rect))
    }

    /// A node's content changed (a terminal's output): redraw if anyone can see it.
    pub fn node_changed(&mut self, id: &NodeId) {
        if self.on_screen(id) {
            self.request_redraw();
        }
    }

    /// Whether a tab's new frame is worth a redraw: its node shows it, on screen.
    pub(crate) fn frame_visible(&self, tab: &TabAddress) -> bool {
        self.browsers.is_shown(tab) && self.on_screen(&tab.node)
    }

    /// Re-paces pages when the view changed or pacing is due.
    pub(crate) fn pace_pages_if_due(&mut self) {
        if self.pacing.due() {
            self.pace_pages();
        }
    }

    /// Sets every page's frame rate and visibility from where its node is, and
    /// tells terminals which of them are out of view.
    pub fn pace_pages(&mut self) {
        let out_of_view = self.terminals.live_nodes().filter(|id| !self.on_screen(id)).cloned().collect();
        self.terminals.set_out_of_view(out_of_view);
        let front = self.pacing.front_node(self.workspace.active(), self.focus.as_ref());
        self.pacing.pace(self.workspace.active(), &self.browsers, front.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Command, NodeKind, Rect};
    use crate::runtime::engine::LiveBrowser;
    use std::sync::Arc;

    fn view() -> OnScreen {
        OnScreen::new(Rect::new(0.0, 0.0, 1600.0, 1000.0), 1.0)
    }

    #[test]
    fn the_runtime_paces_pages_as_the_view_moves_and_repaints_those_that_speed_up() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let id = ctx.add(kind, "Example", (0.0, 0.0, 800.0, 600.0));
        let page = ctx.page_of(id.as_str()).expect("a page");
        ctx.rt.set_on_screen(Some(view()));
        assert_eq!(page.frame_rate(), cef_bridge::DEFAULT_FRAME_RATE, "in view: full rate");
        assert!(!page.is_hidden());
        ctx.rt.set_on_screen(Some(OnScreen::new(Rect::new(20_000.0, 0.0, 1600.0, 1000.0), 1.0)));
        assert_eq!(page.frame_rate(), 1, "out of view");
        assert!(page.is_hidden(), "hidden as a background tab");
        assert!(!ctx.rt.on_screen(&id));
        let before = page.invalidations.load(std::sync::atomic::Ordering::Relaxed);
        ctx.rt.set_on_screen(Some(view()));
        assert_eq!(page.frame_rate(), cef_bridge::DEFAULT_FRAME_RATE, "back in view");
        assert!(!page.is_hidden(), "shown again");
        assert!(page.invalidations.load(std::sync::atomic::Ordering::Relaxed) > before, "repainted at once");
        assert!(ctx.rt.on_screen(&id));
        // A covered window shows nothing.
        ctx.rt.set_on_screen(Some(OnScreen::nothing()));
        assert!(page.is_hidden());
        // Out of view but driven by a client: full rate, and visible.
        ctx.rt.set_on_screen(Some(OnScreen::new(Rect::new(20_000.0, 0.0, 1600.0, 1000.0), 1.0)));
        assert_eq!(page.frame_rate(), 1);
        // An agent's command in flight, through the typed page driving the tools use.
        let pending = page_driver::Page::evaluate_later(&crate::page_transport::cdp_page(page.devtools()), "1");
        assert!(pending.is_ok());
        ctx.rt.pace_pages();
        assert_eq!(page.frame_rate(), cef_bridge::DEFAULT_FRAME_RATE, "driven");
        assert!(!page.is_hidden(), "a driven page stays visible");
    }

    /// A fake page that finished loading, as the engine reports it.
    fn settle(ctx: &mut crate::runtime::test_context::TestContext, page: &crate::runtime::test_context::FakeBrowser) {
        page.report(cef_bridge::BrowserEvent::LoadFinished { id: page.browser_id(), http_status: 200 });
        ctx.rt.tick();
    }

    #[test]
    fn headless_the_front_page_is_visible_and_the_others_are_background_tabs() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let a = ctx.add(kind.clone(), "A", (0.0, 0.0, 800.0, 600.0));
        let b = ctx.add(kind, "B", (900.0, 0.0, 800.0, 600.0));
        let (pa, pb) = (ctx.page_of(a.as_str()).expect("a page"), ctx.page_of(b.as_str()).expect("b page"));
        ctx.rt.pace_pages();
        assert!(pa.is_hidden() && pb.is_hidden(), "background tabs load hidden: nobody looks at a headless canvas");
        settle(&mut ctx, &pa);
        settle(&mut ctx, &pb);
        ctx.rt.pace_pages();
        assert!(pa.is_hidden() && pb.is_hidden(), "and stay hidden once loaded");
        ctx.rt.bring_to_front(a.clone());
        assert!(!pa.is_hidden() && pb.is_hidden(), "the front page only");
        ctx.rt.bring_to_front(b.clone());
        assert!(pa.is_hidden() && !pb.is_hidden(), "as a tab brought to front");
        ctx.rt.paint_wants().paint_for(pa.browser_id());
        ctx.rt.pace_pages();
        assert!(!pa.is_hidden(), "shown for a client's screenshot");
    }

    #[test]
    fn headless_when_the_front_page_closes_the_one_before_comes_to_front() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let a = ctx.add(kind.clone(), "A", (0.0, 0.0, 800.0, 600.0));
        let b = ctx.add(kind.clone(), "B", (900.0, 0.0, 800.0, 600.0));
        let c = ctx.add(kind, "C", (1800.0, 0.0, 800.0, 600.0));
        let (pa, pb) = (ctx.page_of(a.as_str()).expect("a page"), ctx.page_of(b.as_str()).expect("b page"));
        for p in [&pa, &pb] {
            settle(&mut ctx, p);
        }
        ctx.rt.bring_to_front(a.clone());
        ctx.rt.bring_to_front(b.clone());
        ctx.rt.bring_to_front(c.clone());
        ctx.rt.bring_to_front(b.clone());
        assert!(pa.is_hidden() && !pb.is_hidden());
        // A client's second page closes: its first one is in front again, as
        // Chromium activates another tab (a click there would wait for ever
        // on an IntersectionObserver of a hidden page).
        ctx.rt.apply(Command::RemoveNodes { ids: vec![b.clone(), c.clone()] }).unwrap();
        ctx.rt.pace_pages();
        assert!(!pa.is_hidden(), "the page before the closed ones comes to front");
    }

    /// A headless runtime with one loaded page, hidden as a background tab.
    fn one_background_tab(
    ) -> (crate::runtime::test_context::TestContext, Arc<crate::runtime::test_context::FakeBrowser>) {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let id = ctx.add(kind, "Page", (0.0, 0.0, 800.0, 600.0));
        let page = ctx.page_of(id.as_str()).expect("a page");
        settle(&mut ctx, &page);
        ctx.rt.pace_pages();
        assert!(page.is_hidden());
        (ctx, page)
    }

    #[test]
    fn headless_an_agents_operations_show_a_background_tab_and_a_cdp_clients_commands_do_not() {
        let (mut ctx, page) = one_background_tab();
        page.devtools().send_text(r#"{"id":1073741824,"method":"Runtime.evaluate"}"#).expect("sent");
        ctx.rt.pace_pages();
        assert!(page.is_hidden(), "a CDP client's commands keep a background tab hidden, as in Chromium");
        let _pending = page_driver::Page::evaluate_later(&crate::page_transport::cdp_page(page.devtools()), "1");
        ctx.rt.pace_pages();
        assert!(!page.is_hidden(), "an agent's tool operation shows it");
    }

    #[test]
    fn a_canvas_shot_keeps_every_page_live() {
        let (mut ctx, page) = one_background_tab();
        ctx.rt.keep_pages_live(true);
        assert!(!page.is_hidden());
    }

    #[test]
    fn a_tab_its_node_does_not_show_is_hidden_headless_too() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let id = ctx.add(kind, "Example", (0.0, 0.0, 800.0, 600.0));
        let first = ctx.page_of(id.as_str()).expect("a page");
        let tab = ctx.rt.new_tab(&id, "https://example.com/b", true).expect("a second tab");
        let second = ctx.rt.browsers.get(&tab).expect("its page").clone();
        ctx.rt.bring_to_front(id.clone());
        assert!(first.is_hidden(), "the tab not shown");
        assert!(!second.is_hidden(), "the shown tab");
        ctx.rt.switch_tab(&id, 0).expect("switch back");
        ctx.rt.pace_pages();
        assert!(!first.is_hidden() && second.is_hidden(), "visibility follows the shown tab");
    }

    #[test]
    fn terminals_out_of_view_are_marked_for_their_output_threads() {
        let mut ctx = crate::runtime::test_context::TestContext::with_terminals();
        let cwd = ctx.folder();
        let id = ctx.add(NodeKind::Terminal { cwd, command: None, tmux_session: None }, "t", (0.0, 0.0, 400.0, 300.0));
        ctx.rt.pace_pages();
        assert!(!ctx.rt.terminals.is_out_of_view(&id), "no view: everything is seen");
        ctx.rt.set_on_screen(Some(OnScreen::new(Rect::new(20_000.0, 0.0, 1600.0, 1000.0), 1.0)));
        assert!(ctx.rt.terminals.is_out_of_view(&id));
        ctx.rt.set_on_screen(Some(view()));
        assert!(!ctx.rt.terminals.is_out_of_view(&id));
    }

    #[test]
    fn off_screen_output_asks_for_no_redraw() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let id = ctx.add(NodeKind::Sticky { text: "x".into() }, "Note", (0.0, 0.0, 300.0, 200.0));
        ctx.rt.take_redraw();
        ctx.rt.node_changed(&id);
        assert!(ctx.rt.take_redraw(), "no view: every change redraws");
        ctx.rt.set_on_screen(Some(OnScreen::new(Rect::new(5000.0, 5000.0, 1600.0, 1000.0), 1.0)));
        ctx.rt.take_redraw();
        ctx.rt.node_changed(&id);
        assert!(!ctx.rt.take_redraw(), "nobody sees it");
        ctx.rt.set_on_screen(Some(view()));
        ctx.rt.node_changed(&id);
        assert!(ctx.rt.take_redraw());
    }
}
