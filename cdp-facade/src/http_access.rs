//! Request gates shared by both HTTP servers: Host check, token extraction,
//! JSON responses.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Response, StatusCode, Uri};

use crate::token::Token;

/// Response body type of both servers.
pub(crate) type Body = Full<Bytes>;

/// Whether `Host` names this loopback server (`127.0.0.1`, `localhost` or `[::1]`, with our port).
///
/// Rejecting other hosts defeats DNS rebinding: a page on `evil.example`
/// resolving to 127.0.0.1 still sends `Host: evil.example`.
pub(crate) fn host_allowed(headers: &HeaderMap, port: u16) -> bool {
    let Some(host) = headers.get(HOST).and_then(|h| h.to_str().ok()) else { return false };
    let host = host.trim().to_ascii_lowercase();
    let Some((name, host_port)) = host.rsplit_once(':') else { return false };
    host_port.parse::<u16>().ok() == Some(port) && matches!(name, "127.0.0.1" | "localhost" | "[::1]")
}

/// The token of an `Authorization: Bearer <token>` header, if any.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The `token` query parameter, percent-decoded.
pub(crate) fn query_token(uri: &Uri) -> Option<String> {
    let query = uri.query()?;
    url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "token").map(|(_, v)| v.into_owned())
}

/// Whether the request presents the token, as a Bearer header or (if `allow_query`) `?token=`.
pub(crate) fn authorized(token: &Token, headers: &HeaderMap, uri: &Uri, allow_query: bool) -> bool {
    if bearer(headers).is_some_and(|t| token.matches(t)) {
        return true;
    }
    allow_query && query_token(uri).is_some_and(|t| token.matches(&t))
}

/// A JSON response with `Cache-Control: no-store`.
pub(crate) fn json(status: StatusCode, body: &serde_json::Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json; charset=UTF-8"));
    headers.insert("cache-control", HeaderValue::from_static("no-store"));
    response
}

/// `{ok:false, error}` with the given status.
pub(crate) fn json_error(status: StatusCode, error: &str) -> Response<Body> {
    json(status, &serde_json::json!({"ok": false, "error": error}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn host_must_be_loopback_with_our_port() {
        for ok in ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000"] {
            assert!(host_allowed(&headers(&[("host", ok)]), 8000), "{ok}");
        }
        for bad in ["127.0.0.1", "127.0.0.1:8001", "evil.example:8000", "127.0.0.2:8000", "[::2]:8000", ":8000"] {
            assert!(!host_allowed(&headers(&[("host", bad)]), 8000), "{bad}");
        }
        assert!(!host_allowed(&HeaderMap::new(), 8000));
    }

    #[test]
    fn token_from_bearer_or_query() {
        let t = Token::generate().unwrap();
        let uri: Uri = format!("/json/version?token={}", t.as_str()).parse().unwrap();
        assert!(authorized(&t, &HeaderMap::new(), &uri, true));
        assert!(!authorized(&t, &HeaderMap::new(), &uri, false));
        let h = headers(&[("authorization", &format!("Bearer {}", t.as_str()))]);
        assert!(authorized(&t, &h, &"/".parse().unwrap(), false));
        let h = headers(&[("authorization", &format!("Basic {}", t.as_str()))]);
        assert!(!authorized(&t, &h, &"/".parse().unwrap(), true));
        assert!(!authorized(&t, &HeaderMap::new(), &"/x?token=abc".parse().unwrap(), true));
    }
}
