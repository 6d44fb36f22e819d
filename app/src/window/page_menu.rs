//! A page's context menu drawn where the person right-clicked: its entries
//! top to bottom, the one under the pointer (or chosen with the arrow keys)
//! highlighted, entries that would do nothing dimmed. A click on an entry or
//! Enter picks it; Escape or a click anywhere else closes the menu, and that
//! click goes no further, as with a desktop menu. Layout, keys and
//! hit-testing only: the window draws it and the runtime carries the entry out.

use super::overlay::inside;
use crate::model::NodeId;
use crate::runtime::Runtime;
use canvas_render::{Camera, Color, NodeContent, NodeKind, NodeView, Rect};
use cef_bridge::{ContextMenu, MenuCommand, MenuEntry};

/// The menu's width, in logical pixels.
const WIDTH: f32 = 260.0;
/// Height of an entry.
const ROW_H: f32 = 30.0;
/// Height of the gap a separator makes.
const SEPARATOR_H: f32 = 10.0;
/// Padding inside the panel around the entries.
const PAD: f32 = 5.0;
/// The panel's title bar.
const TITLE_H: f32 = 28.0;
/// Distance kept from the window's edges.
const EDGE: f32 = 4.0;
/// The longest pause between wheel events of one gesture: the gesture that
/// closed a menu ends at the first pause this long.
pub const WHEEL_GESTURE_GAP: std::time::Duration = std::time::Duration::from_millis(250);

/// What the person did to an open menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuOutcome {
    /// Picked an entry.
    Pick(MenuCommand),
    /// Closed it without one.
    Close,
}

/// A key as the menu sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuKey {
    /// Down arrow: the next entry that can be picked.
    Down,
    /// Up arrow: the previous one.
    Up,
    /// Home: the first.
    First,
    /// End: the last.
    Last,
    /// Enter or Space: picks the chosen entry.
    Enter,
    /// Escape: closes the menu.
    Escape,
}

/// An open page menu and the entry chosen in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageMenu {
    /// What the page offers.
    pub menu: ContextMenu,
    /// The chosen entry (an index into `menu.entries`, always one that can be picked).
    pub chosen: Option<usize>,
}

/// Where a menu's parts are on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The panel.
    pub panel: Rect,
    /// Each command entry's row: its index in `menu.entries`, its rect.
    pub rows: Vec<(usize, Rect)>,
}

impl PageMenu {
    /// A menu as the page opened it, nothing chosen yet.
    pub fn new(menu: ContextMenu) -> Self {
        Self { menu, chosen: None }
    }

