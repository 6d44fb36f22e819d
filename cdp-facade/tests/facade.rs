//! The CDP facade driven over real HTTP and WebSocket connections, with fake
//! guests standing in for CEF browsers.

mod support;

use std::sync::Arc;

use cdp_facade::{
    DownloadBehavior, DownloadEvent, DownloadNotice, DownloadState, Facade, FacadeConfig, GuestChannel, Guests,
    CLOSE_UNAUTHORIZED, FACADE_ID_RANGE,
};
use futures_util::SinkExt;
use local_guard::Token;
use serde_json::{json, Value};
use support::*;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::Message;

fn start(guests: &Arc<FakeGuests>) -> Facade {
    start_with(guests, FacadeConfig::default())
}

fn start_with(guests: &Arc<FakeGuests>, config: FacadeConfig) -> Facade {
    Facade::start(config, Token::generate().unwrap(), guests.clone() as Arc<dyn Guests>).unwrap()
}

fn token_of(facade: &Facade) -> String {
    facade.browser_ws_url().split("token=").nth(1).unwrap().to_string()
}

/// Turns on root auto-attach and returns the page sessions announced before the reply, by target id.
async fn auto_attach(cdp: &mut Cdp) -> Vec<(String, String)> {
    let (reply, before) = cdp
        .call(
            "Target.setAutoAttach",
            Some(json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})),
            None,
        )
        .await;
    assert_eq!(reply["result"], json!({}));
    before
        .iter()
        .filter(|m| m["method"] == "Target.attachedToTarget")
        .map(|m| {
            (
                m["params"]["targetInfo"]["targetId"].as_str().unwrap().to_string(),
                m["params"]["sessionId"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn discovery_needs_token_and_loopback_host() {
    let guests = FakeGuests::new();
    let (_, g1) = guests.add("https://one.test/", false);
    let (_, g2) = guests.add("https://two.test/", false);
    let facade = start(&guests);
    let port = facade.port();
    let token = token_of(&facade);

    assert_eq!(get(port, "/json/version", "").0, 401);
    assert_eq!(get(port, "/json/version?token=wrong", "").0, 401);
    assert_eq!(get(port, "/json/list", "Authorization: Bearer nope\r\n").0, 401);

    for path in ["/json/version", "/json/version/"] {
        let (status, body) = get(port, &format!("{path}?token={token}"), "");
        assert_eq!(status, 200, "{path}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["Browser"], "Chrome/131.0.6778.205");
        assert_eq!(v["Protocol-Version"], "1.3");
        assert_eq!(v["V8-Version"], "13.1.201.22");
        assert!(v["User-Agent"].as_str().unwrap().contains("Chrome/131"));
        assert_eq!(v["webSocketDebuggerUrl"], facade.browser_ws_url());
        assert!(facade.browser_ws_url().starts_with(&format!("ws://127.0.0.1:{port}/devtools/browser/")));
    }
    let (status, _) = get(port, "/json/version", &format!("Authorization: Bearer {token}\r\n"));
    assert_eq!(status, 200);

    for path in ["/json/list", "/json/list/", "/json", "/json/"] {
        let (status, body) = get(port, &format!("{path}?token={token}"), "");
        assert_eq!(status, 200, "{path}");
        let list: Vec<Value> = serde_json::from_str(&body).unwrap();
        let ids: Vec<&str> = list.iter().map(|e| e["id"].as_str().unwrap()).collect();
        assert_eq!(ids, vec![g1.target_id.as_str(), g2.target_id.as_str()]);
        assert!(list.iter().all(|e| e["type"] == "page"));
        assert_eq!(list[0]["url"], "https://one.test/");
    }

    let bad_host = http(
        port,
        &format!("GET /json/version?token={token} HTTP/1.1\r\nHost: evil.test:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(bad_host.0, 403);
    let other_port = http(
        port,
        &format!("GET /json/version?token={token} HTTP/1.1\r\nHost: localhost:1\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(other_port.0, 403);
    assert_eq!(get(port, &format!("/json/protocol?token={token}"), "").0, 404);
    assert_eq!(get(port, "/other", "").0, 404);
    facade.close();
}

#[tokio::test]
async fn websocket_rejects_origin_and_wrong_tokens() {
    let guests = FakeGuests::new();
    let facade = start(&guests);
    let port = facade.port();
    let url = facade.browser_ws_url();
    let path = url.trim_start_matches(&format!("ws://127.0.0.1:{port}"));
    let upgrade = |extra: &str| {
        http(
            port,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
            ),
        )
    };
    assert_eq!(upgrade("Origin: http://127.0.0.1\r\n").0, 403);
    assert_eq!(upgrade("Origin: null\r\n").0, 403);

    let base = url.split('?').next().unwrap().to_string();
    for bad in [base.clone(), format!("{base}?token=0000"), format!("{base}?token=")] {
        let mut cdp = Cdp::connect(&bad).await;
        assert_eq!(cdp.close_code().await, Some(CLOSE_UNAUTHORIZED), "{bad}");
    }
    // Wrong path: plain 404, no upgrade.
    let wrong = format!("ws://127.0.0.1:{port}/devtools/page/X?token={}", token_of(&facade));
    assert!(tokio_tungstenite::connect_async(wrong).await.is_err());

    // The right token works, in the query or as a Bearer header.
    let mut cdp = Cdp::connect(&url).await;
    let (reply, _) = cdp.call("Browser.getVersion", None, None).await;
    assert_eq!(reply["result"]["product"], "Chrome/131.0.6778.205");
    drop(cdp);
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = base.into_client_request().unwrap();
    req.headers_mut().insert("authorization", format!("Bearer {}", token_of(&facade)).parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let mut cdp = Cdp::from_ws(ws);
    let (reply, _) = cdp.call("Target.getBrowserContexts", None, None).await;
    assert_eq!(reply["result"]["defaultBrowserContextId"], facade.browser_context_id());
    facade.close();
}

#[tokio::test]
async fn puppeteer_connect_and_page_lifecycle() {
    let guests = FakeGuests::new();
    let (_, existing) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let ctx = facade.browser_context_id().to_string();
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;

    let (reply, _) = cdp.call("Target.getBrowserContexts", None, None).await;
    assert_eq!(reply["result"], json!({"browserContextIds": [], "defaultBrowserContextId": ctx}));

    let (reply, before) =
        cdp.call("Target.setDiscoverTargets", Some(json!({"discover": true, "filter": [{}]})), None).await;
    assert_eq!(reply["result"], json!({}));
    let created: Vec<&Value> = before.iter().filter(|m| m["method"] == "Target.targetCreated").collect();
    assert_eq!(created.len(), 2, "{before:?}");
    assert_eq!(created[0]["params"]["targetInfo"]["type"], "browser");
    assert_eq!(created[0]["params"]["targetInfo"]["attached"], true);
    let page = &created[1]["params"]["targetInfo"];
    assert_eq!(page["type"], "page");
    assert_eq!(page["targetId"], existing.target_id.as_str());
    assert_eq!(page["browserContextId"], ctx.as_str());

    let (reply, before) = cdp
        .call(
            "Target.setAutoAttach",
            Some(json!({"waitForDebuggerOnStart": true, "flatten": true, "autoAttach": true,
                        "filter": [{"type": "page", "exclude": true}, {}]})),
            None,
        )
        .await;
    assert_eq!(reply["result"], json!({}));
    let attached: Vec<&Value> = before.iter().filter(|m| m["method"] == "Target.attachedToTarget").collect();
    assert_eq!(attached.len(), 1, "existing page attaches before the reply despite exclude:page");
    let p = &attached[0]["params"];
    assert_eq!(p["targetInfo"]["targetId"], existing.target_id.as_str());
    assert_eq!(p["targetInfo"]["type"], "page");
    assert_eq!(p["targetInfo"]["attached"], true);
    assert_eq!(p["targetInfo"]["browserContextId"], ctx.as_str());
    assert_eq!(p["waitingForDebugger"], false);
    assert!(attached[0].get("sessionId").is_none(), "flat: attached at the root");
    let session = p["sessionId"].as_str().unwrap().to_string();

    // Page-session bootstrap, every reply carrying the session id.
    for method in [
        "Network.enable",
        "Page.enable",
        "Page.setLifecycleEventsEnabled",
        "Runtime.enable",
        "Audits.enable",
        "Performance.enable",
        "Log.enable",
        "Page.addScriptToEvaluateOnNewDocument",
        "Page.createIsolatedWorld",
        "Emulation.setDeviceMetricsOverride",
        "Emulation.setTouchEmulationEnabled",
        "Runtime.runIfWaitingForDebugger",
    ] {
        let (reply, _) = cdp.call(method, Some(json!({})), Some(&session)).await;
        assert_eq!(reply["sessionId"], session.as_str(), "{method}");
        assert!(reply.get("error").is_none(), "{method}: {reply}");
    }
    let (tree, _) = cdp.call("Page.getFrameTree", None, Some(&session)).await;
    assert_eq!(
        tree["result"]["frameTree"]["frame"]["id"],
        existing.target_id.as_str(),
        "targetId is the main frame id"
    );
    assert!(existing.received("Runtime.runIfWaitingForDebugger").is_empty(), "answered locally");
    let (eval, _) = cdp.call("Runtime.evaluate", Some(json!({"expression": "1+1"})), Some(&session)).await;
    assert_eq!(eval["result"]["result"]["value"], 2);

    let (version, _) = cdp.call("Browser.getVersion", None, None).await;
    assert_eq!(
        version["result"],
        json!({"protocolVersion": "1.3", "product": "Chrome/131.0.6778.205", "revision": "@abc",
               "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0 Safari/537.36", "jsVersion": "13.1.201.22"})
    );

    // newPage: targetCreated, attachedToTarget, then the reply.
    let (reply, before) = cdp.call("Target.createTarget", Some(json!({"url": "about:blank"})), None).await;
    let target_id = reply["result"]["targetId"].as_str().unwrap().to_string();
    // As in Chromium: created (attached:false), attached, then info changed (attached:true).
    assert_eq!(methods(&before), vec!["Target.targetCreated", "Target.attachedToTarget", "Target.targetInfoChanged"]);
    assert_eq!(before[2]["params"]["targetInfo"]["attached"], true);
    assert_eq!(before[1]["params"]["targetInfo"]["targetId"], target_id.as_str());
    assert_eq!(guests.opened.lock().unwrap().as_slice(), ["about:blank"]);
    let (new_guest_id, new_guest) = guests.by_target(&target_id).unwrap();
    let new_session = before[1]["params"]["sessionId"].as_str().unwrap().to_string();

    // createCDPSession: attachedToTarget before the reply, then a second session on the same page.
    let (reply, before) =
        cdp.call("Target.attachToTarget", Some(json!({"targetId": target_id, "flatten": true})), None).await;
    let cdp_session = reply["result"]["sessionId"].as_str().unwrap().to_string();
    assert_ne!(cdp_session, new_session);
    let attach_events: Vec<&Value> = before.iter().filter(|m| m["method"] == "Target.attachedToTarget").collect();
    assert_eq!(attach_events.len(), 1);
    assert_eq!(attach_events[0]["params"]["sessionId"], cdp_session.as_str());
    let (eval, _) = cdp.call("Runtime.evaluate", Some(json!({"expression": "1+1"})), Some(&cdp_session)).await;
    assert_eq!(eval["sessionId"], cdp_session.as_str());
    let (reply, before) = cdp.call("Target.detachFromTarget", Some(json!({"sessionId": cdp_session})), None).await;
    assert_eq!(reply["result"], json!({}));
    assert!(before
        .iter()
        .any(|m| m["method"] == "Target.detachedFromTarget" && m["params"]["sessionId"] == cdp_session.as_str()));
    let (gone, _) = cdp.call("Runtime.evaluate", Some(json!({})), Some(&cdp_session)).await;
    assert_eq!(gone["error"]["code"], -32001);

    // Storage through a guest, with our context id hidden from it.
    let cookie = json!({"name": "bcookie", "value": "v2", "domain": "127.0.0.1", "path": "/"});
    let (reply, _) =
        cdp.call("Storage.setCookies", Some(json!({"cookies": [cookie], "browserContextId": ctx})), None).await;
    assert_eq!(reply["result"], json!({}));
    let (reply, _) = cdp.call("Storage.getCookies", Some(json!({})), None).await;
    assert_eq!(reply["result"]["cookies"][0]["name"], "bcookie");
    assert!(existing.received("Storage.setCookies")[0]["params"].get("browserContextId").is_none());
    let (reply, _) = cdp.call("Storage.getCookies", Some(json!({"browserContextId": "OTHER"})), None).await;
    assert_eq!(reply["error"]["code"], -32602);

    // page.close(): the node closes, the session detaches and the target is destroyed.
    let (reply, before) = cdp.call("Target.closeTarget", Some(json!({"targetId": target_id})), None).await;
    assert_eq!(reply["result"], json!({"success": true}));
    assert_eq!(guests.closed.lock().unwrap().as_slice(), [new_guest_id]);
    let detached: Vec<&Value> = before.iter().filter(|m| m["method"] == "Target.detachedFromTarget").collect();
    assert_eq!(detached.len(), 1);
    assert_eq!(detached[0]["params"], json!({"sessionId": new_session, "targetId": target_id}));
    assert!(before
        .iter()
        .any(|m| m["method"] == "Target.targetDestroyed" && m["params"]["targetId"] == target_id.as_str()));
    assert_eq!(new_guest.live_sinks(), 0, "subscription dropped");

    let (reply, _) = cdp.call("Target.closeTarget", Some(json!({"targetId": "NOPE"})), None).await;
    assert_eq!(reply["error"]["code"], -32602);
    let (reply, _) = cdp.call("Target.activateTarget", Some(json!({"targetId": existing.target_id})), None).await;
    assert_eq!(reply["result"], json!({}));
    facade.close();
}

#[tokio::test]
async fn playwright_connect_sequence() {
    let guests = FakeGuests::new();
    let facade = start(&guests);
    let ctx = facade.browser_context_id().to_string();
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;

    let (version, _) = cdp.call("Browser.getVersion", None, None).await;
    assert_eq!(version["result"]["product"], "Chrome/131.0.6778.205");
    // No browser node at all: connect must still succeed.
    assert!(auto_attach(&mut cdp).await.is_empty());
    let (reply, _) = cdp
        .call(
            "Browser.setDownloadBehavior",
            Some(json!({"behavior": "allowAndName", "downloadPath": "/tmp/x", "eventsEnabled": true})),
            None,
        )
        .await;
    assert_eq!(reply["result"], json!({}));
    let (reply, _) = cdp.call("Target.getTargetInfo", Some(json!({})), None).await;
    assert_eq!(reply["result"]["targetInfo"]["type"], "browser");
    let (reply, _) = cdp.call("Storage.getCookies", None, None).await;
    assert_eq!(reply["error"]["code"], -32000, "clear error when no node exists");
    let id = cdp.send("Target.getTargetInfo", None, None).await;
    let (reply, _) = cdp.reply_to(id).await;
    assert_eq!(reply["result"]["targetInfo"]["type"], "browser", "params may be absent");

    // newPage.
    let (reply, before) = cdp.call("Target.createTarget", Some(json!({"url": "about:blank"})), None).await;
    let target_id = reply["result"]["targetId"].as_str().unwrap().to_string();
    let attached =
        before.iter().find(|m| m["method"] == "Target.attachedToTarget").expect("attach before createTarget reply");
    assert_eq!(attached["params"]["targetInfo"]["targetId"], target_id.as_str());
    assert_eq!(attached["params"]["targetInfo"]["browserContextId"], ctx.as_str());
    let page_session = attached["params"]["sessionId"].as_str().unwrap().to_string();
    let (reply, _) = cdp
        .call(
            "Browser.setDownloadBehavior",
            Some(json!({"behavior": "allowAndName", "downloadPath": "/tmp/x", "eventsEnabled": true})),
            None,
        )
        .await;
    assert_eq!(reply["result"], json!({}));
    let (reply, _) = cdp.call("Target.getTargetInfo", Some(json!({"targetId": target_id})), None).await;
    assert_eq!(reply["result"]["targetInfo"]["type"], "page");

    // Page bootstrap (Playwright's order) all succeeds with the session id on every reply.
    for method in [
        "Page.enable",
        "Page.getFrameTree",
        "Log.enable",
        "Page.setLifecycleEventsEnabled",
        "Runtime.enable",
        "Page.addScriptToEvaluateOnNewDocument",
        "Network.enable",
        "Target.setAutoAttach",
        "Emulation.setFocusEmulationEnabled",
        "Page.setFontFamilies",
        "Emulation.setEmulatedMedia",
        "Runtime.runIfWaitingForDebugger",
    ] {
        let params = if method == "Target.setAutoAttach" {
            json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
        } else {
            json!({})
        };
        let (reply, _) = cdp.call(method, Some(params), Some(&page_session)).await;
        assert_eq!(reply["sessionId"], page_session.as_str(), "{method}");
        assert!(reply.get("error").is_none(), "{method}");
    }

    // newCDPSession: a browser session, then attachToTarget on it.
    let (reply, before) = cdp.call("Target.attachToBrowserTarget", Some(json!({})), None).await;
    let browser_session = reply["result"]["sessionId"].as_str().unwrap().to_string();
    let ev = before.iter().find(|m| m["method"] == "Target.attachedToTarget").expect("browser session announced first");
    assert_eq!(ev["params"]["targetInfo"]["type"], "browser");
    assert_eq!(ev["params"]["sessionId"], browser_session.as_str());
    let (reply, before) = cdp
        .call("Target.attachToTarget", Some(json!({"targetId": target_id, "flatten": true})), Some(&browser_session))
        .await;
    assert_eq!(reply["sessionId"], browser_session.as_str());
    let child = reply["result"]["sessionId"].as_str().unwrap().to_string();
    let ev = before.iter().find(|m| m["method"] == "Target.attachedToTarget").unwrap();
    assert_eq!(ev["sessionId"], browser_session.as_str(), "announced on the browser session");
    let (eval, _) = cdp.call("Runtime.evaluate", Some(json!({"expression": "1+1"})), Some(&child)).await;
    assert_eq!(
        (eval["sessionId"].as_str(), eval["result"]["result"]["value"].as_i64()),
        (Some(child.as_str()), Some(2))
    );
    let (reply, before) =
        cdp.call("Target.detachFromTarget", Some(json!({"sessionId": child})), Some(&browser_session)).await;
    assert_eq!(reply["sessionId"], browser_session.as_str());
    let ev = before.iter().find(|m| m["method"] == "Target.detachedFromTarget").unwrap();
    assert_eq!(ev["sessionId"], browser_session.as_str());

    // Cookies with a page open.
    let (reply, _) = cdp
        .call(
            "Storage.setCookies",
            Some(json!({"cookies": [{"name": "pwcookie", "value": "v3", "url": "http://127.0.0.1:8765/"}]})),
            None,
        )
        .await;
    assert_eq!(reply["result"], json!({}));
    let (reply, _) = cdp.call("Storage.getCookies", Some(json!({})), None).await;
    assert_eq!(reply["result"]["cookies"][0]["name"], "pwcookie");

    let (reply, _) = cdp.call("Target.createTarget", Some(json!({"url": "javascript:alert(1)"})), None).await;
    assert!(reply["error"]["message"].as_str().unwrap().contains("denied url"));

    // page.close(): reply and detach.
    let (reply, before) = cdp.call("Target.closeTarget", Some(json!({"targetId": target_id})), None).await;
    assert_eq!(reply["result"]["success"], true);
    assert!(before
        .iter()
        .any(|m| m["method"] == "Target.detachedFromTarget" && m["params"]["sessionId"] == page_session.as_str()));

    // browser.close(): ends the connection, never the app.
    let (reply, _) = cdp.call("Browser.close", None, None).await;
    assert_eq!(reply["result"], json!({}));
    assert_eq!(cdp.close_code().await, Some(1000));
    facade.close();
}

#[tokio::test]
async fn ids_are_remapped_around_the_apps_own_traffic() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let sessions = auto_attach(&mut cdp).await;
    let session = sessions[0].1.clone();
    let (reply, _) =
        cdp.call("Target.attachToTarget", Some(json!({"targetId": guest.target_id, "flatten": true})), None).await;
    let second = reply["result"]["sessionId"].as_str().unwrap().to_string();

    // The app uses the same small ids as the client on the same channel.
    let next = cdp.send("Runtime.evaluate", Some(json!({"expression": "1+1"})), Some(&session)).await;
    for id in 1..=next + 3 {
        guest.app_send(id, "Runtime.evaluate");
    }
    let a = cdp.send("Runtime.evaluate", Some(json!({"expression": "1+1"})), Some(&session)).await;
    let b = cdp.send("Runtime.evaluate", Some(json!({"expression": "1+1"})), Some(&second)).await;
    let mut replies = Vec::new();
    while replies.len() < 3 {
        let msg = cdp.next().await;
        if msg.get("id").is_some() {
            replies.push(msg);
        }
    }
    for (msg, (id, sid)) in replies.iter().zip([(next, &session), (a, &session), (b, &second)]) {
        assert_eq!(msg["id"], id);
        assert_eq!(msg["sessionId"], sid.as_str());
        assert_eq!(msg["result"]["result"]["value"], 2, "never the app's reply: {msg}");
    }
    let facade_ids: Vec<i64> = guest
        .log()
        .iter()
        .filter(|m| m["id"].as_i64().unwrap() > next + 3)
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    assert!(!facade_ids.is_empty());
    assert!(facade_ids.iter().all(|id| FACADE_ID_RANGE.contains(id)));
    let unique: std::collections::HashSet<_> = facade_ids.iter().collect();
    assert_eq!(unique.len(), facade_ids.len());
    // No stray reply arrives later: a barrier round trip comes next.
    let (barrier, before) = cdp.call("Target.getTargetInfo", None, None).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(barrier["result"]["targetInfo"]["type"], "browser");
    facade.close();
}

#[tokio::test]
async fn child_sessions_pass_through_and_duplicates_are_hidden() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://one.test/", true);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let session = auto_attach(&mut cdp).await[0].1.clone();

    let (reply, before) = cdp
        .call(
            "Target.setAutoAttach",
            Some(json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})),
            Some(&session),
        )
        .await;
    assert_eq!(reply["sessionId"], session.as_str());
    let ev = before.iter().find(|m| m["method"] == "Target.attachedToTarget").expect("iframe announced");
    assert_eq!(ev["sessionId"], session.as_str(), "announced on the page session");
    assert_eq!(ev["params"]["targetInfo"]["type"], "iframe");
    let child = ev["params"]["sessionId"].as_str().unwrap().to_string();

    let (reply, _) = cdp.call("Runtime.runIfWaitingForDebugger", None, Some(&child)).await;
    assert_eq!(reply["sessionId"], child.as_str());
    let forwarded = guest.received("Runtime.runIfWaitingForDebugger");
    assert_eq!(forwarded.len(), 1, "a child may really be waiting: forwarded");
    assert_eq!(forwarded[0]["sessionId"], child.as_str());
    let (eval, _) = cdp.call("Runtime.evaluate", Some(json!({"expression": "location.href"})), Some(&child)).await;
    assert_eq!(
        (eval["sessionId"].as_str(), eval["result"]["result"]["value"].as_str()),
        (Some(child.as_str()), Some("in-iframe"))
    );

    guest.emit("Runtime.consoleAPICalled", json!({"type": "log"}), Some(&child));
    let (ev, _) = cdp.event("Runtime.consoleAPICalled").await;
    assert_eq!(ev["sessionId"], child.as_str());

    // Re-sent auto-attach makes the guest re-announce the iframe: hidden and released.
    let (_, before) = cdp
        .call(
            "Target.setAutoAttach",
            Some(json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})),
            Some(&session),
        )
        .await;
    assert!(!before.iter().any(|m| m["method"] == "Target.attachedToTarget"), "{before:?}");
    let (barrier, before) = cdp.call("Runtime.evaluate", Some(json!({})), Some(&session)).await;
    assert_eq!(barrier["sessionId"], session.as_str());
    assert!(
        !before.iter().any(|m| m["method"] == "Target.detachedFromTarget"),
        "the duplicate's detach stays hidden: {before:?}"
    );
    let detaches = guest.received("Target.detachFromTarget");
    assert_eq!(detaches.len(), 1);
    assert_ne!(detaches[0]["params"]["sessionId"], child.as_str());

    // Detaching the child goes through the guest, which announces it.
    let (reply, before) = cdp.call("Target.detachFromTarget", Some(json!({"sessionId": child})), Some(&session)).await;
    assert_eq!(reply["sessionId"], session.as_str());
    let ev = before.iter().find(|m| m["method"] == "Target.detachedFromTarget").expect("detach announced");
    assert_eq!(ev["params"]["sessionId"], child.as_str());
    let (gone, _) = cdp.call("Runtime.evaluate", Some(json!({})), Some(&child)).await;
    assert_eq!(gone["error"], json!({"code": -32001, "message": "Session with given id not found."}));
    assert_eq!(gone["sessionId"], child.as_str());
    facade.close();
}

#[tokio::test]
async fn a_new_client_evicts_the_old_and_starts_clean() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://one.test/", true);
    let facade = start(&guests);

    let mut first = Cdp::connect(&facade.browser_ws_url()).await;
    let session = auto_attach(&mut first).await[0].1.clone();
    let (_, before) = first
        .call(
            "Target.setAutoAttach",
            Some(json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})),
            Some(&session),
        )
        .await;
    let child = before.iter().find(|m| m["method"] == "Target.attachedToTarget").unwrap()["params"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let pending = first.send("Test.hang", None, Some(&session)).await;

    let mut second = Cdp::connect(&facade.browser_ws_url()).await;
    let (reply, _) = second.call("Target.getBrowserContexts", None, None).await;
    assert!(reply.get("result").is_some());
    // The first client was closed; its pending command failed rather than dangling.
    let mut saw_failure = false;
    let code = loop {
        match tokio::time::timeout(WAIT, futures_util::StreamExt::next(&mut first.ws)).await.unwrap() {
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                saw_failure |= v["id"] == pending && v.get("error").is_some();
            }
            Some(Ok(Message::Close(f))) => break f.map(|f| u16::from(f.code)),
            Some(Ok(_)) => {}
            _ => break None,
        }
    };
    assert_eq!(code, Some(1001));
    assert!(saw_failure);
    // Cleanup reached the guest before the new client started: child detached, page auto-attach off.
    assert!(guest.received("Target.detachFromTarget").iter().any(|m| m["params"]["sessionId"] == child.as_str()));
    let last_auto = guest.received("Target.setAutoAttach").last().cloned().unwrap();
    assert_eq!(last_auto["params"]["autoAttach"], false);
    // The shared guest session forgets the old client's domains (else the next Runtime.enable reports no contexts).
    for method in ["Runtime.disable", "Page.disable", "Network.disable", "Emulation.clearDeviceMetricsOverride"] {
        let sent = guest.received(method);
        assert_eq!(sent.len(), 1, "{method} sent once on release");
        assert!(sent[0].get("sessionId").is_none(), "{method} goes to the page itself");
    }
    assert_eq!(guest.live_sinks(), 0);

    // Fresh state: nothing of the old sessions is known; the page attaches anew.
    let (gone, _) = second.call("Runtime.evaluate", Some(json!({})), Some(&session)).await;
    assert_eq!(gone["error"]["code"], -32001);
    let sessions = auto_attach(&mut second).await;
    assert_eq!(sessions.len(), 1);
    let new_session = sessions[0].1.clone();
    assert_ne!(new_session, session);
    assert_eq!(guest.live_sinks(), 1, "exactly one forwarder");
    guest.emit("Page.loadEventFired", json!({"timestamp": 1}), None);
    let (_, before) = second.call("Runtime.evaluate", Some(json!({})), Some(&new_session)).await;
    let loads: Vec<&Value> = before.iter().filter(|m| m["method"] == "Page.loadEventFired").collect();
    assert_eq!(loads.len(), 1, "no duplicated event forwarding: {before:?}");
    assert_eq!(loads[0]["sessionId"], new_session.as_str());
    facade.close();
}

