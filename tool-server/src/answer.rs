//! What a successful call answers, and its `200` body `{"ok":true,"value":…}`
//! written in one pass. `session_info`, the call adapters poll, is typed: it
//! serializes straight from the shared session, with the catalogue's name
//! lists encoded once, instead of building (and dropping) a JSON tree per request.
//! Keys are written in the order a `serde_json::Value` object sorts them, so
//! the body is byte for byte the tree's (tested below).

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::guides::GuideTopic;
use crate::operation::Operation;
use crate::sessions::{IntegrationStatus, ToolSession};

/// Room for a `session_info` body (about 900 bytes) without regrowing.
const BODY_CAPACITY: usize = 1024;

/// `Operation::NAMES` as JSON, encoded once: escaping the same 28 names on
/// every call was most of what writing the body still cost.
static OPERATIONS: LazyLock<Box<RawValue>> = LazyLock::new(|| encoded_names(Operation::NAMES));
/// `GuideTopic::NAMES` as JSON, encoded once.
static GUIDES: LazyLock<Box<RawValue>> = LazyLock::new(|| encoded_names(GuideTopic::NAMES));

fn encoded_names(names: &[&str]) -> Box<RawValue> {
    // Serializing a list of strings has no failure case.
    serde_json::value::to_raw_value(names).expect("a list of strings encodes as JSON")
}

/// A successful call's value.
pub(crate) enum Answer<'a> {
    /// A JSON value: the host's, or a discovery operation's.
    Value(Value),
    /// `session_info`'s value.
    SessionInfo(SessionInfo<'a>),
}

impl Serialize for Answer<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Answer::Value(value) => value.serialize(serializer),
            Answer::SessionInfo(info) => info.serialize(serializer),
        }
    }
}

/// `session_info`'s value: who the session speaks for, its status, where the
/// server is, and what it offers.
pub(crate) struct SessionInfo<'a> {
    /// The live session (after any status update this call made).
    pub(crate) session: Arc<ToolSession>,
    /// The server's `http://127.0.0.1:<port>`.
    pub(crate) endpoint_url: &'a str,
    /// Whether agent browser control is on.
    pub(crate) browser_control: bool,
    /// The project's folder: `null` when the project is not open, or when its
    /// path is not UTF-8 (JSON cannot carry it exactly, and a lossy path
    /// would name another folder).
    pub(crate) project_folder: Option<PathBuf>,
}

impl Serialize for SessionInfo<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Sorted key order (see the module doc); ToolIdentity's derived
        // order, nodeId then projectId, is already sorted.
        let mut s = serializer.serialize_struct("SessionInfo", 7)?;
        s.serialize_field("browserControl", &self.browser_control)?;
        s.serialize_field("endpoint", &EndpointUrl { url: self.endpoint_url })?;
        s.serialize_field("guides", &*GUIDES)?;
        s.serialize_field("identity", &self.session.identity)?;
        s.serialize_field("operations", &*OPERATIONS)?;
        s.serialize_field("projectFolder", &self.project_folder.as_deref().and_then(|p| p.to_str()))?;
        s.serialize_field("status", &SortedStatus(&self.session.status))?;
        s.end()
    }
}

/// `{"url": …}`.
#[derive(Serialize)]
struct EndpointUrl<'a> {
    url: &'a str,
}

/// An [`IntegrationStatus`] with its keys sorted (`adapter`, `detail`,
/// `state`); its derived order, kept for the session files, puts `state` first.
struct SortedStatus<'a>(&'a IntegrationStatus);

impl Serialize for SortedStatus<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let status = self.0;
        let len = 1 + usize::from(status.adapter.is_some()) + usize::from(status.detail.is_some());
        let mut s = serializer.serialize_struct("IntegrationStatus", len)?;
        match &status.adapter {
            Some(adapter) => s.serialize_field("adapter", adapter)?,
            None => s.skip_field("adapter")?,
        }
        match &status.detail {
            Some(detail) => s.serialize_field("detail", detail)?,
            None => s.skip_field("detail")?,
        }
        s.serialize_field("state", &status.state)?;
        s.end()
    }
}

