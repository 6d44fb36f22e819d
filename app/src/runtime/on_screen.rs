//! What the person can see, and what that costs: a big canvas pays only for
//! the nodes on screen.
//!
//! The window tells the runtime which part of the canvas it shows
//! ([`Runtime::set_on_screen`]). Headless there is no view and nobody looks
//! at the canvas, so pages are tabs of one browser window, as in Chromium: the
//! front page (the one a client last brought to front or opened in the
//! foreground; when it closes, the one before it, as Chromium activates
//! another tab) is visible and the other shown tabs are hidden, unless an
//! agent's tool operations are driving one, a CDP client needs it painted (a
//! screenshot or screencast: Chromium cannot shoot a hidden tab, the facade
//! shows it for the shot) or emulates focus in it (as Playwright does: Chromium
//! keeps such a page visible). A page that is none of these loads hidden, as a
//! background tab does in Chromium: a restore's pages paint nothing nobody
//! looks at (no tiles rastered, no frames kept). A canvas shot keeps every page live
//! ([`Runtime::keep_pages_live`]). With a view:
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
//!   frames must not stop because the person looks elsewhere). Pages on
//!   screen all stay visible, as windows side by side do: hiding the ones the
//!   person watches but did not focus would stop them painting;
//! - output of an off-screen terminal and frames of an off-screen page ask for
//!   no redraw (and off-screen frames are not uploaded): the next frame that
//!   shows them takes their latest state.

use super::engine::Browser;
use super::Runtime;
use crate::model::{NodeId, Rect, TabAddress};
use cef_bridge::BrowserId;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How recently a page must have been sent a DevTools command to count as
/// driven (a client between two steps of its script).
pub const DRIVEN_WITHIN: Duration = Duration::from_secs(10);

/// How many nodes brought to front headless are remembered, to pass the
/// front back when the front one closes.
const FRONT_HISTORY: usize = 64;

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

/// How long a page a client needed painted (a screenshot, a screencast frame) stays shown.
pub const PAINT_FOR: Duration = Duration::from_secs(10);

/// What pacing weighs of one page besides where its node is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageUse {
    /// It is its node's shown tab.
    pub shown: bool,
    /// Sent DevTools commands lately, by anyone (a CDP client or an agent).
    pub driven: bool,
    /// Sent the app's own commands lately (an agent's tool operations).
    pub tool_driven: bool,
    /// A CDP client needs it painted: a screenshot or screencast lately, or focus emulation on.
    pub wanted: bool,
    /// Headless: its node is the front one (brought to front, opened in the foreground).
    pub front: bool,
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
    /// shows (none headless), `page` how it is used (see the module doc).
    pub fn of(view: Option<&OnScreen>, rect: &Rect, page: PageUse) -> Pace {
        let Some(view) = view else {
            let needed = page.front || page.tool_driven || page.wanted;
            return if page.shown && needed { Pace::Live } else { Pace::Away };
        };
        if page.driven || page.wanted {
            Pace::Live
        } else if !page.shown || !view.near(rect) {
            Pace::Away
        } else if !view.readable(rect) {
            Pace::Glance
        } else {
            Pace::Live
        }
    }
}

/// Pages CDP clients need painted, told from the facade's thread
/// ([`cdp_facade::Guests::paint_for_client`], [`cdp_facade::Guests::emulate_focus`]).
#[derive(Debug, Clone, Default)]
pub struct PaintWants(Arc<Mutex<HashMap<BrowserId, PaintWant>>>);

#[derive(Debug, Default)]
struct PaintWant {
    /// Clients emulating focus in the page.
    emulating: u32,
    /// Shown until then for a screenshot or screencast.
    until: Option<Instant>,
}

impl PaintWant {
    /// Whether it still asks for paint at `now`.
    fn active(&self, now: Instant) -> bool {
        self.emulating > 0 || self.until.is_some_and(|t| now < t)
    }
}

impl PaintWants {
    /// A client needs the page painted for the next [`PAINT_FOR`].
    pub fn paint_for(&self, id: BrowserId) {
        self.0.lock().entry(id).or_default().until = Some(Instant::now() + PAINT_FOR);
    }

    /// One more client emulates focus in the page (`on`), or one fewer.
    pub fn emulate_focus(&self, id: BrowserId, on: bool) {
        let mut wants = self.0.lock();
        let want = wants.entry(id).or_default();
        want.emulating = if on { want.emulating + 1 } else { want.emulating.saturating_sub(1) };
    }