#[tokio::test]
async fn crash_fails_pending_and_detaches() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    cdp.call("Target.setDiscoverTargets", Some(json!({"discover": true})), None).await;
    let session = auto_attach(&mut cdp).await[0].1.clone();
    let hung = cdp.send("Test.hang", None, Some(&session)).await;
    let (reply, _) = cdp.call("Test.fail", None, Some(&session)).await;
    assert_eq!(reply["error"]["message"], "failed on purpose", "guest errors pass through");

    guest.crash();
    let (failed, before) = cdp.reply_to(hung).await;
    assert_eq!(failed["error"]["message"], "Target crashed");
    assert_eq!(failed["sessionId"], session.as_str());
    assert!(before.iter().any(|m| m["method"] == "Inspector.targetCrashed" && m["sessionId"] == session.as_str()));
    let (detached, _) = cdp.event("Target.detachedFromTarget").await;
    assert_eq!(detached["params"]["sessionId"], session.as_str());
    let (destroyed, _) = cdp.event("Target.targetDestroyed").await;
    assert_eq!(destroyed["params"]["targetId"], guest.target_id.as_str());
    let (gone, _) = cdp.call("Runtime.evaluate", Some(json!({})), Some(&session)).await;
    assert_eq!(gone["error"]["code"], -32001);
    let (targets, _) = cdp.call("Target.getTargets", None, None).await;
    assert_eq!(targets["result"]["targetInfos"], json!([]), "a crashed page is not offered");
    facade.close();
}

