//! What termsprawl's loopback servers and private state files share, defined
//! once: the `Host`/`Origin` guard, the bearer [`Token`], [`hex`] encoding,
//! OS randomness, and private atomic [`files`]. It must NOT know about any
//! server, session or file format: it takes headers, bytes and paths.
//!
//! # The loopback rule
//!
//! Both HTTP servers (the agent tool server and the CDP facade with its agent
//! control server) listen on 127.0.0.1 only, and [`host_allowed`] decides
//! whether a request names *this* server, which is what defeats DNS
//! rebinding (a page on `evil.example` resolved to 127.0.0.1 still sends
//! `Host: evil.example`). A request passes when:
//!
//! - it has exactly one `Host` header (RFC 9112 §3.2 makes two a bad request,
//!   and none at all, as HTTP/1.0 may send, names nothing);
//! - its value, without surrounding spaces or tabs, is `NAME:PORT` where NAME
//!   is `127.0.0.1`, `localhost` or `[::1]` compared case-insensitively (host
//!   names are case-insensitive, RFC 3986 §3.2.2), and PORT is the server's
//!   port in plain decimal (no sign, no leading zero: no client writes one);
//! - everything else is refused: other names (`localhost.`, `127.0.0.2`,
//!   `0x7f.1`, `2130706433`, `::1` without brackets), a missing or different
//!   port, bytes that are not visible ASCII.
//!
//! [`from_browser`] is the other half: browsers always send `Origin` on
//! cross-origin POSTs and WebSocket handshakes, agent CLIs and CDP clients
//! never do, so a request with one is refused wherever pages must not reach.
//! [`own_loopback_origin`] is the one exception, for MCP clients: an `Origin`
//! that is exactly `http://NAME:PORT` for this server (NAME as above), which
//! no page can send, since these servers serve no pages.

#![warn(missing_docs)]

pub mod files;
pub mod hex;
mod loopback;
mod random;
mod token;

pub use files::FileError;
pub use loopback::{from_browser, host_allowed, own_loopback_origin};
pub use random::{fill_random, random_uuid, RandomError};
pub use token::{InvalidToken, Token, TOKEN_LEN};
