//! JUnit XML reports, so CI systems list each comparison (`termsprawl diff
//! --junit`, and the entries of a shot manifest) as a test case with its
//! failure. One `<testsuite>` in a `<testsuites>` root, as CI servers read it.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It passed.
    Passed,
    /// It ran and failed (`<failure>`): the message says what was found.
    Failed(String),
    /// It could not run (`<error>`): the message says why.
    Error(String),
}

/// One test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// What was checked, e.g. `baseline.png vs shot.png`.
    pub name: String,
    /// The group CI shows it under, e.g. `termsprawl.diff`.
    pub classname: String,
    /// How long it took.
    pub time: Duration,
    /// How it ended.
    pub outcome: Outcome,
    /// A line of detail for `<system-out>` (counts, files written), if any.
    pub output: Option<String>,
}

/// A failure writing a report.
#[derive(Debug, Error)]
pub enum JunitError {
    /// The XML could not be produced.
    #[error("cannot serialise the JUnit report: {0}")]
    Serialize(#[from] quick_junit::SerializeError),
    /// The file could not be written (the old one, if any, is left as it was).
    #[error("cannot write the JUnit report {}: {source}", path.display())]
    Write {
        /// The report's path.
        path: PathBuf,
        /// Why.
        source: local_guard::files::FileError,
    },
}

/// A suite of cases, written as one report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    name: String,
    cases: Vec<Case>,
}

impl Suite {
    /// An empty suite called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Suite { name: name.into(), cases: Vec::new() }
    }

    /// Adds a case.
    pub fn push(&mut self, case: Case) {
        self.cases.push(case);
    }

    /// The cases so far.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// The report as XML.
    pub fn to_xml(&self) -> Result<String, JunitError> {
        let mut suite = TestSuite::new(self.name.as_str());
        let mut total = Duration::ZERO;
        for case in &self.cases {
            let status = match &case.outcome {
                Outcome::Passed => TestCaseStatus::success(),
                Outcome::Failed(message) => non_success(NonSuccessKind::Failure, message),
                Outcome::Error(message) => non_success(NonSuccessKind::Error, message),
            };
            let mut tc = TestCase::new(case.name.as_str(), status);
            tc.set_classname(case.classname.as_str()).set_time(case.time);
            if let Some(out) = &case.output {
                tc.set_system_out(out.as_str());
            }
            total += case.time;
            suite.add_test_case(tc);
        }
        suite.set_time(total);
        let mut report = Report::new(self.name.as_str());
        report.set_time(total).add_test_suite(suite);
        Ok(report.to_string()?)
    }

    /// Writes the report to `path` atomically (temp file, then rename), mode 0600.
    pub fn write(&self, path: &Path) -> Result<(), JunitError> {
        let xml = self.to_xml()?;
        local_guard::files::write_atomic(path, xml.as_bytes(), local_guard::files::FILE_MODE)
            .map_err(|source| JunitError::Write { path: path.to_path_buf(), source })
    }
}

fn non_success(kind: NonSuccessKind, message: &str) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(kind);
    // The message attribute is what most CI views show in their list; the body repeats it for the rest.
    status.set_message(message).set_description(message);
    status
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A report read back: per case (name, classname, "failure"/"error"/None, message).
    /// (The end-to-end tests read it with a plain XML reader instead: app/tests/support/junit.rs.)
    pub(crate) struct Parsed {
        pub tests: usize,
        pub failures: usize,
        pub errors: usize,
        pub cases: Vec<(String, String, Option<&'static str>, Option<String>)>,
    }

    pub(crate) fn parse(xml: &str) -> Parsed {
        let report = Report::deserialize_from_str(xml).expect("a JUnit report");
        assert_eq!(report.test_suites.len(), 1, "one suite");
        let suite = &report.test_suites[0];
        let cases = suite
            .test_cases
            .iter()
            .map(|c| {
                let (kind, message) = match &c.status {
                    TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, message, .. } => {
                        (Some("failure"), message)
                    }
                    TestCaseStatus::NonSuccess { kind: NonSuccessKind::Error, message, .. } => (Some("error"), message),
                    _ => (None, &None),
                };
                let classname = c.classname.as_ref().map(|s| s.to_string()).unwrap_or_default();
                (c.name.to_string(), classname, kind, message.as_ref().map(|m| m.to_string()))
            })
            .collect();
        Parsed { tests: suite.tests, failures: suite.failures, errors: suite.errors, cases }
    }

    fn case(name: &str, outcome: Outcome) -> Case {
        Case {
            name: name.into(),
            classname: "termsprawl.diff".into(),
            time: Duration::from_millis(12),
            outcome,
            output: Some("0 of 4 pixels".into()),
        }
    }

    #[test]
    fn report_lists_cases_with_failures_and_errors() {
        let mut suite = Suite::new("termsprawl diff");
        suite.push(case("a.png vs b.png", Outcome::Passed));
        suite.push(case("c.png vs d.png", Outcome::Failed("3 pixels differ <&> \"quoted\"".into())));
        suite.push(case("e.png vs f.png", Outcome::Error("f.png: no such file".into())));
        let parsed = parse(&suite.to_xml().unwrap());
        assert_eq!((parsed.tests, parsed.failures, parsed.errors), (3, 1, 1));
        assert_eq!(parsed.cases.len(), 3);
        assert_eq!(parsed.cases[0], ("a.png vs b.png".into(), "termsprawl.diff".into(), None, None));
        assert_eq!(parsed.cases[1].2, Some("failure"));
        assert_eq!(parsed.cases[1].3.as_deref(), Some("3 pixels differ <&> \"quoted\""));
        assert_eq!(parsed.cases[2].2, Some("error"));
        assert_eq!(parsed.cases[2].3.as_deref(), Some("f.png: no such file"));
    }

    #[test]
    fn write_is_atomic_and_reports_where_it_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junit.xml");
        let mut suite = Suite::new("s");
        suite.push(case("x", Outcome::Passed));
        suite.write(&path).unwrap();
        assert_eq!(parse(&std::fs::read_to_string(&path).unwrap()).cases.len(), 1);
        let bad = dir.path().join("missing/junit.xml");
        assert!(matches!(suite.write(&bad), Err(JunitError::Write { path, .. }) if path == bad));
    }
}
