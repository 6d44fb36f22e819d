//! A browser node's title bar: back, forward, reload (stop while loading), the
//! address field, the tab strip (when the node has more than one tab), the
//! load progress line and the find-in-page field. The
//! layout is public, in node-local world units, so the app hit-tests exactly
//! what is drawn; drawing adds shapes and labels to a node's chrome.

use crate::color::Color;
use crate::geometry::{Rect, Vec2};
use crate::quad::QuadInstance;
use crate::text::Label;
use crate::theme::Theme;

/// What a browser node's title bar shows (the app fills it from the page and
/// from what the person is typing).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BrowserBar {
    /// The page's history has an entry behind (back is enabled).
    pub can_go_back: bool,
    /// The page's history has an entry ahead (forward is enabled).
    pub can_go_forward: bool,
    /// A load is under way: the reload button is a stop button and the progress line shows.
    pub loading: bool,
    /// Load progress in thousandths (0..=1000).
    pub progress: u16,
    /// The page's URL, shown with its scheme.
    pub address: String,
    /// The address being typed, when the field is being edited.
    pub editing: Option<FieldEdit>,
    /// Why the typed address was refused, shown in the field in place of it.
    pub error: Option<String>,
    /// The part under the pointer.
    pub hover: Option<BarPart>,
    /// The find-in-page field, while it is open.
    pub find: Option<FindField>,
    /// The node's tabs, in order; the strip shows only when there are two or more.
    pub tabs: Vec<TabChip>,
}

/// One tab as its chip in the strip shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TabChip {
    /// The page's title (or its URL before it has one).
    pub title: String,
    /// The tab the node shows.
    pub active: bool,
}

/// How many tabs a node has and which one it shows: all the layout needs of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TabCount {
    /// Tabs in the node.
    pub count: usize,
    /// Index of the shown tab.
    pub active: usize,
}

impl BrowserBar {
    /// The tab count and shown tab of this bar, for [`bar_layout`] and [`bar_part_at`].
    pub fn tab_count(&self) -> TabCount {
        TabCount { count: self.tabs.len(), active: self.tabs.iter().position(|t| t.active).unwrap_or(0) }
    }
}

/// A one-line text field being edited.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FieldEdit {
    /// The text.
    pub text: String,
    /// Caret position, in characters.
    pub cursor: usize,
    /// The whole text is selected (typing replaces it).
    pub all_selected: bool,
}

/// The find-in-page field: what is searched for and what was found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FindField {
    /// The text searched for, and the caret.
    pub edit: FieldEdit,
    /// Matches found and the highlighted one (1-based), once the page answered.
    pub matches: Option<(u32, u32)>,
}

/// A part of the bar that takes a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarPart {
    /// The back button.
    Back,
    /// The forward button.
    Forward,
    /// Reload, or stop while loading.
    Reload,
    /// The address field.
    Address,
    /// The find-in-page field.
    Find,
    /// A tab's chip (switch to it), by index among the node's tabs.
    Tab(usize),
    /// A tab's close button, by index.
    CloseTab(usize),
    /// The new-tab button after the chips.
    NewTab,
}

/// Where each part of the bar is, in world units from the node's top-left corner.
#[derive(Debug, Clone, PartialEq)]
pub struct BarLayout {
    /// Back button.
    pub back: Rect,
    /// Forward button.
    pub forward: Rect,
    /// Reload / stop button.
    pub reload: Rect,
    /// Address field.
    pub address: Rect,
    /// The find field, when open.
    pub find: Rect,
    /// Where the page title starts (it ends at the badge or the right edge).
    pub title_x: f32,
    /// The tab strip, when the node has two or more tabs and room for one.
    pub strip: Option<TabStrip>,
}

/// The tab strip: the chips that fit (a window around the shown tab when not
/// all do) and the new-tab button after them.
#[derive(Debug, Clone, PartialEq)]
pub struct TabStrip {
    /// Index of the first tab with a chip.
    pub first: usize,
    /// Each shown chip and its close button, from `first` on.
    pub chips: Vec<(Rect, Rect)>,
    /// The new-tab button.
    pub new_tab: Rect,
    /// Where the strip ends (the badge may start there).
    pub end: f32,
}

