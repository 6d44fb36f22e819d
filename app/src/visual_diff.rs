//! `termsprawl diff` (run by the `termsprawl` front, which does not load the
//! browser engine; the engine's CLI has it too): compares two PNGs (the
//! `pixel-diff` crate), writes the diff image and a JUnit report when asked,
//! and sums up in one line what it found. Needs neither a browser nor a display.

use crate::junit::{self, Case, JunitError, Outcome, Suite};
use pixel_diff::{Comparison, DiffError, Limits, Options};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use thiserror::Error;

/// The command line of `termsprawl diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first image (the baseline).
    first: PathBuf,
    /// The second image.
    second: PathBuf,
    /// Write a diff image here: changed pixels red (anti-aliasing yellow) over a faded copy of the first.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Colour distance (0 to 1) below which pixels count as equal.
    #[arg(long, default_value_t = 0.1, value_parser = parse_unit_interval)]
    threshold: f64,
    /// Pass with at most this many changed pixels (default 0).
    #[arg(long, value_name = "N", conflicts_with = "max_diff_ratio")]
    max_diff_pixels: Option<u64>,
    /// Pass with at most this fraction (0 to 1) of the pixels changed.
    #[arg(long, value_name = "R", value_parser = parse_unit_interval)]
    max_diff_ratio: Option<f64>,
    /// Do not count anti-aliasing pixels (edges rendered a little differently).
    #[arg(long)]
    ignore_antialiasing: bool,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

fn parse_unit_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a number from 0 to 1, not '{s}'")),
    }
}

impl From<DiffArgs> for DiffRequest {
    fn from(a: DiffArgs) -> Self {
        let limits = match a.max_diff_ratio {
            Some(r) => Limits::MaxDiffRatio(r),
            None => Limits::MaxDiffPixels(a.max_diff_pixels.unwrap_or(0)),
        };
        DiffRequest {
            first: a.first,
            second: a.second,
            output: a.output,
            threshold: a.threshold,
            ignore_antialiasing: a.ignore_antialiasing,
            limits,
            junit: a.junit,
        }
    }
}

/// Exit code of an error (missing file, not a PNG, sizes differ), the same as clap's usage errors.
const EXIT_ERROR: u8 = 2;

