//! The JSON report of a batch (`--report FILE`) and its one-line summary.

use super::batch::Outcome;
use super::compare::{CompareReport, CompareStatus};
use super::request::{ShotRequest, Target};
use crate::junit;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The JUnit classname of shots.
pub const JUNIT_CLASSNAME: &str = "termsprawl.shot";

/// A PNG's size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PixelSize {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// One entry of the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryReport {
    /// Index in the manifest's `shots`.
    pub index: usize,
    /// The page, for a page entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The project folder, for a canvas entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canvas: Option<PathBuf>,
    /// The output PNG.
    pub file: PathBuf,
    /// Whether the shot was written (and, with a baseline, matched it).
    pub ok: bool,
    /// The PNG's size (None when nothing was written).
    pub size: Option<PixelSize>,
    /// Wall time of this entry in milliseconds.
    pub time_ms: u64,
    /// Why the entry failed.
    pub error: Option<String>,
    /// The comparison with the baseline, when the entry has one and the shot was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareReport>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// True when every entry is ok.
    pub ok: bool,
    /// Entries.
    pub total: usize,
    /// Entries ok.
    pub passed: usize,
    /// Entries not ok.
    pub failed: usize,
    /// Pages captured at once.
    pub jobs: usize,
    /// Wall time of the whole batch in milliseconds.
    pub time_ms: u64,
    /// Every entry, in manifest order.
    pub entries: Vec<EntryReport>,
}

impl Report {
    /// The report of `outcomes` (one per request, in order).
    pub fn new(requests: &[ShotRequest], outcomes: &[Outcome], jobs: usize, time_ms: u64) -> Self {
        let entries: Vec<EntryReport> = outcomes
            .iter()
            .map(|o| {
                let req = &requests[o.index];
                let (url, canvas) = match &req.target {
                    Target::Url(u) => (Some(u.clone()), None),
                    Target::Canvas(p) => (None, Some(p.clone())),
                };
                let (size, error) = match &o.result {
                    Ok((width, height)) => (Some(PixelSize { width: *width, height: *height }), None),
                    Err(e) => (None, Some(e.to_string())),
                };
                // A failed comparison is the entry's error too: one place to look.
                let error = error.or_else(|| o.compare.as_ref().filter(|c| !c.ok()).and_then(|c| c.message.clone()));
                EntryReport {
                    index: o.index,
                    url,
                    canvas,
                    file: req.output.clone(),
                    ok: o.ok(),
                    size,
                    time_ms: o.elapsed.as_millis() as u64,
                    error,
                    compare: o.compare.clone(),
                }
            })
            .collect();
        let passed = entries.iter().filter(|e| e.ok).count();
        Report {
            ok: passed == entries.len(),
            total: entries.len(),
            passed,
            failed: entries.len() - passed,
            jobs,
            time_ms,
            entries,
        }
    }

    /// The summary line printed on stdout.
    pub fn summary(&self) -> String {
        format!(
            "termsprawl shot: {} of {} ok, {} failed in {:.1} s ({} at once)",
            self.passed,
            self.total,
            self.failed,
            self.time_ms as f64 / 1000.0,
            self.jobs
        )
    }

    /// The report as a JUnit suite: one case per entry, named by its output;
    /// a comparison beyond its limits is a `<failure>`, a shot that could not
    /// be taken or compared (page error, missing baseline) an `<error>`.
    pub fn junit(&self) -> junit::Suite {
        let mut suite = junit::Suite::new("termsprawl shot");
        for e in &self.entries {
            let failed_compare = e.compare.as_ref().is_some_and(|c| c.status == CompareStatus::Failed);
            let message = || e.error.clone().unwrap_or_else(|| "failed".into());
            let outcome = if e.ok {
                junit::Outcome::Passed
            } else if failed_compare {
                junit::Outcome::Failed(message())
            } else {
                junit::Outcome::Error(message())
            };
            let output = e.size.map(|s| {
                let diff = e.compare.as_ref().and_then(|c| c.diff_image.as_ref());
                let diff = diff.map(|p| format!("; diff image {}", p.display())).unwrap_or_default();
                format!("wrote {} ({}x{}){diff}", e.file.display(), s.width, s.height)
            });
            suite.push(junit::Case {
                name: e.file.display().to_string(),
                classname: JUNIT_CLASSNAME.into(),
                time: Duration::from_millis(e.time_ms),
                outcome,
                output,
            });
        }
        suite
    }

    /// Writes the report as pretty JSON to `path` (atomically).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        json.push(b'\n');
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        local_guard::files::write_atomic(path, &json, local_guard::files::FILE_MODE)
            .map_err(local_guard::FileError::into_io)
    }
}
