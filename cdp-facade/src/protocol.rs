//! CDP wire format: parsing client commands and guest messages, building
//! replies and events. Large payloads (screenshots) stay raw text: only the
//! envelope is parsed, so the facade's per-message cost stays small.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// JSON-RPC: the message is not valid JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the message is not a valid command.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: unknown method.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Chromium's generic server error.
pub(crate) const SERVER_ERROR: i64 = -32000;
/// Chromium's "Session with given id not found."
pub(crate) const SESSION_NOT_FOUND: i64 = -32001;

/// One command from the CDP client, envelope parsed, params kept raw.
#[derive(Debug)]
pub(crate) struct ClientCommand {
    /// The client's id (echoed in the reply).
    pub id: i64,
    /// `Domain.method`.
    pub method: String,
    /// Raw params object, if the client sent one.
    pub params: Option<Box<RawValue>>,
    /// Target session, absent for the browser's root session.
    pub session_id: Option<String>,
}

#[derive(Deserialize)]
struct RawCommand {
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Box<RawValue>>,
    #[serde(rename = "sessionId")]
    session_id: Option<Value>,
}

/// A command's params that do not decode as its method expects (Chromium's words lead).
#[derive(Debug, thiserror::Error)]
#[error("Invalid parameters: {0}")]
pub(crate) struct InvalidParams(#[from] pub(crate) serde_json::Error);

/// Why a client message could not be turned into a command; carries the reply to send.
#[derive(Debug)]
pub(crate) struct BadCommand {
    /// The error reply (JSON text).
    pub reply: String,
}

impl ClientCommand {
    /// Parses a client text frame.
    pub(crate) fn parse(text: &str) -> Result<Self, BadCommand> {
        let not_an_object =
            || BadCommand { reply: error_reply(None, None, PARSE_ERROR, "Message must be a valid JSON object") };
        // serde's derived struct also accepts a JSON array of the fields in order
        // (`[1,"Runtime.evaluate",null,null]`); CDP commands are objects only.
        if !text.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') {
            return Err(not_an_object());
        }
        let raw: RawCommand = serde_json::from_str(text).map_err(|_| not_an_object())?;
        let session_id = match raw.session_id {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => None,
        };
        let Some(id) = raw.id.as_ref().and_then(Value::as_i64) else {
            return Err(BadCommand {
                reply: error_reply(
                    None,
                    session_id.as_deref(),
                    INVALID_REQUEST,
                    "Message must have integer 'id' property",
                ),
            });
        };
        let Some(Value::String(method)) = raw.method else {
            return Err(BadCommand {
                reply: error_reply(
                    Some(id),
                    session_id.as_deref(),
                    INVALID_REQUEST,
                    "Message must have string 'method' property",
                ),
            });
        };
        if let Some(p) = &raw.params {
            if !p.get().trim_start().starts_with('{') {
                return Err(BadCommand {
                    reply: error_reply(
                        Some(id),
                        session_id.as_deref(),
                        INVALID_PARAMS,
                        "Invalid parameters: params must be an object",
                    ),
                });
            }
        }
        Ok(Self { id, method, params: raw.params, session_id })
    }

    /// Decodes the params into `T` (absent params decode from `{}`).
    pub(crate) fn params_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, InvalidParams> {
        let text = self.params.as_ref().map(|p| p.get()).unwrap_or("{}");
        Ok(serde_json::from_str(text)?)
    }
}

/// The envelope of a message coming from a guest; payloads borrowed raw.
#[derive(Deserialize)]
pub(crate) struct GuestEnvelope<'a> {
    /// Reply id (replies only).
    pub id: Option<i64>,
    /// Event name (events only).
    #[serde(borrow)]
    pub method: Option<Cow<'a, str>>,
    /// Reply result.
    #[serde(borrow)]
    pub result: Option<&'a RawValue>,
    /// Reply error.
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
    /// Event params.
    #[serde(borrow)]
    pub params: Option<&'a RawValue>,
    /// Child session the message belongs to, absent for the page itself.
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Option<Cow<'a, str>>,
}

impl<'a> GuestEnvelope<'a> {
    /// Parses the envelope of a guest message.
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

#[derive(Serialize)]
struct Reply<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RawValue>,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

#[derive(Serialize)]
struct ValueReply<'a> {
    id: i64,
    result: &'a Value,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i64,
    message: &'a str,
}

#[derive(Serialize)]
struct ErrorReply<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<i64>,
    error: ErrorBody<'a>,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

#[derive(Serialize)]
struct Event<'a> {
    method: &'a str,
    params: &'a Value,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

#[derive(Serialize)]
struct Outgoing<'a> {
    id: i64,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

fn to_text<T: Serialize>(value: &T) -> String {
    // Serializing these plain structs (strings, numbers, already-valid raw JSON) cannot fail.
    serde_json::to_string(value).unwrap_or_else(|_| String::from("{}"))
}