    /// Whether a client needs the page painted now.
    pub fn wanted(&self, id: BrowserId) -> bool {
        self.0.lock().get(&id).is_some_and(|w| w.active(Instant::now()))
    }

    /// Forgets what is no longer wanted, and pages that are gone.
    fn prune(&self, live: impl Fn(BrowserId) -> bool) {
        let now = Instant::now();
        self.0.lock().retain(|id, w| live(*id) && w.active(now));
    }
}

/// Shows a page hidden as a background tab at once, from any thread, so the
/// command about to need its frames or input (a client's screenshot, an
/// agent's click) finds it painting; pacing agrees on its next pass (within
/// [`PACE_EVERY`]), since such a page is then wanted or driven.
pub(crate) fn show_now(browser: &Browser) {
    if browser.is_hidden() {
        if let Err(e) = browser.set_hidden(false) {
            tracing::debug!(error = %e, "the page was not shown for its user");
        } else {
            let _ = browser.invalidate();
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
    /// Headless: the nodes clients brought to front or opened in the
    /// foreground, the front one last; when it closes, the one before it
    /// comes to front, as Chromium activates another tab when the active one
    /// closes (a client's page is visible again after its popup or second
    /// page closes). At most [`FRONT_HISTORY`] long.
    fronts: Vec<NodeId>,
    /// Every shown page live headless (a canvas shot paints them all).
    all_live: bool,
    /// Pages CDP clients need painted.
    pub(crate) wants: PaintWants,
}

impl Runtime {
    /// Tells the runtime what the window shows (`None`: no view, as headless).
    pub fn set_on_screen(&mut self, view: Option<OnScreen>) {
        if self.pacing.view != view {
            self.pacing.view = view;
            self.pace_pages();
        }
    }

    /// Makes `node` the front one, as a tab brought to front is in Chromium
    /// (headless its page is the visible one; see the module doc).
    pub fn bring_to_front(&mut self, node: NodeId) {
        if self.pacing.fronts.last() != Some(&node) {
            self.pacing.fronts.retain(|n| n != &node);
            self.pacing.fronts.push(node);
            if self.pacing.fronts.len() > FRONT_HISTORY {
                self.pacing.fronts.remove(0);
            }
            self.pace_pages();
        }
    }

    /// Headless: the front node, the last one brought to front that is still
    /// on the canvas (the ones removed are forgotten), else the focused node.
    fn front_node(&mut self) -> Option<NodeId> {
        if let Some(project) = self.workspace.active() {
            self.pacing.fronts.retain(|n| project.node(n).is_some());
        }
        self.pacing.fronts.last().or(self.focus.as_ref()).cloned()
    }

    /// Keeps every shown page live headless (`true`, for a canvas shot) or
    /// paces them as tabs of one window (`false`, the default).
    pub fn keep_pages_live(&mut self, live: bool) {
        self.pacing.all_live = live;
        self.pace_pages();
    }

    /// The pages CDP clients need painted, for the facade's thread.
    pub fn paint_wants(&self) -> PaintWants {
        self.pacing.wants.clone()
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
        self.pacing.wants.prune(|id| self.browsers.tab_of(id).is_some());
        let front = self.front_node();
        let front = front.as_ref();
        let Some(project) = self.workspace.active() else { return };
        for (tab, b) in self.browsers.iter() {
            let Some(node) = project.node(&tab.node) else { continue };
            let devtools = b.devtools();
            let page = PageUse {
                shown: self.browsers.is_shown(tab),
                driven: devtools.driven_within(DRIVEN_WITHIN),
                tool_driven: devtools.own_driven_within(DRIVEN_WITHIN),
                wanted: self.pacing.wants.wanted(b.id()),
                // A canvas shot paints every page: each counts as the front one.
                front: self.pacing.all_live || front == Some(&tab.node),
            };
            let pace = Pace::of(self.pacing.view.as_ref(), &node.rect, page);
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
    use crate::model::{Command, NodeKind};
    use crate::runtime::engine::LiveBrowser;

    fn view() -> OnScreen {
        OnScreen::new(rect(0.0, 0.0, 1600.0, 1000.0), 1.0)
    }

    fn rect(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }

    /// A shown tab nobody uses, and the same with one use set.
    fn idle() -> PageUse {
        PageUse { shown: true, ..PageUse::default() }
    }

    #[test]
    fn pages_are_paced_by_where_and_how_big_they_are() {
        let v = view();
        let page = rect(100.0, 100.0, 800.0, 600.0);
        let hidden_tab = PageUse { shown: false, ..idle() };
        let driven = PageUse { driven: true, ..idle() };
        assert_eq!(Pace::of(Some(&v), &page, idle()), Pace::Live);
        assert_eq!(Pace::of(Some(&v), &page, hidden_tab), Pace::Away, "a tab not shown");
        let far = rect(10_000.0, 0.0, 800.0, 600.0);
        assert_eq!(Pace::of(Some(&v), &far, idle()), Pace::Away);
        assert_eq!(Pace::of(Some(&v), &far, driven), Pace::Live, "driven pages keep their rate");
        assert_eq!(Pace::of(Some(&v), &far, PageUse { wanted: true, ..idle() }), Pace::Live, "a client needs frames");
        assert_eq!(Pace::of(Some(&v), &page, PageUse { shown: false, ..driven }), Pace::Live);
        assert_eq!(
            Pace::of(Some(&v), &far, PageUse { front: true, ..idle() }),
            Pace::Away,
            "front counts headless only"
        );
        // Just past the right edge: kept live so a pan does not reveal a slow page.
        let beside = rect(1700.0, 0.0, 800.0, 600.0);
        assert_eq!(Pace::of(Some(&v), &beside, idle()), Pace::Live);
        let small = rect(100.0, 100.0, 150.0, 100.0);
        assert_eq!(Pace::of(Some(&v), &small, idle()), Pace::Glance, "too small to read");
        let zoomed_out = OnScreen::new(rect(0.0, 0.0, 8000.0, 5000.0), 0.2);
        assert_eq!(Pace::of(Some(&zoomed_out), &page, idle()), Pace::Glance, "zoomed too far out");
        assert_eq!(Pace::of(Some(&OnScreen::nothing()), &page, idle()), Pace::Away, "the window is covered");
        assert!(!OnScreen::nothing().shows(&page));
        assert!(Pace::Live.fps() > Pace::Glance.fps() && Pace::Glance.fps() > Pace::Away.fps());
        assert_eq!(Pace::Away.fps(), 1);
    }

    #[test]
    fn headless_pages_are_tabs_of_one_window() {
        let page = rect(100.0, 100.0, 800.0, 600.0);
        assert_eq!(Pace::of(None, &page, idle()), Pace::Away, "a settled page nobody uses is a background tab");
        assert_eq!(
            Pace::of(None, &page, PageUse { driven: true, ..idle() }),
            Pace::Away,
            "a CDP client's commands alone"
        );
        for (what, used) in [
            ("the front page", PageUse { front: true, ..idle() }),
            ("an agent's tool operations", PageUse { tool_driven: true, driven: true, ..idle() }),
            ("a client needs frames", PageUse { wanted: true, ..idle() }),
        ] {
            assert_eq!(Pace::of(None, &page, used), Pace::Live, "{what}");
            assert_eq!(Pace::of(None, &page, PageUse { shown: false, ..used }), Pace::Away, "{what}, a tab not shown");
        }
    }

    #[test]
    fn paint_wants_last_a_while_and_focus_emulation_while_any_client_has_it_on() {
        let wants = PaintWants::default();
        let (a, b) = (BrowserId(1), BrowserId(2));
        assert!(!wants.wanted(a));
        wants.paint_for(a);
        assert!(wants.wanted(a) && !wants.wanted(b));
        wants.emulate_focus(b, true);
        wants.emulate_focus(b, true);
        wants.emulate_focus(b, false);
        assert!(wants.wanted(b), "one client still emulates focus");
        wants.emulate_focus(b, false);
        wants.emulate_focus(b, false);
        assert!(!wants.wanted(b), "none does; an extra off does not count below zero");
        wants.emulate_focus(b, true);
        assert!(wants.wanted(b));
        wants.prune(|id| id != b);
        assert!(wants.wanted(a) && !wants.wanted(b), "a page that is gone is forgotten");
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
        let _pending = page.devtools().request("Runtime.evaluate", serde_json::json!({"expression": "1"}), None);
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
