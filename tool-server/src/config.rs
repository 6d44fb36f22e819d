//! [`ServerConfig`]: the tool server's tunables (timeouts and limits), read by
//! the server and its HTTP transport.

use std::time::Duration;

/// Tunables; the defaults are the contract's values, tests shorten them.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Deadline for a request's headers, and for its body once headers are in (15 s).
    pub request_timeout: Duration,
    /// Largest accepted request body in bytes (128 KiB).
    pub max_body_bytes: usize,
    /// Most simultaneous connections; at the cap a new one replaces the connection idle the longest.
    pub max_connections: usize,
    /// Safety net for one queued operation: if the host's `execute` has not
    /// resolved by then it is abandoned so the project queue moves on (60 s;
    /// the host's own deadlines, such as the 10 s canvas acknowledgement, are shorter).
    pub operation_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            request_timeout: Duration::from_secs(15),
            max_body_bytes: 128 * 1024,
            max_connections: 256,
            operation_timeout: Duration::from_secs(60),
        }
    }
}
