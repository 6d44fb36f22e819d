//! Navigation URL policy: the one place that decides what a browser node may load.
//!
//! What a person or an agent types becomes an absolute web URL (a bare host
//! gets `https://`, a loopback host `http://`), and only `http`, `https` and
//! `about:blank` are ever navigable. Everything that can run code outside a web
//! origin's sandbox or read local state (`javascript:`, `file:`, `data:`,
//! `chrome:`, `devtools:`, `view-source:`, custom schemes) is refused.

use thiserror::Error;
use url::Url;

/// The blank page every new browser node starts from.
pub const ABOUT_BLANK: &str = "about:blank";

/// Why an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UrlPolicyError {
    /// Nothing but whitespace was given where an address was required.
    #[error("empty address")]
    Empty,
    /// The text has whitespace or control characters inside, so it is no address.
    #[error("malformed address: {0}")]
    Malformed(String),
    /// The text does not parse as a URL, with its scheme or the one added.
    #[error("malformed address: {address}: {source}")]
    Unparsable {
        /// The text (its first 200 characters).
        address: String,
        /// Why the URL parser refused it.
        #[source]
        source: url::ParseError,
    },
    /// The URL parses but its scheme is not navigable.
    #[error("refused scheme '{0}': only http, https and about:blank are allowed")]
    RefusedScheme(String),
    /// A web URL without a host (e.g. `http:///x`).
    #[error("address has no host")]
    NoHost,
}

/// Turns typed text into a navigable absolute URL, or says why it cannot.
///
/// Bare hosts (`example.com`, `localhost:8080/x`, `127.0.0.1`) become `https://`
/// URLs, except loopback hosts, which become `http://` (local dev servers rarely
/// speak TLS). Text with an explicit scheme keeps it and must pass
/// [`is_allowed_nav_url`].
pub fn normalize_address(raw: &str) -> Result<String, UrlPolicyError> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(UrlPolicyError::Empty);
    }
    if text.eq_ignore_ascii_case(ABOUT_BLANK) {
        return Ok(ABOUT_BLANK.to_string());
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlPolicyError::Malformed(truncate(text)));
    }
    match explicit_scheme(text) {
        Some(scheme) => {
            let url = Url::parse(text).map_err(|source| unparsable(text, source))?;
            check(&url).map_err(|e| match e {
                UrlPolicyError::RefusedScheme(_) => UrlPolicyError::RefusedScheme(scheme),
                other => other,
            })?;
            Ok(url.to_string())
        }
        None => {
            let scheme = if is_loopback_host(text) { "http" } else { "https" };
            let url = Url::parse(&format!("{scheme}://{text}")).map_err(|source| unparsable(text, source))?;
            check(&url)?;
            Ok(url.to_string())
        }
    }
}

/// True when an absolute URL may be loaded in a browser node's main frame.
pub fn is_allowed_nav_url(url: &str) -> bool {
    Url::parse(url).map(|u| check(&u).is_ok()).unwrap_or(false)
}

fn check(url: &Url) -> Result<(), UrlPolicyError> {
    match url.scheme() {
        "http" | "https" => {
            if url.host_str().is_none_or(str::is_empty) {
                Err(UrlPolicyError::NoHost)
            } else {
                Ok(())
            }
        }
        "about" if url.as_str() == ABOUT_BLANK => Ok(()),
        other => Err(UrlPolicyError::RefusedScheme(other.to_string())),
    }
}

/// The scheme of `text` when it starts with one (`scheme:`), as opposed to a bare
/// `host:port`. `localhost:3000` has no scheme; `javascript:alert(1)` has.
fn explicit_scheme(text: &str) -> Option<String> {
    let colon = text.find(':')?;
    let (scheme, rest) = (&text[..colon], &text[colon + 1..]);
    let valid = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid {
        return None;
    }
    // `host:8080` or `host:8080/path` is a bare host with a port, not a scheme.
    let port_like =
        rest.split(['/', '?', '#']).next().is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    if port_like && !rest.starts_with("//") {
        return None;
    }
    Some(scheme.to_ascii_lowercase())
}

