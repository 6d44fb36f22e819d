//! [`Color`], the one colour type of the crate: what the scene, the theme
//! and every drawing pass speak. It imports nothing of the crate, so the
//! scene can name the views drawn from it without a circle.

/// An sRGB colour with straight (non-premultiplied) alpha.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Color {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Alpha (255 = opaque).
    pub a: u8,
}

impl Color {
    /// An opaque colour from its channels.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b, a: 255 }
    }

    /// A colour from its channels and alpha.
    pub const fn rgba(r: u8, g: u8, b: u8, a: u8) -> Self {
        Self { r, g, b, a }
    }

    /// An opaque colour from `0xRRGGBB`.
    pub const fn hex(v: u32) -> Self {
        Self::rgb((v >> 16) as u8, (v >> 8) as u8, v as u8)
    }

    /// The same colour with another alpha.
    pub const fn with_alpha(self, a: u8) -> Self {
        Self { a, ..self }
    }

    /// Linear mix towards `other` by `t` in 0..=1 (in sRGB space, like the rest of the UI).
    pub fn mix(self, other: Color, t: f32) -> Color {
        let t = t.clamp(0.0, 1.0);
        let m = |a: u8, b: u8| (a as f32 + (b as f32 - a as f32) * t).round() as u8;
        Color::rgba(m(self.r, other.r), m(self.g, other.g), m(self.b, other.b), m(self.a, other.a))
    }

    /// Channels as floats in 0..=1, straight alpha.
    pub fn to_f32(self) -> [f32; 4] {
        [self.r as f32 / 255.0, self.g as f32 / 255.0, self.b as f32 / 255.0, self.a as f32 / 255.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_helpers() {
        assert_eq!(Color::hex(0x102030), Color::rgb(0x10, 0x20, 0x30));
        assert_eq!(Color::rgb(0, 0, 0).mix(Color::rgb(200, 100, 50), 0.5), Color::rgb(100, 50, 25));
        assert_eq!(Color::rgb(1, 2, 3).with_alpha(7).a, 7);
        assert_eq!(Color::rgba(255, 0, 0, 51).to_f32(), [1.0, 0.0, 0.0, 0.2]);
    }
}
