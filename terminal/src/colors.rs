//! Colour theme and resolution of terminal colours (named, 256-indexed,
//! truecolor) to concrete RGB, including dim and bold-as-bright rules.

use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::color::Colors;
use alacritty_terminal::vte::ansi::{self, Color, NamedColor};

/// A concrete 24-bit colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rgb {
    /// Red channel.
    pub r: u8,
    /// Green channel.
    pub g: u8,
    /// Blue channel.
    pub b: u8,
}

impl Rgb {
    /// Builds a colour from its channels.
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b }
    }

    /// Builds a colour from `0xRRGGBB`.
    pub const fn from_hex(hex: u32) -> Self {
        Self::new((hex >> 16) as u8, (hex >> 8) as u8, hex as u8)
    }

    /// This colour scaled towards black by `factor` (0..=1), used for dim text.
    pub fn scaled(self, factor: f32) -> Self {
        let f = |c: u8| (f32::from(c) * factor).round().clamp(0.0, 255.0) as u8;
        Self::new(f(self.r), f(self.g), f(self.b))
    }
}

impl From<ansi::Rgb> for Rgb {
    fn from(c: ansi::Rgb) -> Self {
        Self::new(c.r, c.g, c.b)
    }
}

impl From<Rgb> for ansi::Rgb {
    fn from(c: Rgb) -> Self {
        ansi::Rgb { r: c.r, g: c.g, b: c.b }
    }
}

/// How much dim (SGR 2) text is darkened, as in alacritty.
pub const DIM_FACTOR: f32 = 0.66;

/// A colour theme: the 16 ANSI colours plus default foreground, background and cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Colours 0..16 (normal then bright).
    pub ansi: [Rgb; 16],
    /// Default foreground.
    pub foreground: Rgb,
    /// Default background.
    pub background: Rgb,
    /// Cursor colour.
    pub cursor: Rgb,
    /// Whether bold text in colours 0..8 is drawn with the bright variant (xterm default).
    pub bold_is_bright: bool,
}

impl Default for Theme {
    /// xterm's default palette on a black background.
    fn default() -> Self {
        let hex = [
            0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000,
            0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
        ];
        Self {
            ansi: hex.map(Rgb::from_hex),
            foreground: Rgb::from_hex(0xe5e5e5),
            background: Rgb::from_hex(0x000000),
            cursor: Rgb::from_hex(0xe5e5e5),
            bold_is_bright: true,
        }
    }
}

/// The full 269-entry palette (alacritty's index layout) for one frame:
/// theme defaults overridden by whatever OSC 4/10/11/12 set in the terminal.
#[derive(Debug, Clone)]
pub(crate) struct Palette {
    colors: Vec<Rgb>,
    bold_is_bright: bool,
}

impl Palette {
    /// Resolves the palette from a theme and the terminal's OSC overrides.
    pub(crate) fn new(theme: &Theme, overrides: &Colors) -> Self {
        let mut colors = vec![Rgb::default(); alacritty_terminal::term::color::COUNT];
        colors[..16].copy_from_slice(&theme.ansi);
        for (i, slot) in colors.iter_mut().enumerate().take(256).skip(16) {
            *slot = xterm_256(i as u8);
        }
        colors[NamedColor::Foreground as usize] = theme.foreground;
        colors[NamedColor::Background as usize] = theme.background;
        colors[NamedColor::Cursor as usize] = theme.cursor;
        colors[NamedColor::BrightForeground as usize] = theme.foreground;
        for (i, slot) in colors.iter_mut().enumerate() {
            if let Some(over) = overrides[i] {
                *slot = over.into();
            }
        }
        // Dim variants follow the (possibly overridden) normal colours unless set explicitly.
        for i in 0..8 {
            let dim = NamedColor::DimBlack as usize + i;
            if overrides[dim].is_none() {
                colors[dim] = colors[i].scaled(DIM_FACTOR);
            }
        }
        let dim_fg = NamedColor::DimForeground as usize;
        if overrides[dim_fg].is_none() {
            colors[dim_fg] = colors[NamedColor::Foreground as usize].scaled(DIM_FACTOR);
        }
        Self { colors, bold_is_bright: theme.bold_is_bright }
    }

    /// Colour at a raw alacritty palette index.
    pub(crate) fn at(&self, index: usize) -> Rgb {
        self.colors.get(index).copied().unwrap_or_default()
    }

    /// Default foreground.
    pub(crate) fn foreground(&self) -> Rgb {
        self.at(NamedColor::Foreground as usize)
    }

    /// Default background.
    pub(crate) fn background(&self) -> Rgb {
        self.at(NamedColor::Background as usize)
    }

