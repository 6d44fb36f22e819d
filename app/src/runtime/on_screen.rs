//! What the person can see, and what that costs: a big canvas pays only for
//! the nodes on screen.
//!
//! The window tells the runtime which part of the canvas it shows
//! ([`Runtime::set_on_screen`]); headless there is no view and every shown
//! tab runs at full rate (shots and control planes see every page live). With a
//! view:
//! - a page paints at a [`Pace`]: full rate when it is on screen and big
//!   enough to read, a few frames a second when it is on screen but too small
//!   to read (the engine's windowless frame rate, so animations and
//!   `requestAnimationFrame` loops cost next to nothing); back on screen it is
//!   set to full rate and repainted at once;
//! - a page out of view, in a tab its node does not show (headless too), or
//!   in a covered window is hidden as Chromium hides a background tab: it
//!   stops painting, its timers slow down and it reads
//!   `document.visibilityState` "hidden" (a client's `page.bringToFront()`
//!   pans to its node, which shows it, as it shows the tab in Chromium);
//! - a page a CDP client or an agent is driving keeps its full rate and stays
//!   visible wherever it is (screenshots, screencasts and waits for animation
//!   frames must not stop because the person looks elsewhere);
//! - output of an off-screen terminal and frames of an off-screen page ask for
//!   no redraw (and off-screen frames are not uploaded): the next frame that
//!   shows them takes their latest state.

use super::Runtime;
use crate::model::{NodeId, Rect, TabAddress};
use std::time::{Duration, Instant};

/// How recently a page must have been sent a DevTools command to count as
/// driven (a client between two steps of its script).
pub const DRIVEN_WITHIN: Duration = Duration::from_secs(10);

/// How often pacing is re-checked when the view stays still (a driven page
/// whose client went quiet slows down within this much).
const PACE_EVERY: Duration = Duration::from_millis(250);

/// Below this zoom (screen pixels per CSS pixel) a page's text is not
/// readable: at 0.4 a 16 px font is 6 px tall.
const READABLE_ZOOM: f64 = 0.4;

/// The smallest on-screen body, in screen pixels, worth full-rate painting.
const READABLE_PIXELS: (f64, f64) = (200.0, 120.0);

/// The part of the canvas the window shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnScreen {
    /// The visible world rectangle; none while the window is covered or minimised.
    world: Option<Rect>,
    /// Screen pixels per world unit.
    zoom: f64,
}

impl OnScreen {
    /// A window showing `world` at `zoom` screen pixels per world unit.
    pub fn new(world: Rect, zoom: f64) -> OnScreen {
        OnScreen { world: Some(world), zoom }
    }

    /// A view that shows nothing: the window is minimised or covered.
    pub fn nothing() -> OnScreen {
        OnScreen { world: None, zoom: 1.0 }
    }

    /// Whether any of `rect` is visible.
    pub fn shows(&self, rect: &Rect) -> bool {
        self.world.is_some_and(|w| w.intersects(rect))
    }

    /// Whether `rect` is within a quarter of a screen of the view: pages
    /// there are kept live so that a pan does not reveal a slowed page.
    pub fn near(&self, rect: &Rect) -> bool {
        self.world.is_some_and(|w| w.expanded(w.w / 4.0, w.h / 4.0, w.w / 4.0, w.h / 4.0).intersects(rect))
    }

    /// Whether a page in `rect` is big enough on screen to read.
    pub fn readable(&self, rect: &Rect) -> bool {
        self.zoom >= READABLE_ZOOM && rect.w * self.zoom >= READABLE_PIXELS.0 && rect.h * self.zoom >= READABLE_PIXELS.1
    }
}

/// How often a page paints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// On screen and readable, or driven: the engine's full rate.
    Live,
    /// On screen but too small to read: a few frames a second show it moving.
    Glance,
    /// Out of view, in a tab not shown or in a covered window: hidden, as a background tab.
    Away,
}

impl Pace {
    /// Frames a second for the engine.
    pub fn fps(self) -> u32 {
        match self {
            Pace::Live => cef_bridge::DEFAULT_FRAME_RATE,
            Pace::Glance => 5,
            Pace::Away => 1,
        }
    }

