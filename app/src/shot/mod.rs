//! `termsprawl shot`: pages (or saved canvases) rendered off-screen by CEF and
//! saved as PNGs, one or a whole manifest of them in one engine start.
//!
//! Built for CI: no X server, a throw-away browser profile, a one-line reason
//! and a non-zero exit on any failure, and nothing written unless the whole
//! capture succeeded (the PNG is written to a temp file and renamed).
//! `prepare` makes the pixels deterministic, `fonts` fixes the font set,
//! `batch` runs many shots at once, `manifest` reads the list of them.
//!
//! ```text
//! batch → compare, error, fonts, page, png_file, request
//! compare → png_file
//! manifest → compare, prepare, request
//! page → error, prepare, request
//! report → batch, compare, request
//! request → compare, prepare
//! leaves: error, fonts, png_file, prepare
//! ```

pub mod batch;
pub mod compare;
mod error;
pub mod fonts;
pub mod manifest;
mod page;
mod png_file;
pub mod prepare;
pub mod report;
mod request;

pub use error::ShotError;
pub use request::{ShotRequest, Size, Target, WaitFor};

use std::path::PathBuf;

/// Captures one shot in an engine of its own (and compares it with its
/// baseline, or rewrites the baseline when `update_baselines`).
pub fn run(
    req: &ShotRequest,
    update_baselines: bool,
    chromium_log: Option<PathBuf>,
) -> Result<batch::Outcome, ShotError> {
    let options = batch::BatchOptions { jobs: 1, progress: false, update_baselines, chromium_log };
    let mut outcomes = batch::run(std::slice::from_ref(req), &options)?;
    outcomes.pop().ok_or_else(|| ShotError::DevTools("the shot produced no result".into()))
}