/// Button width and the height of buttons and fields.
const BUTTON_W: f32 = 24.0;
const CONTROL_H: f32 = 22.0;
/// Where the first button starts: after the padding, the kind icon and a gap.
const FIRST_BUTTON: f32 = 30.0;
/// The address field's share of the width after the buttons, and its bounds.
const ADDRESS_SHARE: f32 = 0.62;
const ADDRESS_MIN: f32 = 160.0;
const ADDRESS_MAX: f32 = 760.0;
/// The find field's width (less on narrow nodes).
const FIND_W: f32 = 250.0;
/// Right padding of the title bar.
const PAD: f32 = 10.0;
/// Text inset inside a field.
const FIELD_INSET: f32 = 8.0;
/// The address field's share when the node has tabs (the strip takes the rest).
const ADDRESS_SHARE_TABS: f32 = 0.36;
/// A tab chip's width bounds and its close button's size.
const TAB_MIN: f32 = 84.0;
const TAB_MAX: f32 = 200.0;
const TAB_CLOSE: f32 = 16.0;
/// Room kept right of the strip for the node's badge.
const BADGE_ROOM: f32 = 110.0;
/// Red for refusals and "no matches".
const ERROR: Color = Color::hex(0xf7768e);

/// The bar's layout for a node `width` world units wide under a title bar
/// `title_height` high, with `tabs` (a strip only from two tabs on).
pub fn bar_layout(width: f32, title_height: f32, tabs: TabCount) -> BarLayout {
    let y = ((title_height - CONTROL_H) * 0.5).max(0.0);
    // A button that does not fit the node is left out (zero width: not drawn, not hit).
    let button = |i: f32| {
        let x = FIRST_BUTTON + i * (BUTTON_W + 2.0);
        Rect::new(x, y, if x + BUTTON_W <= width - 4.0 { BUTTON_W } else { 0.0 }, CONTROL_H)
    };
    let address_x = FIRST_BUTTON + 3.0 * (BUTTON_W + 2.0) + 6.0;
    let avail = (width - PAD - address_x).max(0.0);
    let share = if tabs.count > 1 { ADDRESS_SHARE_TABS } else { ADDRESS_SHARE };
    let address_w = (avail * share).clamp(ADDRESS_MIN.min(avail), ADDRESS_MAX);
    let find_w = FIND_W.min((width - PAD - address_x).max(0.0));
    let title_x = address_x + address_w + 10.0;
    BarLayout {
        back: button(0.0),
        forward: button(1.0),
        reload: button(2.0),
        address: Rect::new(address_x, y, address_w, CONTROL_H),
        find: Rect::new((width - PAD - find_w).max(address_x), y, find_w, CONTROL_H),
        title_x,
        strip: tab_strip(title_x, width - PAD - BADGE_ROOM, y, tabs),
    }
}

/// Lays out chips from `x0`, the new-tab button included, ending by `x1`.
fn tab_strip(x0: f32, x1: f32, y: f32, tabs: TabCount) -> Option<TabStrip> {
    if tabs.count < 2 {
        return None;
    }
    let room = x1 - x0 - BUTTON_W - 2.0;
    let w = (room / tabs.count as f32 - 2.0).clamp(TAB_MIN, TAB_MAX);
    let fit = (((room + 2.0) / (w + 2.0)).floor().max(0.0) as usize).min(tabs.count);
    if fit == 0 {
        return None;
    }
    // Not all fit: a window of chips that keeps the shown tab in it.
    let active = tabs.active.min(tabs.count - 1);
    let first = active.saturating_sub(fit / 2).min(tabs.count - fit);
    let chips: Vec<(Rect, Rect)> = (0..fit)
        .map(|i| {
            let x = x0 + i as f32 * (w + 2.0);
            let close = Rect::new(x + w - TAB_CLOSE - 3.0, y + (CONTROL_H - TAB_CLOSE) * 0.5, TAB_CLOSE, TAB_CLOSE);
            (Rect::new(x, y, w, CONTROL_H), close)
        })
        .collect();
    let new_x = x0 + fit as f32 * (w + 2.0);
    Some(TabStrip { first, chips, new_tab: Rect::new(new_x, y, BUTTON_W, CONTROL_H), end: new_x + BUTTON_W + 4.0 })
}

