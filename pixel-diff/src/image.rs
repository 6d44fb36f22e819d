//! Decoded images: 8-bit RGBA pixels in rows, from PNG files or memory.

use crate::error::{DecodeError, DiffError};
use std::path::Path;

/// The most pixels one image may have (a 1920-wide full-page shot 52,000 rows
/// long): two decoded images then take at most 800 MB, which bounds what a
/// hostile header can make this allocate.
pub const MAX_PIXELS: u64 = 100_000_000;

/// One RGBA pixel, 8 bits a channel, alpha not premultiplied.
pub type Rgba = [u8; 4];

/// A decoded image: `width × height` RGBA pixels, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    width: u32,
    height: u32,
    pixels: Vec<Rgba>,
}

impl Image {
    /// An image from pixels in memory; errors when `pixels` is not `width × height` long.
    pub fn from_rgba(width: u32, height: u32, pixels: Vec<Rgba>) -> Result<Self, DiffError> {
        if u64::try_from(pixels.len()).ok() != Some(u64::from(width) * u64::from(height)) {
            return Err(DiffError::BufferSize { width, height, actual: pixels.len() });
        }
        Ok(Image { width, height, pixels })
    }

    /// Reads and decodes the PNG file at `path`.
    pub fn open(path: &Path) -> Result<Self, DiffError> {
        let bytes = std::fs::read(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => DiffError::NotFound { path: path.to_path_buf() },
            _ => DiffError::Read { path: path.to_path_buf(), source },
        })?;
        Image::decode_png(&bytes).map_err(|source| DiffError::Decode { path: path.to_path_buf(), source })
    }

    /// Decodes a PNG of any colour type and bit depth (palette, grey and
    /// 16-bit ones are expanded to 8-bit RGBA; interlaced ones deinterlaced).
    pub fn decode_png(bytes: &[u8]) -> Result<Self, DecodeError> {
        const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
        if !bytes.starts_with(SIGNATURE) {
            return Err(DecodeError::NotPng);
        }
        let mut decoder = png::Decoder::new_with_limits(
            std::io::Cursor::new(bytes),
            // The pixel limit below is the real bound; this only keeps png's own default (64 MiB) from refusing first.
            png::Limits { bytes: usize::try_from(MAX_PIXELS * 8).unwrap_or(usize::MAX) },
        );
        // No ALPHA transformation: png expanding RGB to RGBA itself measured ~25% slower than
        // decoding RGB and widening it below (1920×1080 screenshot: 6.6 vs 8.5 ms at best).
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let header = decoder.read_header_info()?;
        let (width, height) = (header.width, header.height);
        if u64::from(width) * u64::from(height) > MAX_PIXELS {
            return Err(DecodeError::TooLarge { width, height, max: MAX_PIXELS });
        }
        let mut reader = decoder.read_info()?;
        let count = usize::try_from(u64::from(width) * u64::from(height)).map_err(|_| DecodeError::TooLarge {
            width,
            height,
            max: MAX_PIXELS,
        })?;
        let (color, _) = reader.output_color_type();
        let pixels = match color {
            png::ColorType::Rgba => {
                // Decoded straight into the pixel buffer: no second copy for this case.
                let mut pixels = vec![[0u8; 4]; count];
                reader.next_frame(pixels.as_flattened_mut())?;
                pixels
            }
            png::ColorType::Rgb => {
                samples(&mut reader, count * 3)?.chunks_exact(3).map(|p| [p[0], p[1], p[2], 255]).collect()
            }
            png::ColorType::GrayscaleAlpha => {
                samples(&mut reader, count * 2)?.chunks_exact(2).map(|p| [p[0], p[0], p[0], p[1]]).collect()
            }
            png::ColorType::Grayscale => samples(&mut reader, count)?.iter().map(|&v| [v, v, v, 255]).collect(),
            png::ColorType::Indexed => {
                // EXPAND turns palettes into RGB(A); an indexed output is a decoder change.
                return Err(DecodeError::PaletteLeft);
            }
        };
        Ok(Image { width, height, pixels })
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// `(width, height)`.
    pub fn dimensions(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// All pixels, row after row.
    pub fn pixels(&self) -> &[Rgba] {
        &self.pixels
    }

    /// The pixel at `(x, y)`, or `None` outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<Rgba> {
        if x >= self.width || y >= self.height {
            return None;
        }
        self.pixels.get(y as usize * self.width as usize + x as usize).copied()
    }
}

