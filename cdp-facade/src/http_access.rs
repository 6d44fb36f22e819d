//! Request gates shared by both HTTP servers: token extraction and JSON
//! responses (the Host check is [`local_guard::host_allowed`]).

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Response, StatusCode, Uri};

use local_guard::Token;

/// Response body type of both servers.
pub(crate) type Body = Full<Bytes>;

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
    if bearer(headers).is_some_and(|t| token.matches(t.as_bytes())) {
        return true;
    }
    allow_query && query_token(uri).is_some_and(|t| token.matches(t.as_bytes()))
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
    fn token_from_bearer_or_query() {
        let t = Token::generate().unwrap();
        let uri: Uri = format!("/json/version?token={}", t.expose()).parse().unwrap();
        assert!(authorized(&t, &HeaderMap::new(), &uri, true));
        assert!(!authorized(&t, &HeaderMap::new(), &uri, false));
        let h = headers(&[("authorization", &format!("Bearer {}", t.expose()))]);
        assert!(authorized(&t, &h, &"/".parse().unwrap(), false));
        let h = headers(&[("authorization", &format!("Basic {}", t.expose()))]);
        assert!(!authorized(&t, &h, &"/".parse().unwrap(), true));
        assert!(!authorized(&t, &HeaderMap::new(), &"/x?token=abc".parse().unwrap(), true));
    }
}