#[tokio::test]
async fn poll_attaches_newcomers_and_detaches_departures() {
    let guests = FakeGuests::new();
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    cdp.call("Target.setDiscoverTargets", Some(json!({"discover": true})), None).await;
    assert!(auto_attach(&mut cdp).await.is_empty());

    let (id, guest) = guests.add("https://late.test/", false);
    let (created, _) = cdp.event("Target.targetCreated").await;
    assert_eq!(created["params"]["targetInfo"]["targetId"], guest.target_id.as_str());
    let (attached, _) = cdp.event("Target.attachedToTarget").await;
    assert_eq!(attached["params"]["targetInfo"]["targetId"], guest.target_id.as_str());
    let session = attached["params"]["sessionId"].as_str().unwrap().to_string();

    guest.set_url("https://late.test/next");
    loop {
        let (changed, _) = cdp.event("Target.targetInfoChanged").await;
        if changed["params"]["targetInfo"]["url"] == "https://late.test/next" {
            break;
        }
    }

    guests.remove(&id);
    let (detached, _) = cdp.event("Target.detachedFromTarget").await;
    assert_eq!(detached["params"]["sessionId"], session.as_str());
    let (destroyed, _) = cdp.event("Target.targetDestroyed").await;
    assert_eq!(destroyed["params"]["targetId"], guest.target_id.as_str());
    facade.close();
}

