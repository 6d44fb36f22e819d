//! HTTP discovery of the virtual browser: `/json/version` and `/json/list`
//! (both with and without a trailing slash, `/json` being `/json/list`).

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use crate::guest_call;
use crate::http_access::{self, Body};
use crate::shared::Shared;

/// Serves one discovery request (Host already checked).
pub(crate) async fn handle(shared: &Arc<Shared>, req: &Request<Incoming>) -> Response<Body> {
    if !http_access::authorized(&shared.token, req.headers(), req.uri(), true) {
        return http_access::json_error(StatusCode::UNAUTHORIZED, "unauthorized");
    }
    if req.method() != Method::GET && req.method() != Method::PUT {
        return http_access::json_error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    }
    match req.uri().path() {
        "/json/version" | "/json/version/" => http_access::json(StatusCode::OK, &version(shared)),
        "/json/list" | "/json/list/" | "/json" | "/json/" => {
            http_access::json(StatusCode::OK, &Value::Array(list(shared).await))
        }
        _ => http_access::json_error(StatusCode::NOT_FOUND, "not found"),
    }
}

fn version(shared: &Shared) -> Value {
    let v = shared.env.guests.version();
    let mut out = json!({
        "Browser": v.product,
        "Protocol-Version": "1.3",
        "User-Agent": v.user_agent,
        "webSocketDebuggerUrl": shared.browser_ws_url(),
    });
    if !v.js_version.is_empty() {
        out["V8-Version"] = Value::String(v.js_version);
    }
    out
}

/// One entry per live guest that answers on its DevTools channel (guests that do not are left out).
async fn list(shared: &Arc<Shared>) -> Vec<Value> {
    let guests = &shared.env.guests;
    let probes = guests.list().into_iter().filter_map(|id| {
        let channel = guests.channel(&id)?;
        (!channel.crashed()).then(|| {
            let shared = shared.clone();
            async move { guest_call::page_info(&channel, &shared.env.message_ids).await.ok() }
        })
    });
    let infos = futures_util::future::join_all(probes).await;
    infos
        .into_iter()
        .flatten()
        .map(|info| {
            json!({
                "description": "",
                "id": info.target_id,
                "title": info.title,
                "type": "page",
                "url": info.url,
            })
        })
        .collect()
}
