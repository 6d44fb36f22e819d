//! What the person can see, and what that costs: a big canvas pays only for
//! the nodes on screen.
//!
//! The window tells the runtime which part of the canvas it shows
//! (`Runtime::set_on_screen`, in `view.rs`, which paces pages through
//! [`Pacing`]). Headless there is no view and nobody looks
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
//! (`Runtime::keep_pages_live`). With a view:
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

use super::browsers::BrowserNodes;
use super::engine::Browser;
use crate::model::{NodeId, Project, Rect};
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

/// What the runtime's page pacing needs between turns.
#[derive(Debug, Default)]
pub struct Pacing {
    /// What the window shows (none headless).
    view: Option<OnScreen>,
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
    wants: PaintWants,
}

impl Pacing {
    /// Sets what the window shows; true when it changed.
    pub(crate) fn set_view(&mut self, view: Option<OnScreen>) -> bool {
        if self.view == view {
            return false;
        }
        self.view = view;
        true
    }

    /// What the window shows (none headless).
    pub(crate) fn view(&self) -> Option<&OnScreen> {
        self.view.as_ref()
    }

    /// Makes `node` the front one; true when that changed.
    pub(crate) fn bring_to_front(&mut self, node: NodeId) -> bool {
        if self.fronts.last() == Some(&node) {
            return false;
        }
        self.fronts.retain(|n| n != &node);
        self.fronts.push(node);
        if self.fronts.len() > FRONT_HISTORY {
            self.fronts.remove(0);
        }
        true
    }

    /// Headless: the front node, the last one brought to front that is still
    /// on `project`'s canvas (the ones removed are forgotten), else `focus`.
    pub(crate) fn front_node(&mut self, project: Option<&Project>, focus: Option<&NodeId>) -> Option<NodeId> {
        if let Some(project) = project {
            self.fronts.retain(|n| project.node(n).is_some());
        }
        self.fronts.last().or(focus).cloned()
    }

    /// Keeps every shown page live headless (a canvas shot) or not.
    pub(crate) fn set_all_live(&mut self, live: bool) {
        self.all_live = live;
    }

    /// The pages CDP clients need painted (shared with the facade's thread).
    pub(crate) fn wants(&self) -> &PaintWants {
        &self.wants
    }

    /// Whether [`PACE_EVERY`] passed since pacing last ran.
    pub(crate) fn due(&self) -> bool {
        self.last.is_none_or(|t| t.elapsed() >= PACE_EVERY)
    }

    /// Sets every live page's frame rate and visibility from where its node
    /// is in `project` (see the module doc); a page that speeds up or shows
    /// again is repainted at once. `front` is the front node headless.
    pub(crate) fn pace(&mut self, project: Option<&Project>, browsers: &BrowserNodes, front: Option<&NodeId>) {
        self.last = Some(Instant::now());
        self.wants.prune(|id| browsers.tab_of(id).is_some());
        let Some(project) = project else { return };
        for (tab, b) in browsers.iter() {
            let Some(node) = project.node(&tab.node) else { continue };
            let devtools = b.devtools();
            let page = PageUse {
                shown: browsers.is_shown(tab),
                driven: devtools.driven_within(DRIVEN_WITHIN),
                tool_driven: devtools.own_driven_within(DRIVEN_WITHIN),
                wanted: self.wants.wanted(b.id()),
                // A canvas shot paints every page: each counts as the front one.
                front: self.all_live || front == Some(&tab.node),
            };
            let pace = Pace::of(self.view.as_ref(), &node.rect, page);
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
}