#[tokio::test]
async fn bad_frames_close_with_the_right_codes() {
    let guests = FakeGuests::new();
    let facade = start_with(&guests, FacadeConfig { max_message_bytes: 64 * 1024, ..FacadeConfig::default() });
    let url = facade.browser_ws_url();

    let mut cdp = Cdp::connect(&url).await;
    cdp.ws.send(Message::Binary(vec![b'{', b'}'].into())).await.unwrap();
    assert_eq!(cdp.close_code().await, Some(1003));

    let mut cdp = Cdp::connect(&url).await;
    let frame = Frame::message(vec![0xff, 0xfe, b'{'], OpCode::Data(Data::Text), true);
    cdp.ws.send(Message::Frame(frame)).await.unwrap();
    assert_eq!(cdp.close_code().await, Some(1007));

    let mut cdp = Cdp::connect(&url).await;
    let big = format!(
        "{{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{{\"expression\":\"{}\"}}}}",
        "x".repeat(100 * 1024)
    );
    cdp.ws.send(Message::Text(big.into())).await.unwrap();
    assert_eq!(cdp.close_code().await, Some(1009));

    // Malformed but within limits: an error reply, the connection stays.
    let mut cdp = Cdp::connect(&url).await;
    cdp.ws.send(Message::Text("{not json".into())).await.unwrap();
    let err = cdp.next().await;
    assert_eq!(err["error"]["code"], -32700);
    let (reply, _) = cdp.call("Nope.method", None, None).await;
    assert_eq!(reply["error"], json!({"code": -32601, "message": "'Nope.method' wasn't found"}));
    let (reply, _) = cdp.call("Runtime.evaluate", None, Some("UNKNOWN")).await;
    assert_eq!(reply["error"], json!({"code": -32001, "message": "Session with given id not found."}));
    assert_eq!(reply["sessionId"], "UNKNOWN");
    facade.close();
}

