//! Session names: a node's tmux session and snapshot file stem.

use crate::model::NodeId;
use std::path::Path;

/// 64-bit FNV-1a: stable across runs and builds (unlike std's hasher).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter().chain(&[0u8]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The session name of a node: its tmux session and snapshot file stem.
/// Deterministic from the project folder and node id (so a restart finds the
/// same session), within tmux's `[A-Za-z0-9_-]{1,64}`; the folder is mixed in
/// because node ids are only unique within a project.
pub fn session_name(project_folder: &Path, node: &NodeId) -> String {
    let id: String =
        node.as_str().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(40).collect();
    let hash = fnv1a(&[project_folder.as_os_str().as_encoded_bytes(), node.as_str().as_bytes()]);
    format!("ts-{id}-{hash:016x}")
}

/// Whether `s` is a usable tmux session name (`[A-Za-z0-9_-]{1,64}`).
pub fn valid_session_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_stable_valid_and_distinct() {
        let a = NodeId::new("term-1").unwrap();
        let b = NodeId::new("term-2").unwrap();
        let long = NodeId::new("x".repeat(128)).unwrap();
        let name = session_name(Path::new("/p/one"), &a);
        assert_eq!(name, session_name(Path::new("/p/one"), &a));
        assert_ne!(name, session_name(Path::new("/p/two"), &a));
        assert_ne!(name, session_name(Path::new("/p/one"), &b));
        for n in [name, session_name(Path::new("/p"), &long)] {
            assert!(valid_session_name(&n), "{n}");
        }
    }

    #[test]
    fn names_are_pinned_across_builds() {
        // FNV-1a of nothing but the separator byte, and a name a restart must find again.
        assert_eq!(fnv1a(&[b""]), 0xaf63_bd4c_8601_b7df);
        let name = session_name(Path::new("/p/one"), &NodeId::new("term-1").unwrap());
        assert!(name.starts_with("ts-term-1-") && name.len() == "ts-term-1-".len() + 16, "{name}");
        let long = session_name(Path::new("/p"), &NodeId::new("x".repeat(128)).unwrap());
        assert_eq!(long.len(), 3 + 40 + 1 + 16, "the id part is capped at 40 characters");
    }

    #[test]
    fn valid_session_names_follow_tmux_rules() {
        for good in ["a", "ts-x_1", &"a".repeat(64)] {
            assert!(valid_session_name(good), "{good}");
        }
        for bad in ["", "a b", "a.b", "a:b", "é", &"a".repeat(65)] {
            assert!(!valid_session_name(bad), "{bad}");
        }
    }
}