/// The part of a browser node's bar at world point (x, y), for a node at
/// `node` (world units) whose title bar is `title_height` high, with `tabs`;
/// `find_open` when the find field shows (it lies over the title and the strip).
pub fn bar_part_at(node: Rect, title_height: f32, tabs: TabCount, find_open: bool, x: f32, y: f32) -> Option<BarPart> {
    let l = bar_layout(node.w, title_height, tabs);
    let p = Vec2::new(x - node.x, y - node.y);
    if find_open && l.find.contains(p) {
        return Some(BarPart::Find);
    }
    if let Some(strip) = &l.strip {
        if strip.new_tab.contains(p) {
            return Some(BarPart::NewTab);
        }
        for (i, (chip, close)) in strip.chips.iter().enumerate() {
            if close.contains(p) {
                return Some(BarPart::CloseTab(strip.first + i));
            }
            if chip.contains(p) {
                return Some(BarPart::Tab(strip.first + i));
            }
        }
    }
    let parts = [
        (l.back, BarPart::Back),
        (l.forward, BarPart::Forward),
        (l.reload, BarPart::Reload),
        (l.address, BarPart::Address),
    ];
    parts.into_iter().find(|(r, _)| r.w > 0.0 && r.contains(p)).map(|(_, part)| part)
}

/// Draws `bar` into a node's texture: `origin` is the node's top-left corner in
/// texture pixels, `scale` texture pixels per world unit. Returns where the
/// page title may go (x from, x to, in texture pixels), or `None` when the
/// find field covers it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn push_bar(
    q: &mut Vec<QuadInstance>,
    labels: &mut Vec<Label>,
    bar: &BrowserBar,
    (node_w, th): (f32, f32),
    origin: (f32, f32),
    theme: &Theme,
    scale: f32,
    measure: &mut impl FnMut(&str, f32, bool) -> f32,
) -> Option<(f32, f32)> {
    let s = scale;
    let l = bar_layout(node_w, theme.title_height, bar.tab_count());
    let px = |r: Rect| Rect::new(origin.0 + (r.x * s).round(), origin.1 + (r.y * s).round(), r.w * s, r.h * s);
    let on = theme.title_text.with_alpha(230);
    let off = theme.title_text.with_alpha(64);
    let hover_fill = theme.title_bar.mix(Color::rgb(255, 255, 255), 0.12);
    let stroke = (1.6 * s).max(1.0);
    let buttons = [
        (l.back, BarPart::Back, bar.can_go_back),
        (l.forward, BarPart::Forward, bar.can_go_forward),
        (l.reload, BarPart::Reload, true),
    ];
    for (rect, part, enabled) in buttons.into_iter().filter(|(r, _, _)| r.w > 0.0) {
        let r = px(rect);
        if enabled && bar.hover == Some(part) {
            q.push(QuadInstance::fill(r.x, r.y, r.w, r.h, 5.0 * s, hover_fill));
        }
        let icon = (12.0 * s).round();
        let at = (r.x + ((r.w - icon) * 0.5).round(), r.y + ((r.h - icon) * 0.5).round());
        let color = if enabled { on } else { off };
        let glyph = match part {
            BarPart::Back => Glyph::Back,
            BarPart::Forward => Glyph::Forward,
            _ if bar.loading => Glyph::Stop,
            _ => Glyph::Reload,
        };
        push_glyph(q, glyph, at, icon, color, stroke);
    }

    // The address field.
    let f = px(l.address);
    let size = theme.title_font_size * s;
    if f.w > 2.0 * FIELD_INSET * s {
        let (border, width) = match (&bar.error, &bar.editing) {
            (Some(_), _) => (ERROR, (1.5 * s).max(1.0)),
            (None, Some(_)) => (theme.focus, (1.5 * s).max(1.0)),
            _ if bar.hover == Some(BarPart::Address) => (theme.node_border.mix(theme.title_text, 0.25), s.max(1.0)),
            _ => (theme.node_border, s.max(1.0)),
        };
        q.push(QuadInstance::boxed(f.x, f.y, f.w, f.h, 6.0 * s, theme.canvas, border, width));
        let inner = Rect::new(f.x + FIELD_INSET * s, f.y, f.w - 2.0 * FIELD_INSET * s, f.h);
        match (&bar.error, &bar.editing) {
            (Some(why), _) => labels.push(line(why, inner, size, ERROR)),
            (None, Some(edit)) => push_edit(q, labels, edit, inner, size, theme, s, measure),
            (None, None) => push_address(labels, &bar.address, inner, size, theme, measure),
        }
    }

    if let Some(strip) = &l.strip {
        if bar.find.is_none() {
            push_strip(q, labels, bar, strip, &px, theme, s, measure);
        }
    }

    // The progress line along the bottom of the title bar.
    if bar.loading {
        let done = (f32::from(bar.progress.min(1000)) / 1000.0).max(0.05);
        let left = origin.0 + s.max(1.0);
        let width = ((node_w - 2.0) * s).max(0.0) * done;
        q.push(QuadInstance::fill(
            left,
            origin.1 + th - (2.0 * s).max(1.0),
            width,
            (2.0 * s).max(1.0),
            0.0,
            theme.focus,
        ));
    }

    if let Some(find) = &bar.find {
        let r = px(l.find);
        q.push(QuadInstance::boxed(r.x, r.y, r.w, r.h, 6.0 * s, theme.canvas, theme.focus, (1.5 * s).max(1.0)));
        let small = theme.badge_font_size * s;
        let (count, colour) = match find.matches {
            None => (String::new(), theme.body_text),
            Some((0, _)) if !find.edit.text.is_empty() => ("no matches".to_string(), ERROR),
            Some((0, _)) => (String::new(), theme.body_text),
            // Chromium names the highlighted match a moment after the count.
            Some((1, 0)) => ("1 match".to_string(), theme.body_text),
            Some((n, 0)) => (format!("{n} matches"), theme.body_text),
            Some((n, active)) => (format!("{active} of {n}"), theme.body_text),
        };
        let count_w = if count.is_empty() { 0.0 } else { measure(&count, small, false).ceil() + FIELD_INSET * s };
        let inner = Rect::new(r.x + FIELD_INSET * s, r.y, (r.w - 2.0 * FIELD_INSET * s - count_w).max(1.0), r.h);
        if find.edit.text.is_empty() {
            labels.push(line("Find in page", inner, size, theme.title_text.with_alpha(110)));
            push_caret(q, inner, 0.0, size, theme, s);
        } else {
            push_edit(q, labels, &find.edit, inner, size, theme, s, measure);
        }
        if !count.is_empty() {
            let at = Rect::new(inner.x + inner.w + FIELD_INSET * s, r.y, count_w, r.h);
            labels.push(line(&count, at, small, colour));
        }
        return None;
    }
    match &l.strip {
        // The chips name the pages: no title beside them.
        Some(_) => None,
        None => Some((origin.0 + (l.title_x * s).round(), origin.0 + node_w * s)),
    }
}

