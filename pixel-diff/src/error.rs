//! What can go wrong reading, comparing and writing images.

use std::path::PathBuf;
use thiserror::Error;

/// Why bytes did not decode to an image.
#[derive(Debug, Error)]
pub enum DecodeError {
    /// The bytes do not start with the PNG signature.
    #[error("not a PNG file")]
    NotPng,
    /// A PNG signature, then something the decoder refused (bad chunk, bad CRC, cut short).
    #[error("corrupt or truncated PNG: {0}")]
    Corrupt(#[from] png::DecodingError),
    /// The decoder gave palette indices although it was told to expand them.
    #[error("corrupt or truncated PNG: palette left unexpanded by the decoder")]
    PaletteLeft,
    /// More pixels than this crate holds in memory.
    #[error("image too large: {width}x{height} (at most {max} pixels)")]
    TooLarge {
        /// Width from the header.
        width: u32,
        /// Height from the header.
        height: u32,
        /// The limit, [`crate::MAX_PIXELS`].
        max: u64,
    },
}

/// A failure of [`crate::compare_files`] and friends.
#[derive(Debug, Error)]
pub enum DiffError {
    /// The input file does not exist.
    #[error("{}: no such file", path.display())]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The input file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The input file is not a PNG, or a broken one.
    #[error("{}: {source}", path.display())]
    Decode {
        /// The path as given.
        path: PathBuf,
        /// What was wrong with it.
        source: DecodeError,
    },
    /// The two images differ in size, so no pixel comparison is meaningful.
    #[error("the images differ in size: the first is {}x{}, the second {}x{}", first.0, first.1, second.0, second.1)]
    SizeMismatch {
        /// Width and height of the first image.
        first: (u32, u32),
        /// Width and height of the second image.
        second: (u32, u32),
    },
    /// A pixel buffer whose length is not width × height.
    #[error("pixel buffer holds {actual} pixels, {width}x{height} needs {}", u64::from(*width) * u64::from(*height))]
    BufferSize {
        /// Width claimed.
        width: u32,
        /// Height claimed.
        height: u32,
        /// Pixels given.
        actual: usize,
    },
    /// A colour threshold outside 0..=1.
    #[error("threshold must be between 0 and 1, not {0}")]
    Threshold(f64),
    /// A diff ratio limit outside 0..=1.
    #[error("maximum diff ratio must be between 0 and 1, not {0}")]
    Ratio(f64),
    /// The diff image could not be encoded.
    #[error("cannot encode the diff image: {0}")]
    Encode(#[from] png::EncodingError),
    /// The diff image could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// Where it was to go.
        path: PathBuf,
        /// The file error (the target is left as it was).
        source: local_guard::files::FileError,
    },
}