/// The `200` body for `answer`: `{"ok":true,"value":…}`.
pub(crate) fn success_body(answer: &Answer<'_>) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct Success<'a, 'b> {
        ok: bool,
        value: &'a Answer<'b>,
    }
    let mut body = Vec::with_capacity(BODY_CAPACITY);
    serde_json::to_writer(&mut body, &Success { ok: true, value: answer })?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::{IntegrationState, ToolIdentity};
    use local_guard::Token;
    use serde_json::json;

    /// The body as the server built it before it was typed: a JSON tree.
    fn tree_body(value: Value) -> String {
        json!({"ok": true, "value": value}).to_string()
    }

    fn typed_body(answer: &Answer<'_>) -> String {
        String::from_utf8(success_body(answer).unwrap()).unwrap()
    }

    #[test]
    fn a_project_folder_json_cannot_carry_exactly_is_null() {
        use std::os::unix::ffi::OsStrExt;
        let folder = PathBuf::from(std::ffi::OsStr::from_bytes(b"/home/\xff/proj"));
        let session = ToolSession {
            identity: ToolIdentity::new("a", "p"),
            token: Token::generate().unwrap(),
            status: IntegrationStatus::new(IntegrationState::Ready),
        };
        let info = SessionInfo {
            session: Arc::new(session),
            endpoint_url: "http://127.0.0.1:1",
            browser_control: false,
            project_folder: Some(folder),
        };
        let body: Value = serde_json::from_str(&typed_body(&Answer::SessionInfo(info))).unwrap();
        assert_eq!(body["value"]["projectFolder"], Value::Null);
    }

    #[test]
    fn session_info_is_byte_for_byte_the_json_tree() {
        let statuses = [
            IntegrationStatus::new(IntegrationState::Ready),
            IntegrationStatus { state: IntegrationState::Connected, adapter: Some("codex-mcp".into()), detail: None },
            IntegrationStatus::with_detail(IntegrationState::NeedsSetup, "run \"claude\" again\n— é 😀 \u{1}"),
            IntegrationStatus {
                state: IntegrationState::Unavailable,
                adapter: Some("claude-mcp".into()),
                detail: Some("why".into()),
            },
        ];
        let identities = [ToolIdentity::new("agent-7", "proj"), ToolIdentity::new("a", "/home/ü/\"q\"\\p\t")];
        for status in &statuses {
            for identity in &identities {
                for (browser_control, folder) in [(false, None), (true, Some("/home/ü/proj \"q\""))] {
                    let session = ToolSession {
                        identity: identity.clone(),
                        token: Token::generate().unwrap(),
                        status: status.clone(),
                    };
                    let url = "http://127.0.0.1:40123";
                    let tree = json!({
                        "identity": session.identity,
                        "status": session.status,
                        "endpoint": {"url": url},
                        "browserControl": browser_control,
                        "operations": Operation::ALL.iter().map(|op| op.name()).collect::<Vec<_>>(),
                        "guides": GuideTopic::NAMES,
                        "projectFolder": folder,
                    });
                    let info = SessionInfo {
                        session: Arc::new(session),
                        endpoint_url: url,
                        browser_control,
                        project_folder: folder.map(PathBuf::from),
                    };
                    let body = typed_body(&Answer::SessionInfo(info));
                    assert_eq!(body, tree_body(tree), "{status:?} {identity:?} {browser_control}");
                    assert!(!body.contains("token"), "the token never reaches the body");
                }
            }
        }
    }

    #[test]
    fn a_value_is_wrapped_as_the_json_tree_was() {
        for value in [
            json!(null),
            json!("text \"q\" \n"),
            json!([1, 2.5, -3, true]),
            json!({"z": 1, "a": {"y": [], "b": {}}, "m": "é"}),
            json!({"topic": "overview", "text": crate::guide(GuideTopic::Overview)}),
        ] {
            assert_eq!(typed_body(&Answer::Value(value.clone())), tree_body(value));
        }
    }
}