    /// Cursor colour.
    pub(crate) fn cursor(&self) -> Rgb {
        self.at(NamedColor::Cursor as usize)
    }

    /// Resolves a cell's foreground, applying bold-bright and dim like alacritty.
    pub(crate) fn fg(&self, color: Color, flags: Flags) -> Rgb {
        let dim_bold = flags & Flags::DIM_BOLD;
        match color {
            Color::Spec(rgb) => {
                if flags.contains(Flags::DIM) {
                    Rgb::from(rgb).scaled(DIM_FACTOR)
                } else {
                    rgb.into()
                }
            }
            Color::Named(named) => {
                let index = if dim_bold == Flags::DIM_BOLD && named == NamedColor::Foreground {
                    NamedColor::DimForeground
                } else if dim_bold == Flags::BOLD && self.bold_is_bright {
                    named.to_bright()
                } else if dim_bold == Flags::DIM || (dim_bold == Flags::DIM_BOLD && !self.bold_is_bright) {
                    named.to_dim()
                } else {
                    named
                };
                self.at(index as usize)
            }
            Color::Indexed(idx) => {
                let index = match (self.bold_is_bright, dim_bold, idx) {
                    (true, Flags::BOLD, 0..=7) => idx as usize + 8,
                    (_, Flags::DIM, 8..=15) => NamedColor::DimBlack as usize + idx as usize - 8,
                    (_, Flags::DIM, 0..=7) => NamedColor::DimBlack as usize + idx as usize,
                    (_, Flags::DIM, _) => return self.at(idx as usize).scaled(DIM_FACTOR),
                    _ => idx as usize,
                };
                self.at(index)
            }
        }
    }

    /// Resolves a cell's background.
    pub(crate) fn bg(&self, color: Color) -> Rgb {
        match color {
            Color::Spec(rgb) => rgb.into(),
            Color::Named(named) => self.at(named as usize),
            Color::Indexed(idx) => self.at(idx as usize),
        }
    }
}

/// The xterm 256-colour table entry for indices 16..=255 (6x6x6 cube, then greys).
pub fn xterm_256(index: u8) -> Rgb {
    match index {
        16..=231 => {
            let i = index - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            Rgb::new(level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        232..=255 => {
            let g = 8 + (index - 232) * 10;
            Rgb::new(g, g, g)
        }
        _ => Theme::default().ansi[index as usize],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn palette() -> Palette {
        Palette::new(&Theme::default(), &Colors::default())
    }

    #[test]
    fn cube_and_greys_match_xterm() {
        assert_eq!(xterm_256(16), Rgb::new(0, 0, 0));
        assert_eq!(xterm_256(196), Rgb::new(255, 0, 0));
        assert_eq!(xterm_256(21), Rgb::new(0, 0, 255));
        assert_eq!(xterm_256(110), Rgb::new(135, 175, 215));
        assert_eq!(xterm_256(232), Rgb::new(8, 8, 8));
        assert_eq!(xterm_256(255), Rgb::new(238, 238, 238));
    }

    #[test]
    fn bold_uses_bright_and_dim_darkens() {
        let p = palette();
        let red = Color::Named(NamedColor::Red);
        assert_eq!(p.fg(red, Flags::empty()), Rgb::from_hex(0xcd0000));
        assert_eq!(p.fg(red, Flags::BOLD), Rgb::from_hex(0xff0000));
        assert_eq!(p.fg(Color::Indexed(1), Flags::BOLD), Rgb::from_hex(0xff0000));
        assert_eq!(p.fg(red, Flags::DIM), Rgb::from_hex(0xcd0000).scaled(DIM_FACTOR));
        let spec = Color::Spec(ansi::Rgb { r: 100, g: 200, b: 50 });
        assert_eq!(p.fg(spec, Flags::BOLD), Rgb::new(100, 200, 50));
        assert_eq!(p.fg(spec, Flags::DIM), Rgb::new(66, 132, 33));
        assert_eq!(p.fg(Color::Indexed(196), Flags::BOLD), Rgb::new(255, 0, 0));
    }

    #[test]
    fn osc_overrides_win_over_theme() {
        let mut colors = Colors::default();
        colors[NamedColor::Background] = Some(ansi::Rgb { r: 1, g: 2, b: 3 });
        colors[1] = Some(ansi::Rgb { r: 9, g: 9, b: 9 });
        let p = Palette::new(&Theme::default(), &colors);
        assert_eq!(p.background(), Rgb::new(1, 2, 3));
        assert_eq!(p.fg(Color::Indexed(1), Flags::empty()), Rgb::new(9, 9, 9));
        assert_eq!(p.fg(Color::Indexed(1), Flags::DIM), Rgb::new(9, 9, 9).scaled(DIM_FACTOR));
    }
}