#[tokio::test]
async fn dialogs_are_answered_through_the_app() {
    let guests = FakeGuests::new();
    let (gid, _) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (_, session) = auto_attach(&mut cdp).await.remove(0);

    let (reply, _) = cdp.call("Page.handleJavaScriptDialog", Some(json!({"accept": true})), Some(&session)).await;
    assert_eq!(reply["error"]["message"], "No dialog is showing", "{reply}");
    assert_eq!(reply["sessionId"], session.as_str());

    guests.dialogs.lock().unwrap().insert(gid.clone());
    let (reply, _) = cdp
        .call("Page.handleJavaScriptDialog", Some(json!({"accept": true, "promptText": "typed"})), Some(&session))
        .await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    assert_eq!(*guests.answers.lock().unwrap(), vec![(gid.clone(), true, Some("typed".to_string()))]);

    guests.dialogs.lock().unwrap().insert(gid.clone());
    let (reply, _) = cdp.call("Page.handleJavaScriptDialog", Some(json!({"accept": false})), Some(&session)).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    assert_eq!(guests.answers.lock().unwrap().last(), Some(&(gid, false, None)));

    let (reply, _) = cdp.call("Page.handleJavaScriptDialog", Some(json!({"promptText": "x"})), Some(&session)).await;
    assert_eq!(reply["error"]["code"], -32602, "accept is required: {reply}");
}

/// Chromium announces a dialog before CEF's handler hands it to the app: an
/// answer in that gap waits for the app instead of failing, and an answer
/// after the dialog closed still fails at once.
#[tokio::test]
async fn an_answer_that_beats_the_app_waits_for_the_dialog() {
    let guests = FakeGuests::new();
    let (gid, page) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (_, session) = auto_attach(&mut cdp).await.remove(0);

    let opening = json!({"url": "https://one.test/", "message": "yes?", "type": "confirm", "hasBrowserHandler": true, "defaultPrompt": ""});
    page.emit("Page.javascriptDialogOpening", opening, None);
    let (event, _) = cdp.event("Page.javascriptDialogOpening").await;
    assert_eq!(event["sessionId"], session.as_str());
    let id = cdp.send("Page.handleJavaScriptDialog", Some(json!({"accept": true})), Some(&session)).await;
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert!(guests.answers.lock().unwrap().is_empty(), "no dialog held yet, so nothing answered");
    guests.dialogs.lock().unwrap().insert(gid.clone());
    let (reply, _) = cdp.reply_to(id).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    assert_eq!(*guests.answers.lock().unwrap(), vec![(gid.clone(), true, None)]);

    page.emit("Page.javascriptDialogClosed", json!({"result": true, "userInput": ""}), None);
    cdp.event("Page.javascriptDialogClosed").await;
    let (reply, _) = cdp.call("Page.handleJavaScriptDialog", Some(json!({"accept": true})), Some(&session)).await;
    assert_eq!(reply["error"]["message"], "No dialog is showing", "{reply}");
}

/// `Browser.setDownloadBehavior` goes to the app, whatever pages exist;
/// the app's download notices reach the session that asked for events, with
/// the page's frame id; the behaviour ends with the client.
#[tokio::test]
async fn downloads_follow_the_clients_behaviour_and_report_to_its_session() {
    let guests = FakeGuests::new();
    let facade = start(&guests);
    let notifier = facade.download_notifier();
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;

    for (params, error) in [
        (json!({"behavior": "allow"}), "downloadPath not provided"),
        (
            json!({"behavior": "allow", "downloadPath": "relative/dir"}),
            "downloadPath must be an absolute path: relative/dir",
        ),
        (json!({"behavior": "often"}), "Unrecognized behavior: often"),
    ] {
        let (reply, _) = cdp.call("Browser.setDownloadBehavior", Some(params), None).await;
        assert_eq!(reply["error"]["message"], error, "{reply}");
    }
    let (reply, _) = cdp
        .call("Browser.setDownloadBehavior", Some(json!({"behavior": "deny", "browserContextId": "NOPE"})), None)
        .await;
    assert_eq!(reply["error"]["message"], "Failed to find browser context for id NOPE", "{reply}");
    assert!(guests.download_behaviors.lock().unwrap().is_empty(), "refused calls change nothing");

    // Puppeteer's browser.target().createCDPSession(): a session on the browser target.
    let (info, _) = cdp.call("Target.getTargetInfo", None, None).await;
    let browser_target = info["result"]["targetInfo"]["targetId"].as_str().unwrap().to_string();
    let (reply, _) =
        cdp.call("Target.attachToTarget", Some(json!({"targetId": browser_target, "flatten": true})), None).await;
    let browser_session = reply["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{reply}")).to_string();
    let (reply, _) = cdp
        .call(
            "Browser.setDownloadBehavior",
            Some(json!({"behavior": "allowAndName", "downloadPath": "/tmp/dl", "eventsEnabled": true})),
            Some(&browser_session),
        )
        .await;
    assert_eq!(reply["result"], json!({}), "no page needed: {reply}");
    assert_eq!(
        *guests.download_behaviors.lock().unwrap(),
        vec![(None, DownloadBehavior::AllowAndName("/tmp/dl".into()))]
    );

    let (gid, page) = guests.add("https://one.test/", false);
    let (targets, _) = cdp.call("Target.getTargets", None, None).await;
    assert_eq!(targets["result"]["targetInfos"][0]["targetId"], page.target_id.as_str());
    notifier.notify(DownloadNotice {
        guest: gid.clone(),
        guid: "g-1".into(),
        event: DownloadEvent::Began { url: "https://one.test/r.txt".into(), suggested_filename: "r.txt".into() },
    });
    notifier.notify(DownloadNotice {
        guest: gid.clone(),
        guid: "g-1".into(),
        event: DownloadEvent::Progress { received: 26, total: 26, state: DownloadState::Completed },
    });
    let (began, _) = cdp.event("Browser.downloadWillBegin").await;
    assert_eq!(began["sessionId"], browser_session.as_str());
    assert_eq!(
        began["params"],
        json!({"frameId": page.target_id, "guid": "g-1", "url": "https://one.test/r.txt", "suggestedFilename": "r.txt"})
    );
    let (progress, _) = cdp.event("Browser.downloadProgress").await;
    assert_eq!(progress["params"], json!({"guid": "g-1", "totalBytes": 26, "receivedBytes": 26, "state": "completed"}));

    // Events off: nothing more is told; the behaviour ends with the client.
    let (reply, _) = cdp
        .call("Browser.setDownloadBehavior", Some(json!({"behavior": "allow", "downloadPath": "/tmp/dl"})), None)
        .await;
    assert_eq!(reply["result"], json!({}));
    notifier.notify(DownloadNotice {
        guest: gid,
        guid: "g-2".into(),
        event: DownloadEvent::Began { url: "https://one.test/s.txt".into(), suggested_filename: "s.txt".into() },
    });
    let (reply, before) = cdp.call("Browser.getVersion", None, None).await;
    assert!(reply["result"].is_object());
    assert!(!before.iter().any(|m| m["method"] == "Browser.downloadWillBegin"), "{before:?}");
    drop(cdp);
    let reset = || guests.download_behaviors.lock().unwrap().last() == Some(&(None, DownloadBehavior::Default));
    for _ in 0..100 {
        if reset() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(reset(), "{:?}", guests.download_behaviors.lock().unwrap());
}

