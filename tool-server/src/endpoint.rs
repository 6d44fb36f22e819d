//! [`Endpoint`]: where a running tool server listens, as written to and read
//! from `endpoint.json` (by the server, its invoker and the client).

use serde::{Deserialize, Serialize};

/// The endpoint file inside `agent-tools/`.
pub(crate) const ENDPOINT_FILE: &str = "endpoint.json";

/// Where a running server listens; the content of `endpoint.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// `http://127.0.0.1:<port>`; calls go to `<url>/call`.
    pub url: String,
    /// Random id of this server instance.
    pub instance_id: String,
}
