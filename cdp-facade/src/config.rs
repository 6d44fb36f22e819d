//! [`FacadeConfig`]: the facade's settings (debug logging, the incoming
//! message cap). A leaf.

/// Default cap on one incoming WebSocket message (screenshots are replies, so they are not affected).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Facade settings.
#[derive(Clone, Debug)]
pub struct FacadeConfig {
    /// Log CDP method names and ids (never payloads) at info level.
    pub debug: bool,
    /// Largest accepted incoming WebSocket message; bigger ones close the connection with 1009.
    pub max_message_bytes: usize,
}

impl Default for FacadeConfig {
    fn default() -> Self {
        Self { debug: false, max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES }
    }
}

impl FacadeConfig {
    /// Defaults, with `debug` on when `TERMSPRAWL_FACADE_DEBUG=1`.
    pub fn from_env() -> Self {
        Self { debug: std::env::var("TERMSPRAWL_FACADE_DEBUG").is_ok_and(|v| v == "1"), ..Self::default() }
    }
}