#[tokio::test]
async fn window_geometry_maps_to_the_node() {
    let guests = FakeGuests::new();
    let (gid, page) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (_, session) = auto_attach(&mut cdp).await.remove(0);

    // Puppeteer's page.resize(): on the page session, no target id.
    let (reply, _) = cdp.call("Browser.getWindowForTarget", None, Some(&session)).await;
    let window_id = reply["result"]["windowId"].as_i64().unwrap_or_else(|| panic!("{reply}"));
    assert_eq!(
        reply["result"]["bounds"],
        json!({"left": 100, "top": 50, "width": 800, "height": 600, "windowState": "normal"})
    );
    // The same window from the root, by target id, and again later.
    let (reply, _) =
        cdp.call("Browser.getWindowForTarget", Some(json!({"targetId": page.target_id.as_str()})), None).await;
    assert_eq!(reply["result"]["windowId"], window_id);
    let (reply, _) = cdp.call("Browser.getWindowForTarget", None, None).await;
    assert_eq!(reply["error"]["message"], "Browser window not found", "{reply}");

    let (reply, _) =
        cdp.call("Browser.setContentsSize", Some(json!({"windowId": window_id, "width": 1024})), Some(&session)).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    let (reply, _) = cdp
        .call("Browser.setWindowBounds", Some(json!({"windowId": window_id, "bounds": {"height": 700}})), None)
        .await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    assert_eq!(*guests.sizes.lock().unwrap(), vec![(gid.clone(), 1024, 600), (gid.clone(), 1024, 700)]);
    let (reply, _) = cdp.call("Browser.getWindowBounds", Some(json!({"windowId": window_id})), None).await;
    assert_eq!(reply["result"]["bounds"]["width"], 1024);
    assert_eq!(reply["result"]["bounds"]["height"], 700);

    let (reply, _) = cdp
        .call(
            "Browser.setWindowBounds",
            Some(json!({"windowId": window_id, "bounds": {"windowState": "fullscreen"}})),
            None,
        )
        .await;
    assert!(reply["error"]["message"].as_str().unwrap_or_default().contains("'fullscreen'"), "{reply}");
    let (reply, _) = cdp.call("Browser.getWindowBounds", Some(json!({"windowId": 999})), None).await;
    assert_eq!(reply["error"]["message"], "Browser window not found");
    assert_eq!(guests.sizes.lock().unwrap().len(), 2, "refused requests resize nothing");
    assert!(page.received("Browser.getWindowForTarget").is_empty(), "answered by the facade, not the guest");
}

/// Focus as Chromium gives it: a foreground new target's page is focused
/// (not one made with `background` or `focus: false`), and `Page.bringToFront`
/// activates the page's node like `Target.activateTarget`, replying once done.
#[tokio::test]
async fn new_targets_and_bring_to_front_focus_as_in_chromium() {
    let guests = FakeGuests::new();
    let (existing_id, existing) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let sessions = auto_attach(&mut cdp).await;
    let session = sessions.iter().find(|(t, _)| *t == existing.target_id).unwrap().1.clone();

    let mut focused_targets = Vec::new();
    for (params, focused) in [
        (json!({"url": "about:blank"}), true),
        (json!({"url": "about:blank", "background": true}), false),
        (json!({"url": "about:blank", "focus": false}), false),
        (json!({"url": "about:blank", "background": false, "focus": true}), true),
    ] {
        let (reply, _) = cdp.call("Target.createTarget", Some(params.clone()), None).await;
        let target_id = reply["result"]["targetId"].as_str().unwrap_or_else(|| panic!("{params}: {reply}"));
        let (guest, _) = guests.by_target(target_id).unwrap();
        if focused {
            focused_targets.push(guest);
        }
    }
    assert_eq!(*guests.page_focused.lock().unwrap(), focused_targets);
    assert!(guests.activated.lock().unwrap().is_empty(), "a new target does not move the app's focus");

    let (reply, _) = cdp.call("Page.bringToFront", None, Some(&session)).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    assert_eq!(reply["sessionId"], session.as_str());
    assert_eq!(*guests.activated.lock().unwrap(), std::slice::from_ref(&existing_id), "activated before the reply");
    assert!(existing.received("Page.bringToFront").is_empty(), "answered by the facade, not the guest");

    let (reply, _) = cdp.call("Target.activateTarget", Some(json!({"targetId": existing.target_id})), None).await;
    assert_eq!(reply["result"], json!({}));
    assert_eq!(*guests.activated.lock().unwrap(), [existing_id.clone(), existing_id]);
    let (reply, _) = cdp.call("Page.bringToFront", None, None).await;
    assert!(reply["error"].is_object(), "no page to bring to front at the root: {reply}");
    facade.close();
}

/// A hidden page paints no frame: the app is told when a client needs the
/// page painted (a screenshot, a screencast and its acks), and when a client
/// turns focus emulation on or off (once per change, and off when it leaves).
#[tokio::test]
async fn screenshots_screencasts_and_focus_emulation_reach_the_app() {
    let guests = FakeGuests::new();
    let (id, page) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let sessions = auto_attach(&mut cdp).await;
    let session = sessions.iter().find(|(t, _)| *t == page.target_id).unwrap().1.clone();
    for method in ["Page.captureScreenshot", "Page.startScreencast", "Page.screencastFrameAck"] {
        cdp.call(method, Some(json!({})), Some(&session)).await;
    }
    assert_eq!(*guests.painted_for.lock().unwrap(), [id.clone(), id.clone(), id.clone()]);
    assert_eq!(page.received("Page.captureScreenshot").len(), 1, "still forwarded");
    for on in [true, true, false, true] {
        cdp.call("Emulation.setFocusEmulationEnabled", Some(json!({"enabled": on})), Some(&session)).await;
    }
    assert_eq!(*guests.focus_emulation.lock().unwrap(), [(id.clone(), true), (id.clone(), false), (id.clone(), true)]);
    assert_eq!(page.received("Emulation.setFocusEmulationEnabled").len(), 4, "every one forwarded");
    drop(cdp);
    let deadline = std::time::Instant::now() + WAIT;
    while guests.focus_emulation.lock().unwrap().len() < 4 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(guests.focus_emulation.lock().unwrap().last(), Some(&(id, false)), "released with the client");
    facade.close();
}

/// Issue 13: Puppeteer's `page.authenticate()` flow (`Fetch.enable` with
/// `handleAuthRequests`, the paused request and its challenge continued), then
/// `Target.createTarget`: the new target comes, and the connection stays.
#[tokio::test]
async fn the_fetch_auth_flow_then_create_target_keeps_the_connection() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://auth.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let session = auto_attach(&mut cdp).await[0].1.clone();

    let (reply, _) = cdp
        .call(
            "Fetch.enable",
            Some(json!({"handleAuthRequests": true, "patterns": [{"urlPattern": "*"}]})),
            Some(&session),
        )
        .await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    let (paused, _) = cdp.event("Fetch.requestPaused").await;
    assert_eq!(paused["sessionId"], session.as_str(), "the page's events come on its session");
    let (challenge, _) = cdp.event("Fetch.authRequired").await;
    let request_id = challenge["params"]["requestId"].as_str().unwrap().to_string();
    let (reply, _) = cdp.call("Fetch.continueRequest", Some(json!({"requestId": request_id})), Some(&session)).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    let answer = json!({"requestId": request_id, "authChallengeResponse":
        {"response": "ProvideCredentials", "username": "user", "password": "pass"}});
    let (reply, _) = cdp.call("Fetch.continueWithAuth", Some(answer.clone()), Some(&session)).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    assert_eq!(guest.paused_requests(), 0);
    // Answered twice: the guest's own error, the connection stays.
    let (reply, _) = cdp.call("Fetch.continueWithAuth", Some(answer), Some(&session)).await;
    assert_eq!(reply["error"]["message"], "Invalid InterceptionId.", "{reply}");

    let (reply, before) = cdp.call("Target.createTarget", Some(json!({"url": "about:blank"})), None).await;
    let target_id = reply["result"]["targetId"].as_str().unwrap_or_else(|| panic!("{reply}"));
    assert!(
        before
            .iter()
            .any(|m| m["method"] == "Target.attachedToTarget" && m["params"]["targetInfo"]["targetId"] == target_id),
        "the new page is attached before the reply: {before:?}"
    );
    let (reply, _) = cdp.call("Fetch.disable", None, Some(&session)).await;
    assert_eq!(reply["result"], json!({}));
    let (reply, _) = cdp.call("Target.getTargets", None, None).await;
    assert_eq!(reply["result"]["targetInfos"].as_array().map(Vec::len), Some(2));
    facade.close();
}