    /// The title: what the menu is for.
    pub fn title(&self) -> &'static str {
        let t = &self.menu.target;
        if t.link_url.is_some() {
            "Link"
        } else if t.image_url.is_some() {
            "Image"
        } else if t.editable {
            "Text field"
        } else if !t.selection.is_empty() {
            "Selection"
        } else {
            "Page"
        }
    }

    fn pickable(&self, i: usize) -> Option<MenuCommand> {
        match self.menu.entries.get(i) {
            Some(MenuEntry::Command { command, enabled: true }) => Some(*command),
            _ => None,
        }
    }

    /// Handles one key; `Some` once the menu is answered.
    pub fn key(&mut self, key: MenuKey) -> Option<MenuOutcome> {
        let pickable: Vec<usize> = (0..self.menu.entries.len()).filter(|i| self.pickable(*i).is_some()).collect();
        let at = self.chosen.and_then(|c| pickable.iter().position(|p| *p == c));
        let n = pickable.len();
        let next = match (key, at) {
            (MenuKey::Escape, _) => return Some(MenuOutcome::Close),
            (MenuKey::Enter, _) => return self.chosen.and_then(|c| self.pickable(c)).map(MenuOutcome::Pick),
            _ if n == 0 => None,
            (MenuKey::Down, Some(a)) => Some((a + 1) % n),
            (MenuKey::Up, Some(a)) => Some((a + n - 1) % n),
            (MenuKey::Down | MenuKey::First, None) | (MenuKey::First, Some(_)) => Some(0),
            (MenuKey::Up | MenuKey::Last, None) | (MenuKey::Last, Some(_)) => Some(n - 1),
        };
        self.chosen = next.map(|i| pickable[i]);
        None
    }

    /// The panel at the point the page asked for (`body`: the node's body on
    /// screen; `view`: the page's size in CSS pixels), opening left or up
    /// where it would leave the window (`screen`).
    pub fn layout(&self, body: Rect, view: (u32, u32), screen: (f32, f32)) -> Layout {
        let sx = body.w / view.0.max(1) as f32;
        let sy = body.h / view.1.max(1) as f32;
        let (ax, ay) = (body.x + self.menu.x as f32 * sx, body.y + self.menu.y as f32 * sy);
        let inner: f32 =
            self.menu.entries.iter().map(|e| if *e == MenuEntry::Separator { SEPARATOR_H } else { ROW_H }).sum();
        let h = TITLE_H + 2.0 * PAD + inner;
        let x = if ax + WIDTH + EDGE > screen.0 { ax - WIDTH } else { ax };
        let y = if ay + h + EDGE > screen.1 { ay - h } else { ay };
        let x = x.min(screen.0 - WIDTH - EDGE).max(EDGE);
        let y = y.min(screen.1 - h - EDGE).max(EDGE);
        let mut rows = vec![];
        let mut top = y + TITLE_H + PAD;
        for (i, e) in self.menu.entries.iter().enumerate() {
            match e {
                MenuEntry::Separator => top += SEPARATOR_H,
                MenuEntry::Command { .. } => {
                    rows.push((i, Rect::new(x + PAD, top, WIDTH - 2.0 * PAD, ROW_H)));
                    top += ROW_H;
                }
            }
        }
        Layout { panel: Rect::new(x, y, WIDTH, h), rows }
    }

    /// The pointer moved to (x, y): the entry under it becomes the chosen one; true when that changed.
    pub fn hover(&mut self, layout: &Layout, x: f32, y: f32) -> bool {
        let under = layout.rows.iter().find(|(_, r)| inside(r, x, y)).map(|(i, _)| *i);
        let chosen = under.filter(|i| self.pickable(*i).is_some()).or(if inside(&layout.panel, x, y) {
            self.chosen
        } else {
            None
        });
        let changed = chosen != self.chosen;
        self.chosen = chosen;
        changed
    }

    /// A press at (x, y): an entry that can be picked is; elsewhere on the
    /// panel nothing happens (`None`); off the panel the menu closes.
    pub fn click(&self, layout: &Layout, x: f32, y: f32) -> Option<MenuOutcome> {
        if !inside(&layout.panel, x, y) {
            return Some(MenuOutcome::Close);
        }
        let (i, _) = layout.rows.iter().find(|(_, r)| inside(r, x, y))?;
        self.pickable(*i).map(MenuOutcome::Pick)
    }

    /// The overlay views: the panel and one bar per entry (`base` keys them).
    pub fn views(&self, layout: &Layout, base: u64) -> Vec<NodeView> {
        let accent = Color::hex(0x5b9cff);
        let mut panel = super::overlay::panel(
            base,
            layout.panel,
            NodeKind::Artifact,
            self.title().into(),
            accent,
            NodeContent::Empty,
        );
        (panel.focused, panel.z) = (true, 6);
        let mut out = vec![panel];
        for (k, (i, rect)) in layout.rows.iter().enumerate() {
            let Some(MenuEntry::Command { command, enabled }) = self.menu.entries.get(*i) else { continue };
            let chosen = self.chosen == Some(*i);
            let color = match (chosen, enabled) {
                (true, _) => accent,
                (false, true) => Color::hex(0x9aa5ce),
                (false, false) => Color::hex(0x3b4261),
            };
            let title = command.label().to_string();
            let mut row =
                super::overlay::panel(base + 1 + k as u64, *rect, NodeKind::Group, title, color, NodeContent::Empty);
            (row.selected, row.z) = (chosen, 7);
            // The shortcut that does the same, right-aligned as desktop menus show it.
            row.badge =
                command.shortcut().map(|keys| canvas_render::Badge { text: keys.into(), color: Color::hex(0x2f3549) });
            out.push(row);
        }
        out
    }
}