    /// The pace of a page in a node at `rect`: `view` is what the window
    /// shows (none headless), `shown` whether the page is its node's shown
    /// tab, `driven` whether a client drives it.
    pub fn of(view: Option<&OnScreen>, rect: &Rect, shown: bool, driven: bool) -> Pace {
        let Some(view) = view else {
            return if shown || driven { Pace::Live } else { Pace::Away };
        };
        if driven {
            Pace::Live
        } else if !shown || !view.near(rect) {
            Pace::Away
        } else if !view.readable(rect) {
            Pace::Glance
        } else {
            Pace::Live
        }
    }
}

/// What [`Runtime::pace_pages`] needs between turns.
#[derive(Debug, Default)]
pub struct Pacing {
    /// What the window shows (none headless).
    pub(crate) view: Option<OnScreen>,
    /// When pacing last ran.
    last: Option<Instant>,
}

impl Runtime {
    /// Tells the runtime what the window shows (`None`: no view, as headless).
    pub fn set_on_screen(&mut self, view: Option<OnScreen>) {
        if self.pacing.view != view {
            self.pacing.view = view;
            self.pace_pages();
        }
    }

    /// Whether a node is on screen (always, without a view).
    pub fn on_screen(&self, id: &NodeId) -> bool {
        let Some(view) = &self.pacing.view else { return true };
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

    /// Re-paces pages when the view changed or [`PACE_EVERY`] passed.
    pub(crate) fn pace_pages_if_due(&mut self) {
        if self.pacing.last.is_none_or(|t| t.elapsed() >= PACE_EVERY) {
            self.pace_pages();
        }
    }

    /// Sets every page's frame rate and visibility from where its node is
    /// (see the module doc); a page that speeds up or shows again is repainted at once.
    pub fn pace_pages(&mut self) {
        self.pacing.last = Some(Instant::now());
        let out_of_view = self.terminals.live_nodes().filter(|id| !self.on_screen(id)).cloned().collect();
        self.terminals.out_of_view.set(out_of_view);
        let Some(project) = self.workspace.active() else { return };
        for (tab, b) in self.browsers.iter() {
            let Some(node) = project.node(&tab.node) else { continue };
            let driven = b.devtools().driven_within(DRIVEN_WITHIN);
            let pace = Pace::of(self.pacing.view.as_ref(), &node.rect, self.browsers.is_shown(tab), driven);
            let hidden = pace == Pace::Away;
            if b.is_hidden() != hidden {
                tracing::debug!(%tab, hidden, "page visibility");
                if let Err(e) = b.set_hidden(hidden) {
                    tracing::debug!(%tab, error = %e, "page visibility not set");
                } else if !hidden {
                    let _ = b.invalidate();
                }
            }
            let fps = pace.fps();
            let was = b.frame_rate();
            if was == fps {
                continue;
            }
            tracing::debug!(%tab, was, fps, "page paced");
            if let Err(e) = b.set_frame_rate(fps) {
                tracing::debug!(%tab, error = %e, "page not paced");
            } else if fps > was {
                let _ = b.invalidate();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeKind;
    use crate::runtime::engine::LiveBrowser;

    fn view() -> OnScreen {
        OnScreen::new(rect(0.0, 0.0, 1600.0, 1000.0), 1.0)
    }

    fn rect(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }

    #[test]
    fn pages_are_paced_by_where_and_how_big_they_are() {
        let v = view();
        let page = rect(100.0, 100.0, 800.0, 600.0);
        assert_eq!(Pace::of(None, &page, true, false), Pace::Live, "headless: every shown tab live");
        assert_eq!(Pace::of(None, &page, false, false), Pace::Away, "headless: a background tab is one");
        assert_eq!(Pace::of(None, &page, false, true), Pace::Live, "unless a client drives it");
        assert_eq!(Pace::of(Some(&v), &page, true, false), Pace::Live);
        assert_eq!(Pace::of(Some(&v), &page, false, false), Pace::Away, "a tab not shown");
        let far = rect(10_000.0, 0.0, 800.0, 600.0);
        assert_eq!(Pace::of(Some(&v), &far, true, false), Pace::Away);
        assert_eq!(Pace::of(Some(&v), &far, true, true), Pace::Live, "driven pages keep their rate");
        assert_eq!(Pace::of(Some(&v), &page, false, true), Pace::Live);
        // Just past the right edge: kept live so a pan does not reveal a slow page.
        let beside = rect(1700.0, 0.0, 800.0, 600.0);
        assert_eq!(Pace::of(Some(&v), &beside, true, false), Pace::Live);
        let small = rect(100.0, 100.0, 150.0, 100.0);
        assert_eq!(Pace::of(Some(&v), &small, true, false), Pace::Glance, "too small to read");
        let zoomed_out = OnScreen::new(rect(0.0, 0.0, 8000.0, 5000.0), 0.2);
        assert_eq!(Pace::of(Some(&zoomed_out), &page, true, false), Pace::Glance, "zoomed too far out");
        assert_eq!(Pace::of(Some(&OnScreen::nothing()), &page, true, false), Pace::Away, "the window is covered");
        assert!(!OnScreen::nothing().shows(&page));
        assert!(Pace::Live.fps() > Pace::Glance.fps() && Pace::Glance.fps() > Pace::Away.fps());
        assert_eq!(Pace::Away.fps(), 1);
    }

    #[test]
    fn the_runtime_paces_pages_as_the_view_moves_and_repaints_those_that_speed_up() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let id = ctx.add(kind, "Example", (0.0, 0.0, 800.0, 600.0));
        let page = ctx.page_of(id.as_str()).expect("a page");
        ctx.rt.pace_pages();
        assert_eq!(page.frame_rate(), cef_bridge::DEFAULT_FRAME_RATE, "no view: full rate");
        assert!(!page.is_hidden());
        ctx.rt.set_on_screen(Some(OnScreen::new(rect(20_000.0, 0.0, 1600.0, 1000.0), 1.0)));
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
        ctx.rt.set_on_screen(Some(OnScreen::new(rect(20_000.0, 0.0, 1600.0, 1000.0), 1.0)));
        assert_eq!(page.frame_rate(), 1);
        let pending = page.devtools().request("Runtime.evaluate", serde_json::json!({"expression": "1"}), None);
        assert!(pending.is_ok());
        ctx.rt.pace_pages();
        assert_eq!(page.frame_rate(), cef_bridge::DEFAULT_FRAME_RATE, "driven");
        assert!(!page.is_hidden(), "a driven page stays visible");
    }

    #[test]
    fn a_tab_its_node_does_not_show_is_hidden_headless_too() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let id = ctx.add(kind, "Example", (0.0, 0.0, 800.0, 600.0));
        let first = ctx.page_of(id.as_str()).expect("a page");
        let tab = ctx.rt.new_tab(&id, "https://example.com/b", true).expect("a second tab");
        let second = ctx.rt.browsers.get(&tab).expect("its page").clone();
        ctx.rt.pace_pages();
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
        assert!(!ctx.rt.terminals.out_of_view.contains(&id), "no view: everything is seen");
        ctx.rt.set_on_screen(Some(OnScreen::new(rect(20_000.0, 0.0, 1600.0, 1000.0), 1.0)));
        assert!(ctx.rt.terminals.out_of_view.contains(&id));
        ctx.rt.set_on_screen(Some(view()));
        assert!(!ctx.rt.terminals.out_of_view.contains(&id));
    }

    #[test]
    fn off_screen_output_asks_for_no_redraw() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let id = ctx.add(NodeKind::Sticky { text: "x".into() }, "Note", (0.0, 0.0, 300.0, 200.0));
        ctx.rt.take_redraw();
        ctx.rt.node_changed(&id);
        assert!(ctx.rt.take_redraw(), "no view: every change redraws");
        ctx.rt.set_on_screen(Some(OnScreen::new(rect(5000.0, 5000.0, 1600.0, 1000.0), 1.0)));
        ctx.rt.take_redraw();
        ctx.rt.node_changed(&id);
        assert!(!ctx.rt.take_redraw(), "nobody sees it");
        ctx.rt.set_on_screen(Some(view()));
        ctx.rt.node_changed(&id);
        assert!(ctx.rt.take_redraw());
    }
}
