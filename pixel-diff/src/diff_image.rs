//! The diff image a person reads at a glance: changed pixels red,
//! anti-aliasing ones yellow, over a faded grey copy of the first image.
//!
//! The faded copy only takes grey levels 230..=255, so with red and yellow
//! the image needs 28 colours and is kept (and written) as an 8-bit palette
//! PNG: a quarter of the bytes of RGBA to fill, filter and compress.

use crate::color::luma;
use crate::error::DiffError;
use crate::image::Rgba;
use std::path::Path;

/// How much of the first image shows through the white in unchanged pixels (pixelmatch's default `alpha`).
const FADE: f64 = 0.1;
/// The darkest grey a faded pixel can take: black at full opacity, `255 × (1 − FADE)` rounded.
const GREY_MIN: u8 = 230;
/// Palette index of a changed pixel.
pub(crate) const CHANGED: u8 = 0;
/// Palette index of an anti-aliasing pixel (counted apart, not as changed).
pub(crate) const ANTIALIASED: u8 = 1;
/// Palette index of grey `GREY_MIN`; grey `g` is at `FIRST_GREY + g − GREY_MIN`.
const FIRST_GREY: u8 = 2;
const RED: Rgba = [255, 0, 0, 255];
const YELLOW: Rgba = [255, 255, 0, 255];

/// The palette index showing `p` faded: its luma blended 90% towards white (by its alpha too).
#[inline]
pub(crate) fn faded(p: Rgba) -> u8 {
    let [r, g, b, a] = p.map(f64::from);
    let grey = 255.0 + (luma(r, g, b) - 255.0) * FADE * a / 255.0;
    // Rounds (grey is positive) without a libm call; `as` saturates, and the
    // max only guards the palette against a float edge case.
    FIRST_GREY + (((grey + 0.5) as u8).max(GREY_MIN) - GREY_MIN)
}

/// A rendered diff, kept as palette indices until written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffImage {
    width: u32,
    height: u32,
    indices: Vec<u8>,
}

impl DiffImage {
    /// Wraps palette indices made by the comparison (`width × height` of them).
    pub(crate) fn new(width: u32, height: u32, indices: Vec<u8>) -> Self {
        debug_assert_eq!(indices.len() as u64, u64::from(width) * u64::from(height));
        DiffImage { width, height, indices }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The colour at `(x, y)`, or `None` outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<Rgba> {
        if x >= self.width || y >= self.height {
            return None;
        }
        self.indices.get(y as usize * self.width as usize + x as usize).map(|&i| color_of(i))
    }

    /// The whole image as RGBA pixels, row after row.
    pub fn to_rgba(&self) -> Vec<Rgba> {
        self.indices.iter().map(|&i| color_of(i)).collect()
    }

    /// The image as PNG bytes (8-bit palette, fast compression).
    pub fn encode_png(&self) -> Result<Vec<u8>, DiffError> {
        let mut out = Vec::with_capacity(self.indices.len() / 16);
        let mut encoder = png::Encoder::new(&mut out, self.width, self.height);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_palette(palette());
        // png's fast level (fdeflate) is tuned for filtered rows, mostly zeros: on a 1920×1080
        // screenshot's diff, Paeth took 1.4 ms for 99 KB, no filter fell back to 2 MB stored, and
        // the default level took 10–33 ms for 18 KB.
        encoder.set_filter(png::FilterType::Paeth);
        encoder.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&self.indices)?;
        writer.finish()?;
        Ok(out)
    }

    /// Writes the image as a PNG to `path`, atomically (temp file, then
    /// rename), mode 0600 like the screenshots it is made from.
    pub fn write_png(&self, path: &Path) -> Result<(), DiffError> {
        let bytes = self.encode_png()?;
        local_guard::files::write_atomic(path, &bytes, local_guard::files::FILE_MODE)
            .map_err(|source| DiffError::Write { path: path.to_path_buf(), source })
    }
}

fn color_of(index: u8) -> Rgba {
    match index {
        CHANGED => RED,
        ANTIALIASED => YELLOW,
        i => {
            let g = GREY_MIN.saturating_add(i - FIRST_GREY);
            [g, g, g, 255]
        }
    }
}

/// RGB triples of palette entries 0..FIRST_GREY + (256 − GREY_MIN).
fn palette() -> Vec<u8> {
    let count = FIRST_GREY as usize + (256 - GREY_MIN as usize);
    (0..count).flat_map(|i| color_of(i as u8)[..3].to_vec()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::Image;

    #[test]
    fn faded_greys_stay_in_the_palette() {
        assert_eq!(color_of(faded([0, 0, 0, 255])), [230, 230, 230, 255]);
        assert_eq!(color_of(faded([255, 255, 255, 255])), [255, 255, 255, 255]);
        assert_eq!(color_of(faded([0, 0, 0, 0])), [255, 255, 255, 255]);
        for v in [0u8, 1, 17, 128, 254] {
            let i = faded([v, 255 - v, v / 2, v]);
            assert!(usize::from(i) < palette().len() / 3, "{v} -> {i}");
        }
    }

    #[test]
    fn png_decodes_back_to_the_same_colours() {
        let indices = vec![CHANGED, ANTIALIASED, faded([0, 0, 0, 255]), faded([255, 255, 255, 255])];
        let img = DiffImage::new(2, 2, indices);
        let back = Image::decode_png(&img.encode_png().unwrap()).unwrap();
        assert_eq!(back.pixels(), &img.to_rgba()[..]);
        assert_eq!(back.pixel(0, 0), Some(RED));
        assert_eq!(back.pixel(1, 0), Some(YELLOW));
        assert_eq!(img.pixel(0, 1), Some([230, 230, 230, 255]));
        assert_eq!(img.pixel(0, 2), None);
    }

    #[test]
    fn write_replaces_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diff.png");
        std::fs::write(&path, b"old").unwrap();
        DiffImage::new(1, 1, vec![CHANGED]).write_png(&path).unwrap();
        let back = Image::open(&path).unwrap();
        assert_eq!(back.pixels(), &[RED]);
        let missing_dir = dir.path().join("no/such/dir/diff.png");
        assert!(matches!(DiffImage::new(1, 1, vec![CHANGED]).write_png(&missing_dir), Err(DiffError::Write { .. })));
    }
}
