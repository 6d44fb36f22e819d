//! JUnit reports read back with a plain XML reader, independent of the
//! crate that wrote them: what a CI server would see.

use quick_xml::events::{BytesStart, Event};

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JunitCase {
    /// Its `name`.
    pub name: String,
    /// Its `classname`.
    pub classname: String,
    /// `failure` or `error` when it has one of those children.
    pub verdict: Option<String>,
    /// The `message` of that child.
    pub message: Option<String>,
}

/// A report's one `<testsuite>`.
#[derive(Debug, Clone, Default)]
pub struct JunitSuite {
    /// `<testsuite>` elements seen (a report of ours has exactly one).
    pub suites: usize,
    /// Its `tests`, `failures` and `errors` attributes.
    pub tests: String,
    /// See `tests`.
    pub failures: String,
    /// See `tests`.
    pub errors: String,
    /// Its cases in order.
    pub cases: Vec<JunitCase>,
}

fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .filter_map(Result::ok)
        .find(|a| a.key.as_ref() == name.as_bytes())
        .map(|a| a.normalized_value(quick_xml::XmlVersion::Explicit1_0).expect("attribute value").into_owned())
}

/// Parses the JUnit XML in `xml`; panics on malformed XML.
pub fn parse(xml: &str) -> JunitSuite {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut suite = JunitSuite::default();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"testsuite" => {
                    suite.suites += 1;
                    suite.tests = attr(&e, "tests").unwrap_or_default();
                    suite.failures = attr(&e, "failures").unwrap_or_default();
                    suite.errors = attr(&e, "errors").unwrap_or_default();
                }
                b"testcase" => suite.cases.push(JunitCase {
                    name: attr(&e, "name").unwrap_or_default(),
                    classname: attr(&e, "classname").unwrap_or_default(),
                    verdict: None,
                    message: None,
                }),
                tag @ (b"failure" | b"error") => {
                    let case = suite.cases.last_mut().expect("failure/error inside a testcase");
                    case.verdict = Some(String::from_utf8_lossy(tag).into_owned());
                    case.message = attr(&e, "message");
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    suite
}
