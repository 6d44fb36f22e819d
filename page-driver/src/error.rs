//! How driving a page fails: the protocol refused a command, no reply came in
//! time, the transport failed, or a page script threw ([`ScriptError`]).

use crate::method::Method;
use serde_json::Value;
use std::time::Duration;
use thiserror::Error;

/// A protocol error reply (`{"code", "message", "data"?}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdpError {
    /// CDP error code (e.g. -32601 method not found, -32000 a server error).
    pub code: i64,
    /// CDP error message.
    pub message: String,
    /// Optional extra detail.
    pub data: Option<String>,
}

/// The transport could not carry a command or its reply.
#[derive(Debug, Error)]
pub enum TransportError {
    /// The page's end went away before answering: no reply can come.
    #[error("the page went away")]
    Gone,
    /// The transport's own failure (the channel closed, a message malformed…).
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// A script the page ran threw: CDP's `exceptionDetails`, read once for everyone.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}", self.summary())]
pub struct ScriptError {
    /// CDP's text for the exception (`Uncaught`, or the message of a syntax error).
    pub text: String,
    /// Line of the throw in the script, from 0.
    pub line: i64,
    /// Column of the throw, from 0.
    pub column: i64,
    /// The thrown object's description (an `Error`'s stack, first line its message).
    pub description: Option<String>,
    /// The thrown value when it is a primitive (`throw "x"`).
    pub thrown: Option<Value>,
}

impl ScriptError {
    /// One line that says what was thrown: an error's message, a thrown
    /// string, or CDP's text for it.
    pub fn summary(&self) -> &str {
        let msg =
            self.description.as_deref().or_else(|| self.thrown.as_ref().and_then(Value::as_str)).unwrap_or(&self.text);
        msg.lines().next().unwrap_or(msg)
    }
}

/// Why a page operation produced no result.
#[derive(Debug, Error)]
pub enum DriveError {
    /// The protocol answered the command with an error.
    #[error("{method}: {}", .error.message)]
    Protocol {
        /// The command refused.
        method: Method,
        /// The protocol's error.
        error: CdpError,
    },
    /// No reply came within the deadline.
    #[error("{method}: no DevTools reply within {timeout:?}")]
    Timeout {
        /// The command that went unanswered.
        method: Method,
        /// How long it was waited for.
        timeout: Duration,
    },
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The page's script threw.
    #[error("page script failed: {0}")]
    Script(#[from] ScriptError),
    /// A command's parameters could not be written.
    #[error("{method}: cannot write the parameters: {source}")]
    Encode {
        /// The command.
        method: Method,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// A reply (or a script's value) did not have the shape asked for.
    #[error("{method}: unexpected reply: {source}")]
    Decode {
        /// The command whose reply it was.
        method: Method,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// A screenshot's data was not base64.
    #[error("screenshot data: {0}")]
    Screenshot(#[from] base64::DecodeError),
}

impl DriveError {
    /// The error a page without `method` answers with (what Chromium says for an unknown method).
    pub fn unsupported(method: Method) -> Self {
        DriveError::Protocol {
            method,
            error: CdpError { code: -32601, message: format!("'{method}' wasn't found"), data: None },
        }
    }

    /// Whether the page answered, with a refusal or a thrown script (the
    /// transport works; the next command may well succeed).
    pub fn is_answer(&self) -> bool {
        matches!(self, DriveError::Protocol { .. } | DriveError::Script(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thrown(description: Option<&str>, thrown: Option<Value>) -> ScriptError {
        ScriptError { text: "Uncaught".into(), line: 0, column: 0, description: description.map(str::to_owned), thrown }
    }

    #[test]
    fn a_script_error_says_the_first_line_of_what_was_thrown() {
        let e = thrown(Some("Error: boom\n    at <anonymous>:1:7"), None);
        assert_eq!(e.to_string(), "Error: boom");
        assert_eq!(DriveError::from(e).to_string(), "page script failed: Error: boom");
        assert_eq!(thrown(None, Some(Value::String("plain".into()))).summary(), "plain");
        assert_eq!(thrown(None, Some(Value::from(42))).summary(), "Uncaught", "a number is not a message");
        assert_eq!(thrown(None, None).summary(), "Uncaught");
    }

    #[test]
    fn errors_read_as_the_devtools_channel_words_them() {
        let e = DriveError::Timeout { method: Method::Evaluate, timeout: Duration::from_secs(10) };
        assert_eq!(e.to_string(), "Runtime.evaluate: no DevTools reply within 10s");
        let e = DriveError::unsupported(Method::GetBoxModel);
        assert_eq!(e.to_string(), "DOM.getBoxModel: 'DOM.getBoxModel' wasn't found");
        assert!(e.is_answer());
        assert!(!DriveError::Transport(TransportError::Gone).is_answer());
    }
}