/// The frame's `len` samples, for the colour types widened to RGBA afterwards.
fn samples<R: std::io::Read>(reader: &mut png::Reader<R>, len: usize) -> Result<Vec<u8>, DecodeError> {
    let mut buf = vec![0u8; len];
    reader.next_frame(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Encodes `pixels` (RGBA rows) as a PNG of the given colour type (RGBA input reduced to it).
    pub(crate) fn encode(width: u32, height: u32, pixels: &[Rgba], color: png::ColorType) -> Vec<u8> {
        let data: Vec<u8> = match color {
            png::ColorType::Rgba => pixels.as_flattened().to_vec(),
            png::ColorType::Rgb => pixels.iter().flat_map(|p| [p[0], p[1], p[2]]).collect(),
            png::ColorType::Grayscale => pixels.iter().map(|p| p[0]).collect(),
            png::ColorType::GrayscaleAlpha => pixels.iter().flat_map(|p| [p[0], p[3]]).collect(),
            png::ColorType::Indexed => unimplemented!("not used by the tests"),
        };
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().expect("header");
        w.write_image_data(&data).expect("data");
        w.finish().expect("finish");
        out
    }

    fn sample() -> Vec<Rgba> {
        vec![[10, 20, 30, 255], [40, 50, 60, 128], [70, 80, 90, 0], [200, 210, 220, 255]]
    }

    #[test]
    fn rgba_png_round_trips() {
        let img = Image::decode_png(&encode(2, 2, &sample(), png::ColorType::Rgba)).unwrap();
        assert_eq!(img.dimensions(), (2, 2));
        assert_eq!(img.pixels(), &sample()[..]);
        assert_eq!(img.pixel(1, 1), Some([200, 210, 220, 255]));
        assert_eq!(img.pixel(2, 0), None);
    }

    #[test]
    fn rgb_png_gets_opaque_alpha() {
        let img = Image::decode_png(&encode(2, 2, &sample(), png::ColorType::Rgb)).unwrap();
        assert_eq!(img.pixel(0, 0), Some([10, 20, 30, 255]));
        assert_eq!(img.pixel(0, 1), Some([70, 80, 90, 255]));
    }

    #[test]
    fn grey_pngs_expand_to_rgba() {
        let img = Image::decode_png(&encode(2, 2, &sample(), png::ColorType::GrayscaleAlpha)).unwrap();
        assert_eq!(img.pixel(1, 0), Some([40, 40, 40, 128]));
        let img = Image::decode_png(&encode(2, 2, &sample(), png::ColorType::Grayscale)).unwrap();
        assert_eq!(img.pixel(1, 0), Some([40, 40, 40, 255]));
    }

    #[test]
    fn palette_png_expands_with_its_transparency() {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, 2, 1);
        enc.set_color(png::ColorType::Indexed);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_palette(vec![255, 0, 0, 0, 0, 255]);
        enc.set_trns(vec![255, 64]);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&[0, 1]).unwrap();
        w.finish().unwrap();
        let img = Image::decode_png(&out).unwrap();
        assert_eq!(img.pixels(), &[[255, 0, 0, 255], [0, 0, 255, 64]]);
    }

    #[test]
    fn sixteen_bit_png_keeps_the_high_bytes() {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, 1, 1);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Sixteen);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&[0x12, 0x34, 0xab, 0xcd, 0xff, 0x00]).unwrap();
        w.finish().unwrap();
        assert_eq!(Image::decode_png(&out).unwrap().pixels(), &[[0x12, 0xab, 0xff, 255]]);
    }

    #[test]
    fn not_a_png_is_named_as_such() {
        assert!(matches!(Image::decode_png(b"GIF89a...."), Err(DecodeError::NotPng)));
        assert!(matches!(Image::decode_png(b""), Err(DecodeError::NotPng)));
    }

    #[test]
    fn truncated_and_corrupt_pngs_are_refused() {
        let png = encode(2, 2, &sample(), png::ColorType::Rgba);
        for cut in [9, 20, png.len() / 2, png.len() - 13] {
            let err = Image::decode_png(&png[..cut]).unwrap_err();
            assert!(matches!(err, DecodeError::Corrupt(_)), "cut at {cut}: {err:?}");
        }
        let mut flipped = png.clone();
        let mid = png.len() / 2;
        flipped[mid] ^= 0xff;
        assert!(matches!(Image::decode_png(&flipped), Err(DecodeError::Corrupt(_))));
    }

    #[test]
    fn a_corrupt_png_keeps_the_decoder_s_error_as_its_source() {
        let png = encode(2, 2, &sample(), png::ColorType::Rgba);
        let err = Image::decode_png(&png[..20]).unwrap_err();
        let source = std::error::Error::source(&err).expect("a source");
        assert!(source.downcast_ref::<png::DecodingError>().is_some(), "{source:?}");
        assert_eq!(err.to_string(), format!("corrupt or truncated PNG: {source}"), "the message is as before");
        assert_eq!(
            DecodeError::PaletteLeft.to_string(),
            "corrupt or truncated PNG: palette left unexpanded by the decoder"
        );
    }

    #[test]
    fn huge_header_is_refused_before_allocating() {
        let mut png = encode(1, 1, &sample()[..1], png::ColorType::Rgba);
        // IHDR width and height sit at bytes 16..24; the CRC after them is fixed up to match.
        png[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        png[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        let crc = crc32fast::hash(&png[12..29]);
        png[29..33].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(Image::decode_png(&png), Err(DecodeError::TooLarge { width: 100_000, .. })));
    }

    #[test]
    fn missing_file_and_buffer_size_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.png");
        assert!(matches!(Image::open(&missing), Err(DiffError::NotFound { path }) if path == missing));
        assert!(matches!(Image::from_rgba(2, 2, vec![[0; 4]; 3]), Err(DiffError::BufferSize { actual: 3, .. })));
    }
}