/// Issue 13: `fromSurface: false` crashed CEF's off-screen browser (the whole
/// app). Headless Chromium answers it from the surface; so does the facade, on
/// page and child sessions alike.
#[tokio::test]
async fn screenshots_are_always_taken_from_the_surface() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://one.test/", true);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let session = auto_attach(&mut cdp).await[0].1.clone();
    let (_, before) = cdp
        .call(
            "Target.setAutoAttach",
            Some(json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})),
            Some(&session),
        )
        .await;
    let child = before.iter().find(|m| m["method"] == "Target.attachedToTarget").unwrap()["params"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    for (params, on) in [
        (json!({"fromSurface": false}), &session),
        (json!({"fromSurface": false, "format": "jpeg", "quality": 80}), &session),
        (json!({"fromSurface": false}), &child),
    ] {
        let (reply, _) = cdp.call("Page.captureScreenshot", Some(params.clone()), Some(on)).await;
        assert!(reply["result"].is_object(), "{params}: {reply}");
        assert_eq!(reply["sessionId"], on.as_str());
    }
    assert!(!guest.crashed());
    let sent = guest.received("Page.captureScreenshot");
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|m| m["params"].get("fromSurface").is_none()), "{sent:?}");
    assert_eq!(sent[1]["params"], json!({"format": "jpeg", "quality": 80}));
    facade.close();
}

/// Puppeteer's `browser.target().createCDPSession()`: `Target.attachToTarget`
/// with the browser's own target id gives a browser session, as in Chromium.
#[tokio::test]
async fn attaching_to_the_browser_target_gives_a_browser_session() {
    let guests = FakeGuests::new();
    let (_, guest) = guests.add("https://one.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (info, _) = cdp.call("Target.getTargetInfo", None, None).await;
    let browser_target = info["result"]["targetInfo"]["targetId"].as_str().unwrap().to_string();
    let (reply, before) =
        cdp.call("Target.attachToTarget", Some(json!({"targetId": browser_target, "flatten": true})), None).await;
    let session = reply["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{reply}")).to_string();
    let ev = before.iter().find(|m| m["method"] == "Target.attachedToTarget").expect("announced before the reply");
    assert_eq!(ev["params"]["targetInfo"]["type"], "browser");
    let (reply, _) = cdp.call("Target.getTargets", None, Some(&session)).await;
    assert_eq!(reply["sessionId"], session.as_str());
    let targets = reply["result"]["targetInfos"].as_array().unwrap();
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0]["targetId"], guest.target_id.as_str());
    facade.close();
}

#[tokio::test]
async fn isolated_browser_contexts_hold_their_own_pages_and_end_with_dispose() {
    let guests = FakeGuests::new();
    let (_, person) = guests.add("https://mine.test/", false);
    let facade = start(&guests);
    let default_ctx = facade.browser_context_id().to_string();
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (reply, _) = cdp.call("Target.setDiscoverTargets", Some(json!({"discover": true})), None).await;
    assert_eq!(reply["result"], json!({}));

    let (reply, _) = cdp.call("Target.createBrowserContext", Some(json!({})), None).await;
    let ctx = reply["result"]["browserContextId"].as_str().expect("a context id").to_string();
    assert_ne!(ctx, default_ctx);
    let (reply, _) = cdp.call("Target.getBrowserContexts", None, None).await;
    assert_eq!(reply["result"], json!({"browserContextIds": [ctx], "defaultBrowserContextId": default_ctx}));

    // A page in it reports it; an unknown context is refused as Chromium refuses it.
    let (reply, before) = cdp
        .call("Target.createTarget", Some(json!({"url": "https://agent.test/", "browserContextId": ctx})), None)
        .await;
    let target = reply["result"]["targetId"].as_str().expect("a target").to_string();
    let created = before
        .iter()
        .find(|m| m["method"] == "Target.targetCreated" && m["params"]["targetInfo"]["targetId"] == target.as_str());
    assert_eq!(created.expect("announced")["params"]["targetInfo"]["browserContextId"], ctx.as_str());
    let (reply, _) = cdp.call("Target.getTargets", None, None).await;
    let infos = reply["result"]["targetInfos"].as_array().unwrap().clone();
    let of = |t: &str| infos.iter().find(|i| i["targetId"] == t).map(|i| i["browserContextId"].clone());
    assert_eq!(of(&target), Some(json!(ctx)));
    assert_eq!(of(&person.target_id), Some(json!(default_ctx)));
    let (reply, _) = cdp
        .call("Target.createTarget", Some(json!({"url": "https://x.test/", "browserContextId": "nope"})), None)
        .await;
    assert_eq!(reply["error"]["message"], "Failed to find browser context with id nope");

    // Profile-wide commands reach a page of the context asked for.
    let (_, agent_page) = guests.by_target(&target).unwrap();
    let (reply, _) = cdp.call("Storage.getCookies", Some(json!({"browserContextId": ctx})), None).await;
    assert!(reply["result"].is_object(), "{reply}");
    // A page session's Storage.* would reach the default context: the page's own Network domain is asked.
    assert_eq!(agent_page.received("Network.getAllCookies").len(), 1);
    assert!(person.received("Network.getAllCookies").is_empty() && person.received("Storage.getCookies").is_empty());
    let (reply, _) = cdp
        .call(
            "Browser.setDownloadBehavior",
            Some(json!({"behavior": "allow", "downloadPath": "/tmp/agent", "browserContextId": ctx})),
            None,
        )
        .await;
    assert_eq!(reply["result"], json!({}));
    let set = guests.download_behaviors.lock().unwrap().last().cloned().unwrap();
    assert_eq!(set, (Some(cdp_facade::ContextId::new(ctx.clone())), DownloadBehavior::Allow("/tmp/agent".into())));

    // Disposing closes its pages, announced before the reply.
    let (reply, before) = cdp.call("Target.disposeBrowserContext", Some(json!({"browserContextId": ctx})), None).await;
    assert_eq!(reply["result"], json!({}));
    assert!(before
        .iter()
        .any(|m| m["method"] == "Target.targetDestroyed" && m["params"]["targetId"] == target.as_str()));
    assert!(guests.get(&person_id(&guests, &person)).is_some(), "the person's page stays");
    let (reply, _) = cdp.call("Target.getBrowserContexts", None, None).await;
    assert_eq!(reply["result"]["browserContextIds"], json!([]));
    let (reply, _) = cdp.call("Target.disposeBrowserContext", Some(json!({"browserContextId": ctx})), None).await;
    assert_eq!(reply["error"]["message"], format!("Failed to find context with id {ctx}"));
    let (reply, _) =
        cdp.call("Target.disposeBrowserContext", Some(json!({"browserContextId": default_ctx})), None).await;
    assert!(reply["error"].is_object(), "the default context cannot be disposed");
    let (reply, _) =
        cdp.call("Target.createBrowserContext", Some(json!({"proxyServer": "http://proxy.test:3128"})), None).await;
    assert!(reply["error"]["message"].as_str().unwrap().contains("proxyServer"));

    // A context made with disposeOnDetach ends when its client leaves; one without stays.
    let (reply, _) = cdp.call("Target.createBrowserContext", Some(json!({"disposeOnDetach": true})), None).await;
    let owned = reply["result"]["browserContextId"].as_str().unwrap().to_string();
    let (reply, _) = cdp.call("Target.createBrowserContext", Some(json!({})), None).await;
    let kept = reply["result"]["browserContextId"].as_str().unwrap().to_string();
    drop(cdp);
    let ended = wait_until(|| guests.disposed.lock().unwrap().iter().any(|c| c.as_str() == owned)).await;
    assert!(ended, "the disposeOnDetach context ended with its client");
    assert!(guests.contexts.lock().unwrap().iter().any(|c| c.as_str() == kept));
    facade.close();
}

