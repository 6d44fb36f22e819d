//! The project tab strip along the top of the window: one tab per open
//! project (its folder's name), the active one ringed. A click on a tab
//! activates its project, a middle click closes it (its layout stays in its
//! folder, and Ctrl+K "Open a project folder…" brings it back); Ctrl+Tab and
//! Ctrl+Shift+Tab step through the tabs. A tab shows how many of its nodes
//! need the person (a pill with the count) and whether its desktop
//! notifications are muted. Layout and hit testing only: the overlay draws
//! the tabs and the window applies what they ask for.

use crate::model::ProjectId;
use crate::runtime::terminals::ATTENTION;
use crate::runtime::Runtime;
use canvas_render::{Badge, Color, NodeContent, NodeKind, NodeView, Rect};

/// Height of the strip in window pixels: a title bar's, so a tab reads as one.
pub const STRIP_HEIGHT: f32 = 30.0;
/// Widest and narrowest tab.
const TAB_MAX: f32 = 220.0;
const TAB_MIN: f32 = 80.0;
/// Space between tabs and before the first.
const GAP: f32 = 6.0;
/// Overlay ids of the tabs count down from here (clear of the palette's and toasts').
const TAB_BASE: u64 = u64::MAX - 64;

/// One tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The project.
    pub id: ProjectId,
    /// Its name (the folder's).
    pub name: String,
    /// Whether it is the active project.
    pub active: bool,
    /// How many of its nodes need the person.
    pub needs_you: usize,
    /// Whether its desktop notifications are muted.
    pub muted: bool,
}

/// The tabs of the open projects, in order.
pub fn tabs(rt: &Runtime) -> Vec<Tab> {
    let ws = rt.workspace();
    let active = ws.active().map(|p| p.id().clone());
    ws.projects()
        .iter()
        .map(|p| Tab {
            id: p.id().clone(),
            name: p.name().to_owned(),
            active: Some(p.id()) == active.as_ref(),
            needs_you: rt.needing_you(p.id()),
            muted: rt.notifications_muted(p.folder()),
        })
        .collect()
}

/// Where each tab sits in a window `width` pixels wide: equal widths that shrink
/// (to a minimum) as tabs are added; tabs past the right edge are not shown.
pub fn layout(count: usize, width: f32) -> Vec<Rect> {
    if count == 0 {
        return vec![];
    }
    let w = ((width - GAP) / count as f32 - GAP).clamp(TAB_MIN, TAB_MAX);
    (0..count)
        .map(|i| Rect::new(GAP + i as f32 * (w + GAP), 0.0, w, STRIP_HEIGHT))
        .filter(|r| r.right() <= width)
        .collect()
}

/// The tab under window point (`x`, `y`), if any.
pub fn hit(count: usize, width: f32, x: f32, y: f32) -> Option<usize> {
    layout(count, width).iter().position(|r| x >= r.x && x < r.right() && y >= r.y && y < r.bottom())
}

/// The tab after (or, `back`, before) the active one, wrapping around.
pub fn step(tabs: &[Tab], back: bool) -> Option<ProjectId> {
    let n = tabs.len();
    let at = tabs.iter().position(|t| t.active)?;
    let next = if back { (at + n - 1) % n } else { (at + 1) % n };
    (next != at).then(|| tabs[next].id.clone())
}

/// The overlay nodes drawing the tabs.
pub fn views(tabs: &[Tab], width: f32) -> Vec<NodeView> {
    layout(tabs.len(), width)
        .into_iter()
        .zip(tabs)
        .enumerate()
        .map(|(i, (rect, tab))| NodeView {
            id: TAB_BASE - i as u64,
            rect,
            z: 0,
            kind: NodeKind::Group,
            title: if tab.muted { format!("{} · muted", tab.name) } else { tab.name.clone() },
            color: if tab.active { Color::hex(0x5b9cff) } else { Color::hex(0x565f89) },
            badge: (tab.needs_you > 0).then(|| Badge { text: tab.needs_you.to_string(), color: Color::hex(ATTENTION) }),
            focused: tab.active,
            selected: false,
            content: NodeContent::Empty,
            bar: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: &str, active: bool) -> Tab {
        Tab { id: ProjectId::new(id).unwrap(), name: id.to_owned(), active, needs_you: 0, muted: false }
    }

    #[test]
    fn a_tab_shows_how_many_need_you_and_whether_it_is_muted() {
        let quiet = tab("a", true);
        let busy = Tab { needs_you: 3, muted: true, ..tab("b", false) };
        let v = views(&[quiet, busy], 1280.0);
        assert_eq!((v[0].badge.as_ref(), v[0].title.as_str()), (None, "a"));
        assert_eq!(v[1].badge, Some(Badge { text: "3".into(), color: Color::hex(ATTENTION) }));
        assert_eq!(v[1].title, "b · muted");
    }

    #[test]
    fn tabs_share_the_width_within_limits_and_are_hit_where_drawn() {
        assert!(layout(0, 800.0).is_empty());
        let one = layout(1, 1280.0);
        assert_eq!(one, vec![Rect::new(GAP, 0.0, TAB_MAX, STRIP_HEIGHT)]);
        let many = layout(10, 800.0);
        assert!(many.iter().all(|r| r.w >= TAB_MIN && r.right() <= 800.0));
        assert!(many.windows(2).all(|p| p[1].x > p[0].right()), "tabs do not overlap");
        assert!(many.len() < 10, "tabs past the edge are not shown");
        let r = layout(3, 1280.0)[1];
        assert_eq!(hit(3, 1280.0, r.x + 1.0, 10.0), Some(1));
        assert_eq!(hit(3, 1280.0, r.x + 1.0, STRIP_HEIGHT + 1.0), None, "below the strip is canvas");
        assert_eq!(hit(3, 1280.0, r.x - GAP / 2.0, 10.0), None, "the gap between tabs is canvas");
    }

    #[test]
    fn stepping_wraps_both_ways() {
        let tabs = [tab("a", false), tab("b", true), tab("c", false)];
        assert_eq!(step(&tabs, false), Some(ProjectId::new("c").unwrap()));
        assert_eq!(step(&tabs, true), Some(ProjectId::new("a").unwrap()));
        let last = [tab("a", false), tab("b", true)];
        assert_eq!(step(&last, false), Some(ProjectId::new("a").unwrap()));
        assert_eq!(step(&[tab("a", true)], false), None, "one tab: nowhere to go");
        assert_eq!(step(&[tab("a", false)], false), None, "no active tab");
        let v = views(&tabs, 1280.0);
        assert_eq!(v.len(), 3);
        assert!(v[1].focused && !v[0].focused);
        assert_eq!(v[2].title, "c");
    }
}