/// Runs the command: the summary on stdout, or the error on stderr; exit 0 within the limits, 1 beyond, 2 on error.
pub fn main(args: DiffArgs) -> ExitCode {
    match run(&args.into()) {
        Ok(report) => {
            println!("{}", report.summary);
            if report.within {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("termsprawl diff: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The JUnit classname of comparisons.
pub const JUNIT_CLASSNAME: &str = "termsprawl.diff";

/// One comparison to make.
#[derive(Debug, Clone)]
pub struct DiffRequest {
    /// The first image (the baseline); the diff image fades a copy of it.
    pub first: PathBuf,
    /// The second image (the new one).
    pub second: PathBuf,
    /// Where to write the diff image, if anywhere.
    pub output: Option<PathBuf>,
    /// Colour threshold, 0..=1.
    pub threshold: f64,
    /// Leave anti-aliasing pixels out of the count.
    pub ignore_antialiasing: bool,
    /// When the images count as equal.
    pub limits: Limits,
    /// Where to write a JUnit report, if anywhere.
    pub junit: Option<PathBuf>,
}

/// What a comparison found.
#[derive(Debug, Clone)]
pub struct DiffReport {
    /// The counts.
    pub comparison: Comparison,
    /// Whether they are within the limits.
    pub within: bool,
    /// One line for people: verdict, counts, where, the limit.
    pub summary: String,
}

/// A failure of `termsprawl diff` (exit code 2).
#[derive(Debug, Error)]
pub enum VisualDiffError {
    /// Reading, comparing or writing the images.
    #[error(transparent)]
    Diff(#[from] DiffError),
    /// Writing the report.
    #[error(transparent)]
    Junit(#[from] JunitError),
}

/// Compares, writes what was asked for, and returns the report. The JUnit
/// file is written whatever happened, an error included, so CI shows it.
pub fn run(req: &DiffRequest) -> Result<DiffReport, VisualDiffError> {
    let started = Instant::now();
    let result = compare(req);
    if let Some(path) = &req.junit {
        let mut suite = Suite::new("termsprawl diff");
        suite.push(junit_case(case_name(req), started.elapsed(), &result));
        if let Err(e) = suite.write(path) {
            match result {
                // The comparison's own error says more; the report's is logged.
                Err(_) => tracing::error!(error = %e, "JUnit report not written"),
                Ok(_) => return Err(e.into()),
            }
        }
    }
    Ok(result?)
}

fn compare(req: &DiffRequest) -> Result<DiffReport, DiffError> {
    let options = Options {
        threshold: req.threshold,
        ignore_antialiasing: req.ignore_antialiasing,
        diff_image: req.output.is_some(),
    };
    let comparison = pixel_diff::compare_files(&req.first, &req.second, &options)?;
    if let (Some(path), Some(image)) = (&req.output, &comparison.diff_image) {
        image.write_png(path)?;
    }
    let within = comparison.within(&req.limits);
    let summary = summary(&comparison, &req.limits);
    Ok(DiffReport { comparison, within, summary })
}

/// `A.png vs B.png`, the name a comparison has in reports.
pub fn case_name(req: &DiffRequest) -> String {
    format!("{} vs {}", req.first.display(), req.second.display())
}

/// The JUnit case of one comparison: passed, failed with the summary, or an error with its message.
pub fn junit_case(name: String, time: Duration, result: &Result<DiffReport, DiffError>) -> Case {
    let (outcome, output) = match result {
        Ok(r) if r.within => (Outcome::Passed, Some(r.summary.clone())),
        Ok(r) => (Outcome::Failed(r.summary.clone()), None),
        Err(e) => (Outcome::Error(e.to_string()), None),
    };
    junit::Case { name, classname: JUNIT_CLASSNAME.into(), time, outcome, output }
}

/// One line: `different: 189 of 2073600 pixels (0.0091%) in 52x14+440+392; limit 0 pixels`.
pub fn summary(c: &Comparison, limits: &Limits) -> String {
    let verdict = if c.within(limits) { "equal within limits" } else { "different" };
    let mut line = format!("{verdict}: {} of {} pixels ({:.4}%)", c.diff_pixels, c.total_pixels(), c.ratio() * 100.0);
    if let Some(area) = c.changed_area {
        line.push_str(&format!(" in {area}"));
    }
    if c.antialiased_pixels > 0 {
        line.push_str(&format!(", {} anti-aliasing pixels ignored", c.antialiased_pixels));
    }
    match limits {
        Limits::MaxDiffPixels(n) => line.push_str(&format!("; limit {n} pixels")),
        Limits::MaxDiffRatio(r) => line.push_str(&format!("; limit {}%", r * 100.0)),
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junit::tests::parse;

    fn write_png(path: &std::path::Path, w: u32, h: u32, dot: Option<(u32, u32)>) {
        let mut data = vec![255u8; (w * h * 3) as usize];
        if let Some((x, y)) = dot {
            let i = ((y * w + x) * 3) as usize;
            data[i..i + 3].copy_from_slice(&[0, 0, 200]);
        }
        let mut enc = png::Encoder::new(std::fs::File::create(path).unwrap(), w, h);
        enc.set_color(png::ColorType::Rgb);
        let mut writer = enc.write_header().unwrap();
        writer.write_image_data(&data).unwrap();
    }

    fn request(dir: &std::path::Path, second: &str) -> DiffRequest {
        DiffRequest {
            first: dir.join("a.png"),
            second: dir.join(second),
            output: Some(dir.join("diff.png")),
            threshold: 0.1,
            ignore_antialiasing: false,
            limits: Limits::default(),
            junit: Some(dir.join("junit.xml")),
        }
    }

    #[test]
    fn different_images_fail_with_a_summary_in_the_report() {
        let dir = tempfile::tempdir().unwrap();
        write_png(&dir.path().join("a.png"), 20, 10, None);
        write_png(&dir.path().join("b.png"), 20, 10, Some((3, 4)));
        let report = run(&request(dir.path(), "b.png")).unwrap();
        assert!(!report.within);
        assert_eq!(report.summary, "different: 1 of 200 pixels (0.5000%) in 1x1+3+4; limit 0 pixels");
        assert!(dir.path().join("diff.png").exists());
        let parsed = parse(&std::fs::read_to_string(dir.path().join("junit.xml")).unwrap());
        assert_eq!(parsed.failures, 1);
        assert_eq!(parsed.cases[0].1, JUNIT_CLASSNAME);
        assert_eq!(parsed.cases[0].3.as_deref(), Some(report.summary.as_str()));

        let mut lenient = request(dir.path(), "b.png");
        lenient.limits = Limits::max_diff_ratio(0.005).unwrap();
        let report = run(&lenient).unwrap();
        assert!(report.within, "{}", report.summary);
        assert!(report.summary.starts_with("equal within limits: 1 of 200"), "{}", report.summary);
        assert!(report.summary.ends_with("; limit 0.5%"), "{}", report.summary);
    }

    #[test]
    fn errors_still_write_the_report() {
        let dir = tempfile::tempdir().unwrap();
        write_png(&dir.path().join("a.png"), 20, 10, None);
        write_png(&dir.path().join("small.png"), 10, 10, None);
        let err = run(&request(dir.path(), "small.png")).unwrap_err();
        assert!(matches!(err, VisualDiffError::Diff(DiffError::SizeMismatch { first: (20, 10), second: (10, 10) })));
        let parsed = parse(&std::fs::read_to_string(dir.path().join("junit.xml")).unwrap());
        assert_eq!(parsed.errors, 1);
        assert_eq!(parsed.cases[0].3.as_deref(), Some(err.to_string().as_str()));
        assert!(!dir.path().join("diff.png").exists(), "no diff image without a comparison");
    }
}
