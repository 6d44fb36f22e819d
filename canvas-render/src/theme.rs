//! Colours and dimensions of the canvas chrome (the dark theme people look at all day).
//! Dimensions are in world units; they scale with the camera like the nodes themselves.

use crate::color::Color;

/// Visual constants of the canvas chrome.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Default canvas background.
    pub canvas: Color,
    /// Dot colour of the background grid.
    pub grid_dot: Color,
    /// World distance between grid dots.
    pub grid_spacing: f32,
    /// Body fill of ordinary nodes.
    pub node_body: Color,
    /// Title bar fill of ordinary nodes.
    pub title_bar: Color,
    /// Hairline border around nodes.
    pub node_border: Color,
    /// Title text colour.
    pub title_text: Color,
    /// Body text colour on dark bodies.
    pub body_text: Color,
    /// Text colour on sticky notes.
    pub sticky_text: Color,
    /// Focus accent (border + glow).
    pub focus: Color,
    /// Selection ring.
    pub selection: Color,
    /// Drop shadow colour.
    pub shadow: Color,
    /// Terminal body background (padding around the cell grid).
    pub terminal_bg: Color,
    /// Terminal cursor colour.
    pub cursor: Color,
    /// Terminal selection overlay (drawn over cell backgrounds, under glyphs).
    pub terminal_selection: Color,
    /// Context links between nodes.
    pub link: Color,
    /// Width of a context link on screen, in pixels (at every zoom).
    pub link_width: f32,
    /// Title bar height.
    pub title_height: f32,
    /// Corner radius of node frames.
    pub corner_radius: f32,
    /// Padding between the body edge and terminal cells or body text.
    pub body_padding: f32,
    /// Title font size.
    pub title_font_size: f32,
    /// Badge font size.
    pub badge_font_size: f32,
    /// Sticky / artifact body font size.
    pub body_font_size: f32,
    /// Space around a node kept in its cached texture for shadow and rings.
    pub node_margin: f32,
}

impl Default for Theme {
    fn default() -> Self {
        Self {
            canvas: Color::hex(0x14161b),
            grid_dot: Color::hex(0x2c313b),
            grid_spacing: 24.0,
            node_body: Color::hex(0x1c1f26),
            title_bar: Color::hex(0x252932),
            node_border: Color::hex(0x343a46),
            title_text: Color::hex(0xdfe3ea),
            body_text: Color::hex(0xc9ced8),
            sticky_text: Color::hex(0x2a2614),
            focus: Color::hex(0x5b9cff),
            selection: Color::hex(0xf0b44c),
            shadow: Color::rgba(0, 0, 0, 150),
            terminal_bg: Color::hex(0x101216),
            cursor: Color::hex(0xe8e8e8),
            terminal_selection: Color::rgba(91, 156, 255, 90),
            link: Color::hex(0x7f8cff),
            link_width: 2.0,
            title_height: 30.0,
            corner_radius: 9.0,
            body_padding: 8.0,
            title_font_size: 13.0,
            badge_font_size: 11.0,
            body_font_size: 14.0,
            node_margin: 20.0,
        }
    }
}