#[tokio::test]
async fn permissions_are_granted_per_origin_and_context_and_reset_when_their_client_leaves() {
    use cdp_facade::{PermissionSetting, PermissionType};
    let guests = FakeGuests::new();
    let (_, person) = guests.add("https://mine.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;

    // The person's profile: Chromium's own overrides through one of its pages, for an origin only.
    let grant = json!({"origin": "https://mine.test", "permissions": ["geolocation"]});
    let (reply, _) = cdp.call("Browser.grantPermissions", Some(grant), None).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    let sent = person.received("Browser.grantPermissions");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["params"], json!({"origin": "https://mine.test", "permissions": ["geolocation"]}));
    let (reply, _) = cdp.call("Browser.grantPermissions", Some(json!({"permissions": ["geolocation"]})), None).await;
    let refusal = reply["error"]["message"].as_str().expect("refused");
    assert!(refusal.contains("only for an origin"), "{refusal}");
    assert_eq!(person.received("Browser.grantPermissions").len(), 1, "nothing widened for every site");
    let (reply, _) = cdp.call("Browser.grantPermissions", Some(json!({"permissions": ["teleport"]})), None).await;
    assert_eq!(reply["error"]["code"], -32602);
    let bad_origin = json!({"origin": "data:text/html,x", "permissions": ["geolocation"]});
    let (reply, _) = cdp.call("Browser.grantPermissions", Some(bad_origin), None).await;
    assert_eq!(reply["error"]["message"], "Invalid origin: data:text/html,x");

    // An isolated context: the app sets them, for one origin or every one.
    let (reply, _) = cdp.call("Target.createBrowserContext", Some(json!({})), None).await;
    let ctx = reply["result"]["browserContextId"].as_str().unwrap().to_string();
    let context = cdp_facade::ContextId::new(ctx.clone());
    let grant = json!({"permissions": ["geolocation", "notifications"], "browserContextId": ctx});
    let (reply, _) = cdp.call("Browser.grantPermissions", Some(grant), None).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    let set = json!({"permission": {"name": "midi", "sysex": true}, "setting": "denied",
                     "origin": "https://agent.test", "browserContextId": ctx});
    let (reply, _) = cdp.call("Browser.setPermission", Some(set), None).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
    let calls = guests.permissions.lock().unwrap().clone();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].context.clone(), calls[0].origin.clone(), calls[0].permissions.clone(), calls[0].setting),
        (
            context.clone(),
            None,
            vec![PermissionType::Geolocation, PermissionType::Notifications],
            Some(PermissionSetting::Granted)
        )
    );
    assert_eq!(
        (calls[1].origin.as_deref(), calls[1].permissions.clone(), calls[1].setting),
        (Some("https://agent.test"), vec![PermissionType::MidiSysex], Some(PermissionSetting::Denied))
    );
    assert_eq!(person.received("Browser.grantPermissions").len(), 1, "the person's profile is not touched");
    let (reply, _) = cdp.call("Browser.resetPermissions", Some(json!({"browserContextId": "nope"})), None).await;
    assert_eq!(reply["error"]["message"], "Failed to find browser context for id nope");

    // The client leaves: what it set is reset, in the profile and in its context.
    drop(cdp);
    let reset = wait_until(|| {
        !person.received("Browser.resetPermissions").is_empty()
            && guests.permissions.lock().unwrap().iter().any(|c| c.context == context && c.setting.is_none())
    })
    .await;
    assert!(reset, "a leaving client's grants are reset");
    facade.close();
}

#[tokio::test]
async fn a_page_another_opened_names_its_opener_in_its_target_info() {
    let guests = FakeGuests::new();
    let (clicker_id, clicker) = guests.add("https://a.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (reply, _) = cdp.call("Target.setDiscoverTargets", Some(json!({"discover": true})), None).await;
    assert_eq!(reply["result"], json!({}));
    let (opened_id, opened) = guests.add("https://a.test/new", false);
    let opener = cdp_facade::GuestOpener { guest: clicker_id.clone(), can_access: true };
    guests.openers.lock().unwrap().push((opened_id, opener));
    let created = loop {
        let (event, _) = cdp.event("Target.targetCreated").await;
        if event["params"]["targetInfo"]["targetId"] == opened.target_id.as_str() {
            break event;
        }
    };
    let info = &created["params"]["targetInfo"];
    assert_eq!(info["openerId"], clicker.target_id.as_str());
    assert_eq!(info["canAccessOpener"], true);
    // Once the opener is gone it is named no more.
    guests.remove(&clicker_id);
    let (reply, _) = cdp.call("Target.getTargetInfo", Some(json!({"targetId": opened.target_id})), None).await;
    assert!(reply["result"]["targetInfo"].get("openerId").is_none(), "{reply}");
    assert_eq!(reply["result"]["targetInfo"]["canAccessOpener"], false);
    facade.close();
}

#[tokio::test]
async fn service_workers_are_browser_targets_reached_through_a_page_channel() {
    let guests = FakeGuests::new();
    let (_, page) = guests.add("https://a.test/", false);
    let facade = start(&guests);
    let mut cdp = Cdp::connect(&facade.browser_ws_url()).await;
    let (reply, _) = cdp.call("Target.setDiscoverTargets", Some(json!({"discover": true})), None).await;
    assert_eq!(reply["result"], json!({}));
    // One page's channel discovers the browser's workers, filtered to them.
    let asked = page.received("Target.setDiscoverTargets");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["params"]["filter"], json!([{"type": "service_worker"}, {"type": "shared_worker"}]));
    let info = json!({"targetId": "WORKER1", "type": "service_worker", "title": "Service Worker", "url": "https://a.test/sw.js",
                      "attached": false, "canAccessOpener": false, "browserContextId": support::GUEST_CONTEXT});
    page.emit("Target.targetCreated", json!({"targetInfo": info}), None);
    let (created, _) = cdp.event("Target.targetCreated").await;
    assert_eq!(created["params"]["targetInfo"]["targetId"], "WORKER1");
    assert_eq!(created["params"]["targetInfo"]["type"], "service_worker");
    assert!(created.get("sessionId").is_none(), "announced at browser level");
    // The engine's context id is named as the facade names its page's context.
    assert_eq!(created["params"]["targetInfo"]["browserContextId"], facade.browser_context_id());
    let (reply, _) = cdp.call("Target.getTargets", None, None).await;
    let types: Vec<Value> =
        reply["result"]["targetInfos"].as_array().unwrap().iter().map(|i| i["type"].clone()).collect();
    assert_eq!(types, vec![json!("page"), json!("service_worker")]);

    // Attached through the page's channel: the event, the reply, then the script-loaded notice on first use.
    let (reply, before) =
        cdp.call("Target.attachToTarget", Some(json!({"targetId": "WORKER1", "flatten": true})), None).await;
    let sid = reply["result"]["sessionId"].as_str().expect("a session").to_string();
    let attached = before.iter().find(|m| m["method"] == "Target.attachedToTarget").expect("announced first");
    assert_eq!(attached["params"]["sessionId"], sid.as_str());
    assert_eq!(attached["params"]["targetInfo"]["attached"], true);
    let (reply, before) = cdp.call("Runtime.evaluate", Some(json!({"expression": "1"})), Some(&sid)).await;
    assert!(reply["result"].is_object(), "{reply}");
    assert!(before.iter().any(|m| m["method"] == "Inspector.workerScriptLoaded" && m["sessionId"] == sid.as_str()));
    let (reply, _) = cdp.call("Target.attachToTarget", Some(json!({"targetId": "NOPE", "flatten": true})), None).await;
    assert_eq!(reply["error"]["message"], "No target with given id found");

    // The worker ends: gone for the client.
    page.emit("Target.targetDestroyed", json!({"targetId": "WORKER1"}), None);
    let (destroyed, _) = cdp.event("Target.targetDestroyed").await;
    assert_eq!(destroyed["params"]["targetId"], "WORKER1");
    facade.close();
}

fn person_id(guests: &FakeGuests, page: &FakeGuest) -> cdp_facade::GuestId {
    guests.by_target(&page.target_id).unwrap().0
}

/// Polls `done` until it holds or [`WAIT`] passes.
async fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    let end = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < end {
        if done() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    done()
}