/// Where the badge may start on a bar (after the address field, or after the tab strip).
pub(crate) fn badge_start(node_w: f32, title_height: f32, tabs: TabCount) -> f32 {
    let l = bar_layout(node_w, title_height, tabs);
    l.strip.map_or(l.title_x, |strip| strip.end)
}

/// The tab chips (the shown one raised like a field, a close cross on each)
/// and the new-tab button.
#[allow(clippy::too_many_arguments)]
fn push_strip(
    q: &mut Vec<QuadInstance>,
    labels: &mut Vec<Label>,
    bar: &BrowserBar,
    strip: &TabStrip,
    px: &impl Fn(Rect) -> Rect,
    theme: &Theme,
    s: f32,
    measure: &mut impl FnMut(&str, f32, bool) -> f32,
) {
    let size = theme.badge_font_size * s;
    let hover_fill = theme.title_bar.mix(Color::rgb(255, 255, 255), 0.12);
    let rest_fill = theme.title_bar.mix(Color::rgb(255, 255, 255), 0.05);
    let stroke = (1.4 * s).max(1.0);
    for (i, (chip, close)) in strip.chips.iter().enumerate() {
        let index = strip.first + i;
        let Some(tab) = bar.tabs.get(index) else { continue };
        let r = px(*chip);
        let hovered = matches!(bar.hover, Some(BarPart::Tab(h) | BarPart::CloseTab(h)) if h == index);
        if tab.active {
            q.push(QuadInstance::boxed(r.x, r.y, r.w, r.h, 6.0 * s, theme.canvas, theme.node_border, s.max(1.0)));
        } else {
            q.push(QuadInstance::fill(r.x, r.y, r.w, r.h, 6.0 * s, if hovered { hover_fill } else { rest_fill }));
        }
        let c = px(*close);
        if bar.hover == Some(BarPart::CloseTab(index)) {
            q.push(QuadInstance::fill(c.x, c.y, c.w, c.h, 4.0 * s, hover_fill));
        }
        let icon = (8.0 * s).round();
        let at = (c.x + ((c.w - icon) * 0.5).round(), c.y + ((c.h - icon) * 0.5).round());
        let colour = theme.title_text.with_alpha(if tab.active || hovered { 210 } else { 120 });
        push_glyph(q, Glyph::Stop, at, icon, colour, stroke);
        let text_colour = theme.title_text.with_alpha(if tab.active { 240 } else { 150 });
        let inner = Rect::new(r.x + FIELD_INSET * s, r.y, (c.x - r.x - FIELD_INSET * s - 2.0 * s).max(1.0), r.h);
        let title = if tab.title.is_empty() { "New tab" } else { tab.title.as_str() };
        labels.push(line(&fit_text(title, inner.w, size, measure), inner, size, text_colour));
    }
    let n = px(strip.new_tab);
    if bar.hover == Some(BarPart::NewTab) {
        q.push(QuadInstance::fill(n.x, n.y, n.w, n.h, 5.0 * s, hover_fill));
    }
    let icon = (10.0 * s).round();
    let at = (n.x + ((n.w - icon) * 0.5).round(), n.y + ((n.h - icon) * 0.5).round());
    push_glyph(q, Glyph::Plus, at, icon, theme.title_text.with_alpha(210), (1.6 * s).max(1.0));
}