/// A reply carrying a guest's raw `result` or `error`, re-addressed to the client's id and session.
pub(crate) fn raw_reply(id: i64, session: Option<&str>, result: Option<&RawValue>, error: Option<&RawValue>) -> String {
    let empty;
    let result = if result.is_none() && error.is_none() {
        empty = RawValue::from_string("{}".into()).ok();
        empty.as_deref()
    } else {
        result
    };
    to_text(&Reply { id: Some(id), result, error, session_id: session })
}

/// A successful reply with a locally built result.
pub(crate) fn value_reply(id: i64, session: Option<&str>, result: &Value) -> String {
    to_text(&ValueReply { id, result, session_id: session })
}

/// An error reply.
pub(crate) fn error_reply(id: Option<i64>, session: Option<&str>, code: i64, message: &str) -> String {
    to_text(&ErrorReply { id, error: ErrorBody { code, message }, session_id: session })
}

/// The error Chromium gives for a method it does not implement.
pub(crate) fn not_found_reply(id: i64, session: Option<&str>, method: &str) -> String {
    error_reply(Some(id), session, METHOD_NOT_FOUND, &format!("'{method}' wasn't found"))
}

/// An event, optionally on a session.
pub(crate) fn event(method: &str, params: &Value, session: Option<&str>) -> String {
    to_text(&Event { method, params, session_id: session })
}

/// A command for a guest channel.
pub(crate) fn command(id: i64, method: &str, params: Option<&RawValue>, session: Option<&str>) -> String {
    to_text(&Outgoing { id, method, params, session_id: session })
}

/// Adds `"sessionId"` to a guest's root-level event without re-serializing its payload.
///
/// `raw` must be a JSON object without a `sessionId` key (checked by the caller's envelope parse).
pub(crate) fn with_session(raw: &str, session: &str) -> String {
    let body = raw.trim_start();
    let rest = body.strip_prefix('{').unwrap_or(body);
    let sid = to_text(&session);
    if rest.trim_start().starts_with('}') {
        format!("{{\"sessionId\":{sid}{rest}")
    } else {
        format!("{{\"sessionId\":{sid},{rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_with_and_without_params() {
        let c = ClientCommand::parse(r#"{"id":3,"method":"Target.getBrowserContexts"}"#).unwrap();
        assert_eq!(
            (c.id, c.method.as_str(), c.params.is_none(), c.session_id),
            (3, "Target.getBrowserContexts", true, None)
        );
        let c = ClientCommand::parse(
            r#"{"id":4,"method":"Runtime.evaluate","params":{"expression":"1+1"},"sessionId":"AB"}"#,
        )
        .unwrap();
        assert_eq!(c.session_id.as_deref(), Some("AB"));
        assert_eq!(c.params.unwrap().get(), r#"{"expression":"1+1"}"#);
    }

    #[test]
    fn rejects_bad_commands_with_a_reply() {
        let e = ClientCommand::parse("not json").unwrap_err();
        assert!(e.reply.contains("-32700"));
        let e = ClientCommand::parse(r#"{"id":"x","method":"A.b"}"#).unwrap_err();
        assert!(e.reply.contains("integer 'id'"));
        let e = ClientCommand::parse(r#"{"id":1}"#).unwrap_err();
        assert!(e.reply.contains("\"id\":1"));
        let e = ClientCommand::parse(r#"{"id":1,"method":"A.b","params":[1]}"#).unwrap_err();
        assert!(e.reply.contains("-32602"));
    }

    #[test]
    fn replies_keep_raw_payloads_and_sessions() {
        let env = GuestEnvelope::parse(r#"{"id":1073741824,"result":{"data":"QUJD"},"sessionId":"C1"}"#).unwrap();
        let r = raw_reply(7, Some("S"), env.result, env.error);
        let v: Value = serde_json::from_str(&r).unwrap();
        assert_eq!(v, serde_json::json!({"id":7,"result":{"data":"QUJD"},"sessionId":"S"}));
        let r = raw_reply(7, None, None, None);
        assert_eq!(r, r#"{"id":7,"result":{}}"#);
    }

    #[test]
    fn with_session_inserts_the_key() {
        let v: Value = serde_json::from_str(&with_session(r#" {"method":"A.b","params":{}}"#, "S1")).unwrap();
        assert_eq!(v, serde_json::json!({"method":"A.b","params":{},"sessionId":"S1"}));
        let v: Value = serde_json::from_str(&with_session("{}", "S\"2")).unwrap();
        assert_eq!(v, serde_json::json!({"sessionId":"S\"2"}));
    }

    #[test]
    fn builds_errors_and_commands() {
        let e: Value = serde_json::from_str(&not_found_reply(2, None, "Browser.crash")).unwrap();
        assert_eq!(e, serde_json::json!({"id":2,"error":{"code":-32601,"message":"'Browser.crash' wasn't found"}}));
        let c = command(1 << 30, "Page.enable", None, Some("C"));
        assert_eq!(c, r#"{"id":1073741824,"method":"Page.enable","sessionId":"C"}"#);
    }
}
