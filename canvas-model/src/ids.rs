//! Identifiers: nodes, browser tabs, projects, and the `nodeId::tabId`
//! address that names one browser tab across the app (cef-bridge registry,
//! CDP facade, tool server). A leaf of the model: its own [`IdError`] turns
//! into a [`super::ModelError`] where a command refuses an id.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Why text is not a valid id or tab address.
///
/// [`super::ModelError`] carries it as it is (`ModelError::Id`, same message).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IdError {
    /// An id does not match `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`.
    #[error("invalid {kind} id {value:?}: expected 1-128 characters [a-zA-Z0-9_-], starting with a letter or digit")]
    InvalidId {
        /// Which kind of id (node, tab, project).
        kind: &'static str,
        /// The offending text.
        value: String,
    },
    /// A browser tab address is not `nodeId::tabId`.
    #[error("invalid tab address {0:?}: expected nodeId::tabId")]
    InvalidTabAddress(String),
}

/// Longest id accepted (the tool server's node id rule).
pub const MAX_ID_LEN: usize = 128;

/// Whether `s` matches `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`.
pub fn is_valid_id(s: &str) -> bool {
    let bytes = s.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.len() <= MAX_ID_LEN && bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// A random-looking suffix: a process-wide counter mixed with the clock and
/// a randomly keyed hasher. Ids outlive the process (session files, browser
/// ownership), so a restart must not hand out an id a deleted node once had;
/// a plain counter would.
fn random_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    h.write_u128(nanos);
    h.write_u32(std::process::id());
    base36(h.finish())
}

/// Formats `n` in lowercase base 36.
fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::with_capacity(13);
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    // Only ASCII digits were pushed.
    String::from_utf8_lossy(&out).into_owned()
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates `s` as an id.
            pub fn new(s: impl Into<String>) -> Result<Self, IdError> {
                let s = s.into();
                if is_valid_id(&s) {
                    Ok(Self(s))
                } else {
                    Err(IdError::InvalidId { kind: $kind, value: s })
                }
            }

            /// A fresh id, `<prefix>-<random base36>`.
            pub fn generate() -> Self {
                Self(format!("{}-{}", $prefix, random_suffix()))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                Self::new(s)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

id_type!(
    /// Identifies a node on a canvas; also the agent tool identity's `nodeId`.
    NodeId,
    "node",
    "n"
);
id_type!(
    /// Identifies one tab of a browser node (unique within that node).
    TabId,
    "tab",
    "t"
);
id_type!(
    /// Identifies an open project (a canvas tab).
    ProjectId,
    "project",
    "p"
);

id_type!(
    /// Identifies an isolated browser context (a CDP client's
    /// `Target.createBrowserContext`): an in-memory profile whose pages are
    /// browser nodes marked with it, never saved.
    BrowserContextId,
    "browser context",
    "ctx"
);

/// One browser tab, addressed as `nodeId::tabId`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TabAddress {
    /// The browser node.
    pub node: NodeId,
    /// The tab within it.
    pub tab: TabId,
}

/// The separator between node and tab in a tab address.
pub const TAB_SEPARATOR: &str = "::";

impl TabAddress {
    /// Builds an address from its parts.
    pub fn new(node: NodeId, tab: TabId) -> Self {
        Self { node, tab }
    }

    /// Parses `nodeId::tabId`; both parts must be valid ids.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        let (node, tab) = s.split_once(TAB_SEPARATOR).ok_or_else(|| IdError::InvalidTabAddress(s.to_owned()))?;
        let bad = |_| IdError::InvalidTabAddress(s.to_owned());
        Ok(Self { node: NodeId::new(node).map_err(bad)?, tab: TabId::new(tab).map_err(bad)? })
    }
}

impl fmt::Display for TabAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.node, TAB_SEPARATOR, self.tab)
    }
}

impl FromStr for TabAddress {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_rule_matches_the_tool_server_pattern() {
        assert!(is_valid_id("a"));
        assert!(is_valid_id("0node_1-x"));
        assert!(is_valid_id(&"a".repeat(128)));
        assert!(!is_valid_id(&"a".repeat(129)));
        assert!(!is_valid_id(""));
        assert!(!is_valid_id("-a"));
        assert!(!is_valid_id("_a"));
        assert!(!is_valid_id("a b"));
        assert!(!is_valid_id("a:b"));
        assert!(!is_valid_id("é"));
        assert!(matches!(NodeId::new("x/y"), Err(IdError::InvalidId { kind: "node", .. })));
    }

    #[test]
    fn generated_ids_are_valid_prefixed_and_distinct() {
        let ids: std::collections::BTreeSet<_> = (0..1000).map(|_| NodeId::generate()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert!(id.as_str().starts_with("n-"), "{id}");
            assert!(is_valid_id(id.as_str()));
        }
        assert!(TabId::generate().as_str().starts_with("t-"));
        assert!(ProjectId::generate().as_str().starts_with("p-"));
    }

    #[test]
    fn base36_formats() {
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        assert_eq!(base36(u64::MAX), "3w5e11264sgsf");
    }

    #[test]
    fn tab_address_round_trips_and_rejects_garbage() {
        let a = TabAddress::parse("n-1::t-2").unwrap();
        assert_eq!(a.node.as_str(), "n-1");
        assert_eq!(a.tab.as_str(), "t-2");
        assert_eq!(a.to_string(), "n-1::t-2");
        assert_eq!("n-1::t-2".parse::<TabAddress>().unwrap(), a);
        for bad in ["n-1", "n-1::", "::t", "n-1:t", "n 1::t", "n::t::u"] {
            assert!(matches!(TabAddress::parse(bad), Err(IdError::InvalidTabAddress(_))), "{bad}");
        }
    }

    #[test]
    fn ids_deserialize_through_validation() {
        let ok: NodeId = serde_json::from_str("\"abc\"").unwrap();
        assert_eq!(ok.as_str(), "abc");
        assert!(serde_json::from_str::<NodeId>("\"../etc\"").is_err());
        assert_eq!(serde_json::to_string(&ok).unwrap(), "\"abc\"");
    }
}
