//! One request/reply exchange with a guest over a temporary subscription:
//! learning a page's real target info, forwarding profile-wide commands.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::guest::{GuestChannel, GuestError, GuestSink, SinkEvent};
use crate::ids::MessageIds;
use crate::protocol::{self, GuestEnvelope};

/// How long a guest may take to answer an internal request.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// Why an exchange with a guest failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The channel refused the message.
    #[error("could not send to the browser: {0}")]
    Send(#[source] GuestError),
    /// The guest crashed or went away before answering.
    #[error("the browser went away")]
    Gone,
    /// No answer within [`CALL_TIMEOUT`].
    #[error("the browser did not answer in time")]
    Timeout,
    /// The guest answered with a CDP error (raw JSON of the error object).
    #[error("the browser answered with an error")]
    Remote(String),
    /// The answer did not have the expected shape.
    #[error("unexpected answer from the browser: {0}")]
    Malformed(#[source] serde_json::Error),
    /// The guest described itself without a target id.
    #[error("unexpected answer from the browser: empty targetId")]
    EmptyTargetId,
}

/// A page target as the guest describes itself.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct PageInfo {
    /// The real CDP target id (the main frame id).
    #[serde(rename = "targetId")]
    pub target_id: String,
    /// Document title.
    #[serde(default)]
    pub title: String,
    /// Current URL.
    #[serde(default)]
    pub url: String,
    /// The engine's own id of its browser context (to place the workers it reports).
    #[serde(rename = "browserContextId", default)]
    pub engine_context: Option<String>,
}

/// Sends `method` to the guest root and waits for its reply; returns the raw `result`.
pub(crate) async fn call(
    channel: &Arc<dyn GuestChannel>,
    ids: &MessageIds,
    method: &str,
    params: Option<&RawValue>,
) -> Result<Box<RawValue>, CallError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let active = Arc::new(AtomicBool::new(true));
    // Deactivate on every exit path so the app can prune the sink.
    let _guard = Deactivate(active.clone());
    channel.subscribe(GuestSink::new(0, tx, active));
    let id = ids.next();
    channel.send(&protocol::command(id, method, params, None)).map_err(CallError::Send)?;
    let wait = async {
        while let Some((_, event)) = rx.recv().await {
            match event {
                SinkEvent::Gone => return Err(CallError::Gone),
                SinkEvent::Message(text) => {
                    let Some(env) = GuestEnvelope::parse(&text) else { continue };
                    if env.id != Some(id) || env.session_id.is_some() {
                        continue;
                    }
                    if let Some(err) = env.error {
                        return Err(CallError::Remote(err.get().to_string()));
                    }
                    let result = env.result.map(|r| r.get()).unwrap_or("{}");
                    return RawValue::from_string(result.to_string()).map_err(CallError::Malformed);
                }
            }
        }
        Err(CallError::Gone)
    };
    tokio::time::timeout(CALL_TIMEOUT, wait).await.unwrap_or(Err(CallError::Timeout))
}

/// Learns a guest page's real target id, title and URL with `Target.getTargetInfo`.
pub(crate) async fn page_info(channel: &Arc<dyn GuestChannel>, ids: &MessageIds) -> Result<PageInfo, CallError> {
    #[derive(Deserialize)]
    struct Reply {
        #[serde(rename = "targetInfo")]
        target_info: PageInfo,
    }
    let raw = call(channel, ids, "Target.getTargetInfo", None).await?;
    let reply: Reply = serde_json::from_str(raw.get()).map_err(CallError::Malformed)?;
    if reply.target_info.target_id.is_empty() {
        return Err(CallError::EmptyTargetId);
    }
    Ok(reply.target_info)
}

struct Deactivate(Arc<AtomicBool>);

impl Drop for Deactivate {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::Release);
    }
}
