//! A shot against its committed baseline PNG (`--compare`, a manifest entry's
//! `compare`), through the `pixel-diff` crate; or, with `--update-baselines`,
//! the shot written over the baseline instead.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// How a shot is compared with its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CompareLimits {
    /// Per-pixel colour threshold (0..=1; None: pixel-diff's default, 0.1).
    pub threshold: Option<f64>,
    /// Most differing pixels that still pass.
    pub max_diff_pixels: Option<u64>,
    /// Largest share of differing pixels (0..=1) that still passes.
    pub max_diff_ratio: Option<f64>,
    /// Leave anti-aliased pixels out of the count.
    pub ignore_antialiasing: Option<bool>,
}

/// A shot's baseline and how to compare with it.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareSpec {
    /// The baseline PNG.
    pub baseline: PathBuf,
    /// Limits.
    pub limits: CompareLimits,
}

/// What the comparison found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareStatus {
    /// Within the limits.
    Passed,
    /// Different beyond the limits.
    Failed,
    /// The baseline was (re)written from the shot.
    Updated,
    /// No comparison could be made (missing or unreadable baseline, or one
    /// of another size than the shot).
    Error,
}

/// The comparison's part of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompareReport {
    /// The baseline PNG.
    pub baseline: PathBuf,
    /// Outcome.
    pub status: CompareStatus,
    /// Pixels beyond the threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_pixels: Option<u64>,
    /// `diff_pixels` over all pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_ratio: Option<f64>,
    /// The rectangle holding every changed pixel, `WxH+X+Y`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_area: Option<String>,
    /// The diff image written beside the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_image: Option<PathBuf>,
    /// What went wrong (a failure's or an error's one-line reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl CompareReport {
    fn new(baseline: &Path, status: CompareStatus, message: Option<String>) -> Self {
        Self {
            baseline: baseline.to_path_buf(),
            status,
            diff_pixels: None,
            diff_ratio: None,
            changed_area: None,
            diff_image: None,
            message,
        }
    }

    /// Whether the entry still counts as ok.
    pub fn ok(&self) -> bool {
        matches!(self.status, CompareStatus::Passed | CompareStatus::Updated)
    }
}

/// Where the diff image of `output` goes: `shots/home.png` → `shots/home.diff.png`.
pub fn diff_image_path(output: &Path) -> PathBuf {
    let stem = output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    output.with_file_name(format!("{stem}.diff.png"))
}