/// Every browser node of the active project whose page waits on its context
/// menu, with the node's body on screen (logical pixels) and the page's size.
pub fn open_menus(rt: &Runtime, camera: &Camera, scale: f32) -> Vec<(NodeId, ContextMenu, Rect, (u32, u32))> {
    let Some(project) = rt.project() else { return vec![] };
    project
        .nodes()
        .filter_map(|n| {
            let (_, b) = rt.browsers().for_node(&n.id)?;
            let menu = b.context_menu()?;
            let body = super::page_dialog::body_on_screen(rt, camera, scale, &n.rect);
            Some((n.id.clone(), menu, body, b.view_size()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cef_bridge::MenuTarget;

    fn page_menu(x: i32, y: i32) -> PageMenu {
        PageMenu::new(ContextMenu::new(x, y, MenuTarget { can_go_forward: true, ..Default::default() }))
    }

    fn centre(r: Rect) -> (f32, f32) {
        (r.x + r.w / 2.0, r.y + r.h / 2.0)
    }

    #[test]
    fn keys_move_over_entries_that_can_be_picked_and_pick_or_close() {
        let mut m = page_menu(0, 0);
        assert_eq!(m.key(MenuKey::Enter), None, "nothing chosen yet");
        assert_eq!(m.key(MenuKey::Down), None);
        assert_eq!(m.key(MenuKey::Enter), Some(MenuOutcome::Pick(MenuCommand::Forward)), "Back is disabled: skipped");
        m.key(MenuKey::Down);
        m.key(MenuKey::Down);
        assert_eq!(m.key(MenuKey::Enter), Some(MenuOutcome::Pick(MenuCommand::SelectAll)));
        m.key(MenuKey::Down);
        assert_eq!(m.key(MenuKey::Enter), Some(MenuOutcome::Pick(MenuCommand::Forward)), "wraps around");
        m.key(MenuKey::Up);
        assert_eq!(m.key(MenuKey::Enter), Some(MenuOutcome::Pick(MenuCommand::SelectAll)));
        m.key(MenuKey::First);
        assert_eq!(m.key(MenuKey::Enter), Some(MenuOutcome::Pick(MenuCommand::Forward)));
        assert_eq!(m.key(MenuKey::Escape), Some(MenuOutcome::Close));
    }

    #[test]
    fn the_menu_opens_at_the_pages_point_and_stays_in_the_window() {
        let body = Rect::new(100.0, 50.0, 400.0, 300.0);
        // The page is 800×600 CSS pixels shown at half size: (200, 100) is at (200, 100) on screen.
        let l = page_menu(200, 100).layout(body, (800, 600), (1000.0, 800.0));
        assert_eq!((l.panel.x, l.panel.y), (200.0, 100.0));
        assert_eq!(l.rows.len(), 4, "Back, Forward, Reload, Select all");
        assert!(l.rows.windows(2).all(|w| w[0].1.bottom() <= w[1].1.y), "top to bottom");
        let near_corner = page_menu(790, 590).layout(body, (800, 600), (520.0, 360.0));
        assert!(near_corner.panel.right() <= 520.0 && near_corner.panel.bottom() <= 360.0, "{:?}", near_corner.panel);
        assert!(near_corner.panel.x >= 0.0 && near_corner.panel.y >= 0.0);
    }

    #[test]
    fn the_pointer_chooses_and_a_click_picks_dismisses_or_does_nothing() {
        let body = Rect::new(0.0, 0.0, 800.0, 600.0);
        let mut m = page_menu(10, 10);
        let l = m.layout(body, (800, 600), (800.0, 600.0));
        let (bx, by) = centre(l.rows[0].1);
        assert!(!m.hover(&l, bx, by), "Back is disabled: not chosen");
        assert_eq!(m.click(&l, bx, by), None, "a disabled entry does nothing");
        let (fx, fy) = centre(l.rows[1].1);
        assert!(m.hover(&l, fx, fy));
        assert_eq!(m.chosen, Some(1));
        assert_eq!(m.click(&l, fx, fy), Some(MenuOutcome::Pick(MenuCommand::Forward)));
        assert_eq!(m.click(&l, l.panel.x + 3.0, l.panel.y + 3.0), None, "the title bar holds the menu");
        assert_eq!(m.click(&l, 700.0, 500.0), Some(MenuOutcome::Close));
        assert!(m.hover(&l, 700.0, 500.0) && m.chosen.is_none(), "leaving the panel chooses nothing");
        let views = m.views(&l, 10);
        assert_eq!(views.len(), 5, "panel and four entries");
        assert_eq!(views[3].title, "Reload");
        assert_eq!(views[3].badge.as_ref().map(|b| b.text.as_str()), Some("Ctrl+R"));
        assert!(views.iter().all(|v| v.z >= 6), "above dialogs and pickers");
    }
}
