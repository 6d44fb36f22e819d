//! Visual diffs of two PNGs, the way the pixelmatch family (pixelmatch ≤ 7,
//! odiff) makes them: pixels blended over white, their YIQ colour distance
//! against a threshold (0..=1, default 0.1), optional anti-aliasing
//! detection so rendering noise on edges is not counted, a diff image
//! (changed pixels red, anti-aliasing yellow, over a faded grey copy of the
//! first image), and pass/fail [`Limits`].
//!
//! ```no_run
//! use pixel_diff::{compare_files, Limits, Options};
//! use std::path::Path;
//! let c = compare_files(Path::new("a.png"), Path::new("b.png"), &Options { diff_image: true, ..Options::default() })?;
//! if !c.within(&Limits::MaxDiffPixels(10)) {
//!     c.diff_image.as_ref().map(|img| img.write_png(Path::new("diff.png"))).transpose()?;
//! }
//! # Ok::<(), pixel_diff::DiffError>(())
//! ```
//!
//! Written here rather than taken from crates.io because none fits (checked
//! December 2026): `pixelmatch` 0.1 (2021) sits on `image` 0.23 and returns
//! `Box<dyn Error>`; `dify` 0.8 is a CLI whose library half returns
//! `anyhow` errors, decodes through the whole `image` crate and compares
//! on one thread; `image-compare` has SSIM and RMS, not the pixelmatch
//! method. The algorithm is small; what this crate adds is speed on
//! screenshots: the two PNGs decode in parallel, rows whose bytes are equal
//! are skipped with one `memcmp`, bands of rows run on all cores, and the
//! diff image is an 8-bit palette PNG (28 colours), a quarter of the bytes
//! of RGBA to compress.
//!
//! PNG decoding is the `png` crate the workspace already has: on a
//! 1920×1080 Chromium screenshot it measured 16–20 ms here, `png` 0.18
//! 15–25 ms and `zune-png` 0.5 17–18 ms (a shared 2-core machine, so
//! noisy), no clear winner to add a dependency for.
//!
//! pixelmatch 8 moved from YIQ to an OKLab HyAB distance; counts agree with
//! it on clear changes and differ at the threshold's edge (bench/diff
//! prints both).

mod antialias;
mod color;
mod compare;
mod diff_image;
mod error;
mod image;

pub use compare::{compare, Area, Comparison, Limits, Options};
pub use diff_image::DiffImage;
pub use error::{DecodeError, DiffError};
pub use image::{Image, Rgba, MAX_PIXELS};

use std::path::Path;

/// Decodes the PNGs at `first` and `second` (in parallel) and compares them.
pub fn compare_files(first: &Path, second: &Path, options: &Options) -> Result<Comparison, DiffError> {
    let (a, b) = std::thread::scope(|scope| {
        let b = scope.spawn(|| Image::open(second));
        let a = Image::open(first);
        // A panic while decoding is a bug in the decoder; pass it on as it was.
        (a, b.join().unwrap_or_else(|payload| std::panic::resume_unwind(payload)))
    });
    compare(&a?, &b?, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::tests::encode;

    #[test]
    fn compare_files_reads_both_and_names_the_bad_one() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, bad) = (dir.path().join("a.png"), dir.path().join("b.png"), dir.path().join("bad.png"));
        let white = vec![[255u8; 4]; 4];
        let mut dot = white.clone();
        dot[3] = [0, 0, 0, 255];
        std::fs::write(&a, encode(2, 2, &white, png::ColorType::Rgb)).unwrap();
        std::fs::write(&b, encode(2, 2, &dot, png::ColorType::Rgba)).unwrap();
        std::fs::write(&bad, b"<html>").unwrap();
        let c = compare_files(&a, &b, &Options::default()).unwrap();
        assert_eq!((c.width, c.height, c.diff_pixels), (2, 2, 1));
        let err = compare_files(&a, &bad, &Options::default()).unwrap_err();
        assert!(matches!(&err, DiffError::Decode { path, source: DecodeError::NotPng } if path == &bad));
        assert!(err.to_string().ends_with("bad.png: not a PNG file"), "{err}");
    }
}