/// Compares the shot `png` (already written to `output`) with `spec`'s
/// baseline, or rewrites the baseline when `update`. A failed comparison
/// leaves its diff image beside the output; a passing one removes a stale one.
pub fn check(png: &[u8], output: &Path, spec: &CompareSpec, update: bool) -> CompareReport {
    let diff_path = diff_image_path(output);
    let stale = || {
        if let Err(e) = std::fs::remove_file(&diff_path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %diff_path.display(), error = %e, "stale diff image not removed");
            }
        }
    };
    if update {
        let written = spec
            .baseline
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| super::png_file::write_atomically(&spec.baseline, png));
        return match written {
            Ok(()) => {
                stale();
                CompareReport::new(&spec.baseline, CompareStatus::Updated, None)
            }
            Err(e) => CompareReport::new(
                &spec.baseline,
                CompareStatus::Error,
                Some(format!("cannot write baseline {}: {e}", spec.baseline.display())),
            ),
        };
    }
    let error = |m: String| CompareReport::new(&spec.baseline, CompareStatus::Error, Some(m));
    let baseline = match pixel_diff::Image::open(&spec.baseline) {
        Ok(img) => img,
        Err(pixel_diff::DiffError::NotFound { path }) => {
            return error(format!("baseline {} does not exist (--update-baselines writes it)", path.display()))
        }
        Err(e) => return error(format!("baseline {e}")),
    };
    let shot = match pixel_diff::Image::decode_png(png) {
        Ok(img) => img,
        Err(e) => return error(format!("the shot is not a readable PNG: {e}")),
    };
    let l = spec.limits;
    let options = pixel_diff::Options {
        threshold: l.threshold.unwrap_or(pixel_diff::Options::default().threshold),
        ignore_antialiasing: l.ignore_antialiasing.unwrap_or(false),
        diff_image: true,
    };
    let c = match pixel_diff::compare(&baseline, &shot, &options) {
        Ok(c) => c,
        // As `termsprawl diff` has it: sizes that differ are no comparison (an
        // error, exit 2), not a difference.
        Err(e @ pixel_diff::DiffError::SizeMismatch { .. }) => {
            stale();
            return error(format!("{e} (baseline first)"));
        }
        Err(e) => return error(e.to_string()),
    };
    // Both limits given: both must hold. None: not one pixel may differ.
    let mut limits = Vec::new();
    if let Some(n) = l.max_diff_pixels {
        limits.push(pixel_diff::Limits::MaxDiffPixels(n));
    }
    if let Some(r) = l.max_diff_ratio {
        match pixel_diff::Limits::max_diff_ratio(r) {
            Ok(limit) => limits.push(limit),
            Err(e) => return error(e.to_string()),
        }
    }
    if limits.is_empty() {
        limits.push(pixel_diff::Limits::default());
    }
    let passed = limits.iter().all(|limit| c.within(limit));
    let mut report =
        CompareReport::new(&spec.baseline, if passed { CompareStatus::Passed } else { CompareStatus::Failed }, None);
    report.diff_pixels = Some(c.diff_pixels);
    report.diff_ratio = Some(c.ratio());
    report.changed_area = c.changed_area.map(|a| a.to_string());
    if passed {
        stale();
        return report;
    }
    report.message = Some(format!(
        "{} pixels ({:.3} %) differ from {}{}",
        c.diff_pixels,
        c.ratio() * 100.0,
        spec.baseline.display(),
        c.changed_area.map(|a| format!(" in {a}")).unwrap_or_default()
    ));
    if let Some(img) = &c.diff_image {
        match img.write_png(&diff_path) {
            Ok(()) => report.diff_image = Some(diff_path),
            Err(e) => tracing::warn!(error = %e, "diff image not written"),
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgba);
        let mut wr = enc.write_header().unwrap();
        let data: Vec<u8> = (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).flat_map(|(x, y)| f(x, y)).collect();
        wr.write_image_data(&data).unwrap();
        wr.finish().unwrap();
        out
    }

    #[test]
    fn passes_fails_updates_and_reports_a_missing_baseline() {
        let dir = tempfile::tempdir().unwrap();
        let (out, base) = (dir.path().join("shot.png"), dir.path().join("base/shot.png"));
        let white = png(10, 10, |_, _| [255; 4]);
        let dotted = png(10, 10, |x, y| if (x, y) == (3, 4) || (x, y) == (5, 5) { [0, 0, 0, 255] } else { [255; 4] });
        let spec = CompareSpec { baseline: base.clone(), limits: CompareLimits::default() };

        let r = check(&white, &out, &spec, false);
        assert_eq!(r.status, CompareStatus::Error);
        assert!(r.message.unwrap().contains("--update-baselines"));

        let r = check(&white, &out, &spec, true);
        assert_eq!(r.status, CompareStatus::Updated);
        assert_eq!(std::fs::read(&base).unwrap(), white, "the baseline is the shot");

        let r = check(&white, &out, &spec, false);
        assert_eq!((r.status, r.diff_pixels, r.diff_image.clone()), (CompareStatus::Passed, Some(0), None));

        let r = check(&dotted, &out, &spec, false);
        assert_eq!((r.status, r.diff_pixels), (CompareStatus::Failed, Some(2)));
        assert_eq!(r.changed_area.as_deref(), Some("3x2+3+4"));
        let diff = dir.path().join("shot.diff.png");
        assert_eq!(r.diff_image.as_deref(), Some(diff.as_path()));
        assert!(diff.exists());

        let loose =
            CompareSpec { limits: CompareLimits { max_diff_pixels: Some(2), ..Default::default() }, ..spec.clone() };
        assert_eq!(check(&dotted, &out, &loose, false).status, CompareStatus::Passed);
        assert!(!diff.exists(), "a pass removes the stale diff image");
        let both = CompareSpec {
            limits: CompareLimits { max_diff_pixels: Some(2), max_diff_ratio: Some(0.01), ..Default::default() },
            ..spec.clone()
        };
        assert_eq!(check(&dotted, &out, &both, false).status, CompareStatus::Failed, "2 % is over a 1 % ratio");

        let small = png(5, 5, |_, _| [255; 4]);
        let r = check(&small, &out, &spec, false);
        assert_eq!(r.status, CompareStatus::Error, "another size is no comparison");
        assert!(r.message.unwrap().contains("differ in size"));

        std::fs::write(&base, b"not a png").unwrap();
        assert_eq!(check(&white, &out, &spec, false).status, CompareStatus::Error);
    }

    #[test]
    fn diff_images_sit_beside_the_output() {
        assert_eq!(diff_image_path(Path::new("shots/home.png")), PathBuf::from("shots/home.diff.png"));
        assert_eq!(diff_image_path(Path::new("x")), PathBuf::from("x.diff.png"));
    }
}