fn is_loopback_host(text: &str) -> bool {
    let host = text.split(['/', '?', '#']).next().unwrap_or("");
    let host =
        host.rsplit_once(':').map_or(host, |(h, port)| if port.chars().all(|c| c.is_ascii_digit()) { h } else { host });
    host.eq_ignore_ascii_case("localhost") || host.starts_with("127.") || host == "[::1]"
}

fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}

fn unparsable(text: &str, source: url::ParseError) -> UrlPolicyError {
    UrlPolicyError::Unparsable { address: truncate(text), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_table() {
        let ok: &[(&str, &str)] = &[
            ("example.com", "https://example.com/"),
            ("  example.com/path?q=1  ", "https://example.com/path?q=1"),
            ("https://example.com", "https://example.com/"),
            ("HTTP://Example.COM/A", "http://example.com/A"),
            ("localhost:8080", "http://localhost:8080/"),
            ("localhost:8080/x", "http://localhost:8080/x"),
            ("127.0.0.1:3000/app", "http://127.0.0.1:3000/app"),
            ("[::1]:9000", "http://[::1]:9000/"),
            ("about:blank", "about:blank"),
            ("ABOUT:BLANK", "about:blank"),
            ("sub.example.co.uk:8443/x#frag", "https://sub.example.co.uk:8443/x#frag"),
        ];
        for (input, want) in ok {
            assert_eq!(normalize_address(input).as_deref(), Ok(*want), "input {input:?}");
        }
        let refused: &[(&str, UrlPolicyError)] = &[
            ("", UrlPolicyError::Empty),
            ("   ", UrlPolicyError::Empty),
            ("javascript:alert(1)", UrlPolicyError::RefusedScheme("javascript".into())),
            ("JavaScript:alert(1)", UrlPolicyError::RefusedScheme("javascript".into())),
            ("file:///etc/passwd", UrlPolicyError::RefusedScheme("file".into())),
            ("data:text/html,<b>x</b>", UrlPolicyError::RefusedScheme("data".into())),
            ("chrome://settings", UrlPolicyError::RefusedScheme("chrome".into())),
            ("devtools://devtools/bundled/inspector.html", UrlPolicyError::RefusedScheme("devtools".into())),
            ("view-source:https://example.com", UrlPolicyError::RefusedScheme("view-source".into())),
            ("myapp://open?x=1", UrlPolicyError::RefusedScheme("myapp".into())),
            ("about:config", UrlPolicyError::RefusedScheme("about".into())),
            ("ftp://example.com", UrlPolicyError::RefusedScheme("ftp".into())),
            ("blob:https://example.com/uuid", UrlPolicyError::RefusedScheme("blob".into())),
        ];
        for (input, want) in refused {
            assert_eq!(normalize_address(input).as_ref(), Err(want), "input {input:?}");
        }
        for bad in ["exa mple.com", "http://", "http://[::1", "http://exa\u{0}mple.com", "https://a b"] {
            assert!(normalize_address(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn an_unparsable_address_keeps_the_parser_s_error_as_its_source() {
        let err = normalize_address("http://").unwrap_err();
        assert_eq!(err, UrlPolicyError::Unparsable { address: "http://".into(), source: url::ParseError::EmptyHost });
        assert_eq!(err.to_string(), "malformed address: http://: empty host");
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source, Some(url::ParseError::EmptyHost.to_string()));
        let spaced = normalize_address("exa mple.com").unwrap_err();
        assert_eq!(spaced.to_string(), "malformed address: exa mple.com");
        assert!(std::error::Error::source(&spaced).is_none(), "whitespace is its own reason, no parser's");
    }

    #[test]
    fn allowed_nav_table() {
        for url in ["http://a.test/", "https://a.test/x", "about:blank", "http://127.0.0.1:1/"] {
            assert!(is_allowed_nav_url(url), "{url}");
        }
        for url in [
            "javascript:void(0)",
            "file:///tmp/x",
            "data:,x",
            "chrome://gpu",
            "devtools://x",
            "view-source:http://a.test/",
            "custom://x",
            "about:srcdoc",
            "not a url",
            "",
        ] {
            assert!(!is_allowed_nav_url(url), "{url}");
        }
    }
}
