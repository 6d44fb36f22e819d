//! The loopback `Host` and `Origin` checks (the rule is in the crate doc).

use http::header::{HeaderMap, HOST, ORIGIN};

/// The names a loopback server answers to, compared case-insensitively.
const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Whether the request's `Host` names this loopback server on `port`: exactly
/// one `Host` header, `127.0.0.1`, `localhost` or `[::1]` in any case, and
/// `:port` in plain decimal.
pub fn host_allowed(headers: &HeaderMap, port: u16) -> bool {
    let mut hosts = headers.get_all(HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else { return false };
    let Ok(host) = host.to_str() else { return false };
    let host = host.trim_matches([' ', '\t']);
    let Some((name, host_port)) = host.rsplit_once(':') else { return false };
    // itoa writes on the stack: this check runs on every request.
    host_port == itoa::Buffer::new().format(port) && LOOPBACK_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Whether the request came from a web page: it carries an `Origin` header
/// (any value, even empty or `null`), which browsers send and other clients do not.
pub fn from_browser(headers: &HeaderMap) -> bool {
    headers.contains_key(ORIGIN)
}

/// Whether the request carries exactly one `Origin` naming this loopback
/// server itself: `http://NAME:PORT` with NAME as [`host_allowed`] takes it.
pub fn own_loopback_origin(headers: &HeaderMap, port: u16) -> bool {
    let mut origins = headers.get_all(ORIGIN).iter();
    let (Some(origin), None) = (origins.next(), origins.next()) else { return false };
    let Some(authority) = origin.as_bytes().strip_prefix(b"http://") else { return false };
    let Some(split) = authority.iter().rposition(|&b| b == b':') else { return false };
    let (name, origin_port) = (&authority[..split], &authority[split + 1..]);
    origin_port == itoa::Buffer::new().format(port).as_bytes()
        && LOOPBACK_NAMES.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with_hosts(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(HOST, HeaderValue::from_bytes(v).unwrap());
        }
        h
    }

    fn allowed(host: &str) -> bool {
        host_allowed(&with_hosts(&[host.as_bytes()]), 8000)
    }

    #[test]
    fn loopback_names_with_our_port_pass_in_any_case() {
        for ok in
            ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "LocalHost:8000", "[::1]:8000", " 127.0.0.1:8000\t"]
        {
            assert!(allowed(ok), "{ok:?}");
        }
    }

    #[test]
    fn other_names_ports_and_forms_are_refused() {
        for bad in [
            "127.0.0.1",
            "localhost",
            "[::1]",
            "127.0.0.1:8001",
            "127.0.0.1:800",
            "127.0.0.1:08000",
            "127.0.0.1:+8000",
            "127.0.0.1:",
            "localhost:8000:8000",
            ":8000",
            "evil.example:8000",
            "127.0.0.1.nip.io:8000",
            "localhost.:8000",
            "127.0.0.2:8000",
            "0.0.0.0:8000",
            "0x7f.1:8000",
            "2130706433:8000",
            "[::2]:8000",
            "::1:8000",
            "[::1]8000",
            "",
        ] {
            assert!(!allowed(bad), "{bad:?}");
        }
    }

    #[test]
    fn missing_duplicate_or_non_ascii_host_is_refused() {
        assert!(!host_allowed(&HeaderMap::new(), 8000));
        assert!(!host_allowed(&with_hosts(&[b"127.0.0.1:8000", b"127.0.0.1:8000"]), 8000));
        assert!(!host_allowed(&with_hosts(&[b"127.0.0.1:8000", b"evil.example:8000"]), 8000));
        assert!(!host_allowed(&with_hosts(&[b"l\xf6calhost:8000"]), 8000));
    }

    #[test]
    fn the_port_is_the_servers_own() {
        assert!(host_allowed(&with_hosts(&[b"localhost:1"]), 1));
        assert!(host_allowed(&with_hosts(&[b"localhost:65535"]), 65535));
        assert!(!host_allowed(&with_hosts(&[b"localhost:1"]), 8000));
    }

    #[test]
    fn only_our_own_loopback_origin_is_our_own() {
        let origin = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(ORIGIN, HeaderValue::from_str(v).unwrap());
            }
            own_loopback_origin(&h, 8000)
        };
        for ok in ["http://127.0.0.1:8000", "http://localhost:8000", "http://LOCALHOST:8000", "http://[::1]:8000"] {
            assert!(origin(&[ok]), "{ok:?}");
        }
        for bad in [
            "http://127.0.0.1:8001",
            "http://127.0.0.1",
            "https://127.0.0.1:8000",
            "http://evil.example:8000",
            "http://127.0.0.1:8000/",
            "http://user@127.0.0.1:8000",
            "null",
            "",
        ] {
            assert!(!origin(&[bad]), "{bad:?}");
        }
        assert!(!origin(&[]));
        assert!(!origin(&["http://127.0.0.1:8000", "http://127.0.0.1:8000"]));
    }

    #[test]
    fn any_origin_marks_a_browser() {
        assert!(!from_browser(&HeaderMap::new()));
        for value in ["http://127.0.0.1:8000", "null", ""] {
            let mut h = HeaderMap::new();
            h.insert(ORIGIN, HeaderValue::from_str(value).unwrap());
            assert!(from_browser(&h), "{value:?}");
        }
    }
}