/// `text` cut to fit `width` pixels, with an ellipsis when cut.
fn fit_text(text: &str, width: f32, size: f32, measure: &mut impl FnMut(&str, f32, bool) -> f32) -> String {
    if measure(text, size, false) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let cut: String = chars[..mid].iter().chain(std::iter::once(&'…')).collect();
        if measure(&cut, size, false) <= width {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    chars[..lo].iter().chain(std::iter::once(&'…')).collect()
}

/// One line of text vertically centred in `r`.
fn line(text: &str, r: Rect, size: f32, color: Color) -> Label {
    let h = size * 1.3;
    Label {
        text: text.to_string(),
        bounds: [r.x, r.y + ((r.h - h) * 0.5).round(), r.w.max(1.0), h + 1.0],
        size,
        line_height: 1.3,
        color,
        wrap: false,
        bold: false,
    }
}

/// The URL at rest: its scheme dimmed, the rest plain.
fn push_address(
    labels: &mut Vec<Label>,
    address: &str,
    inner: Rect,
    size: f32,
    theme: &Theme,
    measure: &mut impl FnMut(&str, f32, bool) -> f32,
) {
    let split = address.find("://").map(|i| i + 3).unwrap_or(0);
    let (scheme, rest) = address.split_at(split);
    let mut r = inner;
    if !scheme.is_empty() {
        let w = measure(scheme, size, false);
        labels.push(line(scheme, Rect::new(r.x, r.y, w.ceil() + 1.0, r.h), size, theme.title_text.with_alpha(130)));
        r = Rect::new(r.x + w, r.y, (r.w - w).max(1.0), r.h);
    }
    labels.push(line(rest, r, size, theme.title_text));
}

/// Text being edited: the selection, the caret, and as much of the text as
/// fits with the caret in view.
#[allow(clippy::too_many_arguments)]
fn push_edit(
    q: &mut Vec<QuadInstance>,
    labels: &mut Vec<Label>,
    edit: &FieldEdit,
    inner: Rect,
    size: f32,
    theme: &Theme,
    s: f32,
    measure: &mut impl FnMut(&str, f32, bool) -> f32,
) {
    let chars: Vec<char> = edit.text.chars().collect();
    let cursor = edit.cursor.min(chars.len());
    let slice = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    // The first character shown: the fewest dropped so the caret fits.
    let (mut lo, mut hi) = (0, cursor);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if measure(&slice(mid, cursor), size, false) <= inner.w - 2.0 {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let shown = slice(lo, chars.len());
    if edit.all_selected && !shown.is_empty() {
        let w = measure(&shown, size, false).min(inner.w);
        let h = size * 1.35;
        q.push(QuadInstance::fill(
            inner.x - 1.0,
            inner.y + (inner.h - h) * 0.5,
            w + 2.0,
            h,
            2.0 * s,
            theme.focus.with_alpha(90),
        ));
    }
    labels.push(line(&shown, inner, size, theme.title_text));
    let caret_x = measure(&slice(lo, cursor), size, false);
    push_caret(q, inner, caret_x, size, theme, s);
}

fn push_caret(q: &mut Vec<QuadInstance>, inner: Rect, x: f32, size: f32, theme: &Theme, s: f32) {
    let h = size * 1.2;
    let w = (1.5 * s).max(1.0);
    q.push(QuadInstance::fill((inner.x + x).round(), inner.y + ((inner.h - h) * 0.5).round(), w, h, 0.0, theme.cursor));
}

#[derive(Clone, Copy)]
enum Glyph {
    Back,
    Forward,
    Reload,
    Stop,
    Plus,
}

/// A button's symbol in a `size`-pixel square at `at`, from strokes.
fn push_glyph(q: &mut Vec<QuadInstance>, glyph: Glyph, at: (f32, f32), size: f32, color: Color, stroke: f32) {
    let p = |u: f32, v: f32| (at.0 + u * size, at.1 + v * size);
    let mut seg = |a: (f32, f32), b: (f32, f32)| q.push(QuadInstance::segment(a.0, a.1, b.0, b.1, stroke, color));
    match glyph {
        Glyph::Back | Glyph::Forward => {
            // Drawn pointing left; mirrored for forward.
            let m = |u: f32| if matches!(glyph, Glyph::Back) { u } else { 1.0 - u };
            seg(p(m(0.9), 0.5), p(m(0.12), 0.5));
            seg(p(m(0.12), 0.5), p(m(0.46), 0.16));
            seg(p(m(0.12), 0.5), p(m(0.46), 0.84));
        }
        Glyph::Stop => {
            seg(p(0.16, 0.16), p(0.84, 0.84));
            seg(p(0.84, 0.16), p(0.16, 0.84));
        }
        Glyph::Plus => {
            seg(p(0.5, 0.08), p(0.5, 0.92));
            seg(p(0.08, 0.5), p(0.92, 0.5));
        }
        Glyph::Reload => {
            // Three quarters and a bit of a circle, clockwise, ending in an arrowhead at the top right.
            let r = 0.4;
            let (a0, a1) = (20f32.to_radians(), 320f32.to_radians());
            let steps = 14;
            let at_angle = |a: f32| p(0.5 + r * a.cos(), 0.5 + r * a.sin());
            for i in 0..steps {
                let t0 = a0 + (a1 - a0) * i as f32 / steps as f32;
                let t1 = a0 + (a1 - a0) * (i + 1) as f32 / steps as f32;
                seg(at_angle(t0), at_angle(t1));
            }
            let end = at_angle(a1);
            // Tangent of increasing angle, and the head's two barbs swept back from it.
            let (tx, ty) = (-a1.sin(), a1.cos());
            let barb = 0.3 * size;
            for turn in [0.6f32, -0.6] {
                let (c, sn) = (turn.cos(), turn.sin());
                let (bx, by) = (-(tx * c - ty * sn), -(tx * sn + ty * c));
                seg(end, (end.0 + bx * barb, end.1 + by * barb));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: TabCount = TabCount { count: 1, active: 0 };

    #[test]
    fn parts_are_hit_where_they_are_laid_out_and_nowhere_else() {
        let t = Theme::default();
        let node = Rect::new(100.0, 50.0, 960.0, 640.0);
        let l = bar_layout(node.w, t.title_height, ONE);
        let centre = |r: Rect| (node.x + r.x + r.w / 2.0, node.y + r.y + r.h / 2.0);
        for (r, part) in [
            (l.back, BarPart::Back),
            (l.forward, BarPart::Forward),
            (l.reload, BarPart::Reload),
            (l.address, BarPart::Address),
        ] {
            let (x, y) = centre(r);
            assert_eq!(bar_part_at(node, t.title_height, ONE, false, x, y), Some(part));
        }
        // The kind icon, the gap between buttons and the title are the title bar's (drag).
        assert_eq!(bar_part_at(node, t.title_height, ONE, false, node.x + 12.0, node.y + 15.0), None);
        assert_eq!(bar_part_at(node, t.title_height, ONE, false, node.x + l.back.right() + 1.0, node.y + 15.0), None);
        assert_eq!(bar_part_at(node, t.title_height, ONE, false, node.x + l.title_x + 20.0, node.y + 15.0), None);
        // The find field lies over the title, only while open.
        let (x, y) = centre(l.find);
        assert_eq!(bar_part_at(node, t.title_height, ONE, true, x, y), Some(BarPart::Find));
        assert!(l.find.x >= l.title_x - 10.0 && l.find.right() <= node.w - PAD + 0.01);
        assert!(l.address.right() < l.title_x && l.address.w <= ADDRESS_MAX);
    }

    #[test]
    fn a_narrow_node_keeps_its_buttons_and_a_usable_field() {
        let t = Theme::default();
        let l = bar_layout(300.0, t.title_height, ONE);
        assert!(l.address.w >= 150.0 && l.address.right() <= 300.0 - PAD + 0.01, "{:?}", l.address);
        assert!(l.back.right() <= l.forward.x && l.forward.right() <= l.reload.x && l.reload.right() < l.address.x);
        let tiny = bar_layout(50.0, t.title_height, ONE);
        assert_eq!(tiny.address.w, 0.0, "no room: no field");
        assert_eq!((tiny.back.w, tiny.reload.w), (0.0, 0.0), "nor buttons past the edge");
        assert_eq!(bar_part_at(Rect::new(0.0, 0.0, 50.0, 100.0), t.title_height, ONE, false, 45.0, 15.0), None);
    }

    fn draw(bar: &BrowserBar) -> (Vec<QuadInstance>, Vec<Label>, Option<(f32, f32)>) {
        let (mut q, mut labels) = (vec![], vec![]);
        let mut measure = |s: &str, _: f32, _: bool| s.chars().count() as f32 * 7.0;
        let title =
            push_bar(&mut q, &mut labels, bar, (960.0, 30.0), (20.0, 20.0), &Theme::default(), 1.0, &mut measure);
        (q, labels, title)
    }

    #[test]
    fn the_address_shows_its_scheme_and_the_field_shows_typing_refusals_and_finds() {
        let page = BrowserBar { address: "https://example.com/a".into(), ..Default::default() };
        let (_, labels, title) = draw(&page);
        let texts: Vec<&str> = labels.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["https://", "example.com/a"]);
        assert!(labels[0].color.a < labels[1].color.a, "the scheme is dimmer than the rest");
        assert!(title.is_some_and(|(a, b)| b > a));

        let typing = BrowserBar {
            editing: Some(FieldEdit { text: "exa".into(), cursor: 3, all_selected: false }),
            ..page.clone()
        };
        let (q, labels, _) = draw(&typing);
        assert_eq!(labels.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(), ["exa"]);
        assert!(q.len() > draw(&page).0.len(), "a caret is drawn");

        // A long text keeps the caret in view: its start is dropped.
        let long = "x".repeat(400);
        let (_, labels, _) = draw(&BrowserBar {
            editing: Some(FieldEdit { text: long.clone(), cursor: 400, all_selected: false }),
            ..page.clone()
        });
        assert!(labels[0].text.len() < 400 && labels[0].text.len() > 10);

        let refused = BrowserBar { error: Some("refused scheme 'data'".into()), ..typing.clone() };
        let (_, labels, _) = draw(&refused);
        assert_eq!(labels[0].text, "refused scheme 'data'");
        assert_eq!(labels[0].color, ERROR);

        let finding = BrowserBar {
            find: Some(FindField {
                edit: FieldEdit { text: "milk".into(), cursor: 4, all_selected: false },
                matches: Some((5, 2)),
            }),
            ..page.clone()
        };
        let (_, labels, title) = draw(&finding);
        assert!(labels.iter().any(|l| l.text == "2 of 5"), "{labels:?}");
        assert_eq!(title, None, "the find field takes the title's place");
        let none = BrowserBar {
            find: Some(FindField { matches: Some((0, 0)), ..finding.find.clone().unwrap() }),
            ..page.clone()
        };
        assert!(draw(&none).1.iter().any(|l| l.text == "no matches" && l.color == ERROR));
        let counted =
            BrowserBar { find: Some(FindField { matches: Some((3, 0)), ..finding.find.clone().unwrap() }), ..page };
        assert!(draw(&counted).1.iter().any(|l| l.text == "3 matches"), "a count before the highlight");
    }

    #[test]
    fn disabled_buttons_are_dim_and_loading_shows_stop_and_progress() {
        let idle = BrowserBar { address: "http://127.0.0.1/".into(), ..Default::default() };
        let (q_idle, _, _) = draw(&idle);
        let loading = BrowserBar { loading: true, progress: 500, can_go_back: true, ..idle.clone() };
        let (q_loading, _, _) = draw(&loading);
        // The progress line: half the node's width at the bottom of the title bar.
        let line = |q: &[QuadInstance]| {
            q.iter().find(|i| i.params[3] == 0.0 && i.shape[1] == 20.0 + 28.0 && i.shape[3] == 2.0).map(|i| i.shape[2])
        };
        assert_eq!(line(&q_loading), Some(958.0 * 0.5));
        assert_eq!(line(&q_idle), None);
        // Stop (two strokes) replaces reload (an arc of fourteen and its two barbs).
        let strokes = |q: &[QuadInstance]| q.iter().filter(|i| i.params[3] == 1.0).count();
        assert_eq!(strokes(&q_idle) - strokes(&q_loading), 16 - 2);
        // Back and forward are dim when the history has nothing that way.
        let alpha_of_back =
            |q: &[QuadInstance]| q.iter().find(|i| i.params[3] == 1.0 && i.shape[0] < 20.0 + 54.0).map(|i| i.fill[3]);
        assert!(alpha_of_back(&q_idle) < alpha_of_back(&q_loading), "disabled back is dimmer than enabled");
        let hovered = BrowserBar { hover: Some(BarPart::Back), ..idle.clone() };
        assert_eq!(draw(&hovered).0.len(), q_idle.len(), "a disabled button shows no hover");
        let hovered = BrowserBar { hover: Some(BarPart::Reload), ..idle };
        assert_eq!(draw(&hovered).0.len(), q_idle.len() + 1, "an enabled one does");
    }

    fn tabs(n: usize, active: usize) -> Vec<TabChip> {
        (0..n).map(|i| TabChip { title: format!("Page number {i}"), active: i == active }).collect()
    }

    #[test]
    fn two_tabs_bring_a_strip_whose_chips_close_buttons_and_plus_are_hit_where_drawn() {
        let t = Theme::default();
        let node = Rect::new(0.0, 0.0, 960.0, 640.0);
        assert_eq!(bar_layout(node.w, t.title_height, ONE).strip, None, "one tab: no strip");
        let two = TabCount { count: 2, active: 1 };
        let l = bar_layout(node.w, t.title_height, two);
        let strip = l.strip.clone().expect("a strip for two tabs");
        assert_eq!((strip.first, strip.chips.len()), (0, 2));
        assert!(strip.chips[0].0.x >= l.address.right(), "chips start after the address field");
        assert!(strip.end <= node.w - PAD - BADGE_ROOM + 4.01, "room is kept for the badge");
        let centre = |r: Rect| (r.x + r.w / 2.0, r.y + r.h / 2.0);
        let hit = |r: Rect| {
            let (x, y) = centre(r);
            bar_part_at(node, t.title_height, two, false, x, y)
        };
        assert_eq!(hit(Rect::new(strip.chips[1].0.x, strip.chips[1].0.y, 20.0, 20.0)), Some(BarPart::Tab(1)));
        assert_eq!(hit(strip.chips[0].1), Some(BarPart::CloseTab(0)));
        assert_eq!(hit(strip.new_tab), Some(BarPart::NewTab));
        assert_eq!(hit(l.address), Some(BarPart::Address));
        // The find field lies over the strip while open.
        let (x, y) = centre(l.find);
        assert_eq!(bar_part_at(node, t.title_height, two, true, x, y), Some(BarPart::Find));
    }

    #[test]
    fn many_tabs_show_a_window_of_chips_around_the_shown_one() {
        let t = Theme::default();
        for active in [0, 7, 19] {
            let l = bar_layout(960.0, t.title_height, TabCount { count: 20, active });
            let strip = l.strip.expect("a strip");
            let shown = strip.first..strip.first + strip.chips.len();
            assert!(strip.chips.len() < 20 && shown.contains(&active), "{shown:?} for {active}");
            assert!(shown.end <= 20);
        }
        // A node too narrow for even one chip has no strip (the keys still switch tabs).
        assert_eq!(bar_layout(300.0, t.title_height, TabCount { count: 3, active: 0 }).strip, None);
    }

    #[test]
    fn chips_show_titles_cut_to_fit_and_the_strip_replaces_the_page_title() {
        let long = TabChip { title: "A very long page title that cannot fit in one chip".into(), active: false };
        let bar = BrowserBar {
            address: "http://127.0.0.1/".into(),
            tabs: vec![long, TabChip { title: String::new(), active: true }],
            ..Default::default()
        };
        let (_, labels, title) = draw(&bar);
        assert_eq!(title, None, "no page title beside the chips");
        let chips: Vec<&str> = labels.iter().map(|l| l.text.as_str()).filter(|t| !t.contains("127.0.0.1")).collect();
        assert!(chips.iter().any(|t| t.starts_with("A very") && t.ends_with('…')), "{chips:?}");
        assert!(chips.contains(&"New tab"), "an untitled tab reads New tab: {chips:?}");
        let many = BrowserBar { tabs: tabs(3, 0), ..bar.clone() };
        let hovered = BrowserBar { hover: Some(BarPart::Tab(1)), ..many.clone() };
        assert_eq!(draw(&hovered).0.len(), draw(&many).0.len(), "a hovered chip changes colour, not shape count");
        let hover_close = BrowserBar { hover: Some(BarPart::CloseTab(1)), ..many.clone() };
        assert_eq!(draw(&hover_close).0.len(), draw(&many).0.len() + 1, "a hovered close button is filled");
    }
}
