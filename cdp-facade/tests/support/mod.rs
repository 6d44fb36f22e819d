//! Test doubles for the app side (a fake guest that answers like a Chromium
//! page's DevTools channel) and small clients for HTTP and CDP.

#![allow(dead_code)]

use std::collections::{HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdp_facade::{
    BrowserVersion, ContextId, DownloadBehavior, GuestChannel, GuestError, GuestId, GuestOpener, GuestSink, Guests,
    PermissionSetting, PermissionType, WindowBounds,
};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// Generous guard against hangs on a loaded machine (never an assertion about speed).
pub const WAIT: Duration = Duration::from_secs(30);

/// The real browserContextId a guest reports (the facade must hide it behind its own).
pub const GUEST_CONTEXT: &str = "REALCONTEXT0000000000000000000000";
/// Target id of the cross-site iframe a guest can announce.
pub const IFRAME_TARGET: &str = "IFRAME00000000000000000000000001";

#[derive(Default)]
struct FakeState {
    url: String,
    title: String,
    sinks: Vec<GuestSink>,
    crashed: bool,
    log: Vec<Value>,
    children: HashSet<String>,
    next_child: u32,
    cookies: Vec<Value>,
    /// Requests paused by `Fetch.enable` and not yet continued.
    paused: HashSet<String>,
    next_request: u32,
}

/// A guest page that answers like Chromium would through a DevTools channel.
pub struct FakeGuest {
    pub target_id: String,
    /// Announce one out-of-process iframe on page-level auto-attach.
    pub has_iframe: bool,
    state: Mutex<FakeState>,
}

impl FakeGuest {
    pub fn new(n: u32, url: &str, has_iframe: bool) -> Arc<Self> {
        Arc::new(Self {
            target_id: format!("{:032X}", 0xA1B2_C3D4u64 * u64::from(n) + 7),
            has_iframe,
            state: Mutex::new(FakeState { url: url.into(), title: format!("Page {n}"), ..FakeState::default() }),
        })
    }

    /// Every message the guest received, in order.
    pub fn log(&self) -> Vec<Value> {
        self.state.lock().unwrap().log.clone()
    }

    /// Messages received with this method.
    pub fn received(&self, method: &str) -> Vec<Value> {
        self.log().into_iter().filter(|m| m["method"] == method).collect()
    }

    /// Sinks the facade still wants.
    pub fn live_sinks(&self) -> usize {
        self.state.lock().unwrap().sinks.iter().filter(|s| !s.is_closed()).count()
    }

    /// Requests paused by `Fetch.enable` that no continue has released yet.
    pub fn paused_requests(&self) -> usize {
        self.state.lock().unwrap().paused.len()
    }

    pub fn set_url(&self, url: &str) {
        self.state.lock().unwrap().url = url.into();
    }

    /// Emits an event (on a child session if given) to every sink.
    pub fn emit(&self, method: &str, params: Value, session: Option<&str>) {
        let mut msg = json!({"method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.deliver(vec![msg]);
    }

    /// The renderer dies.
    pub fn crash(&self) {
        let sinks = {
            let mut st = self.state.lock().unwrap();
            st.crashed = true;
            std::mem::take(&mut st.sinks)
        };
        let kept: Vec<GuestSink> = sinks.into_iter().filter(|s| s.renderer_gone()).collect();
        self.state.lock().unwrap().sinks.extend(kept);
    }

    fn deliver(&self, messages: Vec<Value>) {
        // Delivered without holding the lock, like CEF's observer callback.
        let sinks = std::mem::take(&mut self.state.lock().unwrap().sinks);
        let mut kept = Vec::new();
        for sink in sinks {
            let alive = messages.iter().all(|m| sink.deliver(m.to_string()));
            if alive {
                kept.push(sink);
            }
        }
        self.state.lock().unwrap().sinks.extend(kept);
    }

    fn reply(id: &Value, result: Value, session: Option<&str>) -> Value {
        // Chromium puts sessionId last.
        match session {
            Some(s) => json!({"id": id, "result": result, "sessionId": s}),
            None => json!({"id": id, "result": result}),
        }
    }

    fn respond(&self, msg: &Value) -> Vec<Value> {
        let id = &msg["id"];
        let method = msg["method"].as_str().unwrap_or_default();
        let params = &msg["params"];
        let session = msg["sessionId"].as_str();
        let mut st = self.state.lock().unwrap();
        if let Some(child) = session {
            if !st.children.contains(child) {
                return vec![
                    json!({"id": id, "error": {"code": -32001, "message": "Session with given id not found."}, "sessionId": child}),
                ];
            }
            return match method {
                "Runtime.evaluate" => {
                    vec![Self::reply(id, json!({"result": {"type": "string", "value": "in-iframe"}}), Some(child))]
                }
                "Test.hang" => vec![],
                "Page.captureScreenshot" if params.get("fromSurface").is_some_and(|v| v != true) => {
                    st.crashed = true;
                    vec![]
                }
                _ => vec![Self::reply(id, json!({}), Some(child))],
            };
        }
        match method {
            "Target.getTargetInfo" => vec![Self::reply(
                id,
                json!({"targetInfo": {"targetId": self.target_id, "type": "page", "title": st.title, "url": st.url,
                       "attached": true, "canAccessOpener": false, "browserContextId": GUEST_CONTEXT}}),
                None,
            )],
            "Runtime.evaluate" => {
                vec![Self::reply(id, json!({"result": {"type": "number", "value": 2, "description": "2"}}), None)]
            }
            "Page.getFrameTree" => vec![Self::reply(
                id,
                json!({"frameTree": {"frame": {"id": self.target_id, "loaderId": "L1", "url": st.url,
                       "securityOrigin": "://", "mimeType": "text/html"}}}),
                None,
            )],
            "Page.navigate" => {
                st.url = params["url"].as_str().unwrap_or_default().to_string();
                vec![
                    json!({"method": "Page.frameNavigated", "params": {"frame": {"id": self.target_id, "url": st.url}}}),
                    Self::reply(id, json!({"frameId": self.target_id, "loaderId": "L2"}), None),
                ]
            }
            "Target.setAutoAttach" => {
                let mut out = Vec::new();
                if params["autoAttach"] == true && self.has_iframe {
                    st.next_child += 1;
                    let sid = format!("CHILD{:027}", st.next_child);
                    st.children.insert(sid.clone());
                    out.push(json!({"method": "Target.attachedToTarget", "params": {"sessionId": sid,
                        "targetInfo": {"targetId": IFRAME_TARGET, "type": "iframe", "title": "", "url": "https://other.test/",
                                       "attached": true, "canAccessOpener": false, "browserContextId": GUEST_CONTEXT},
                        "waitingForDebugger": true}}));
                }
                out.push(Self::reply(id, json!({}), None));
                out
            }
            // A worker target (ids starting "WORKER"), attached as a flat child session.
            "Target.attachToTarget" if params["targetId"].as_str().is_some_and(|t| t.starts_with("WORKER")) => {
                st.next_child += 1;
                let sid = format!("CHILD{:027}", st.next_child);
                st.children.insert(sid.clone());
                vec![
                    json!({"method": "Target.attachedToTarget", "params": {"sessionId": sid,
                        "targetInfo": {"targetId": params["targetId"], "type": "service_worker", "title": "", "url": "https://a.test/sw.js",
                                       "attached": true, "canAccessOpener": false, "browserContextId": GUEST_CONTEXT},
                        "waitingForDebugger": false}}),
                    Self::reply(id, json!({"sessionId": sid}), None),
                ]
            }
            "Target.detachFromTarget" => {
                let sid = params["sessionId"].as_str().unwrap_or_default().to_string();
                if st.children.remove(&sid) {
                    vec![
                        json!({"method": "Target.detachedFromTarget", "params": {"sessionId": sid, "targetId": IFRAME_TARGET}}),
                        Self::reply(id, json!({}), None),
                    ]
                } else {
                    vec![json!({"id": id, "error": {"code": -32602, "message": "No session with given id"}})]
                }
            }
            "Storage.getCookies" => vec![Self::reply(id, json!({"cookies": st.cookies}), None)],
            "Storage.setCookies" => {
                let new = params["cookies"].as_array().cloned().unwrap_or_default();
                st.cookies.extend(new);
                vec![Self::reply(id, json!({}), None)]
            }
            "Storage.clearCookies" => {
                st.cookies.clear();
                vec![Self::reply(id, json!({}), None)]
            }
            // Like Chromium with a page behind HTTP auth: with `handleAuthRequests`, the next
            // request pauses and its challenge is announced; each must be continued once.
            "Fetch.enable" => {
                let mut out = vec![Self::reply(id, json!({}), None)];
                if params["handleAuthRequests"] == true {
                    st.next_request += 1;
                    let rid = format!("interception-job-{}.0", st.next_request);
                    st.paused.insert(rid.clone());
                    let request = json!({"url": st.url, "method": "GET", "headers": {}});
                    out.push(json!({"method": "Fetch.requestPaused", "params": {"requestId": rid, "request": request,
                        "frameId": self.target_id, "resourceType": "Document"}}));
                    out.push(json!({"method": "Fetch.authRequired", "params": {"requestId": rid, "request": request,
                        "frameId": self.target_id, "resourceType": "Document",
                        "authChallenge": {"source": "Server", "origin": st.url, "scheme": "basic", "realm": "test"}}}));
                }
                out
            }
            "Fetch.continueRequest" | "Fetch.continueWithAuth" | "Fetch.failRequest" => {
                let rid = params["requestId"].as_str().unwrap_or_default();
                // authRequired and requestPaused share the id; the first continue releases it.
                if st.paused.contains(rid) {
                    if method != "Fetch.continueRequest" {
                        st.paused.remove(rid);
                    }
                    vec![Self::reply(id, json!({}), None)]
                } else {
                    vec![json!({"id": id, "error": {"code": -32602, "message": "Invalid InterceptionId."}})]
                }
            }
            "Fetch.disable" => {
                st.paused.clear();
                vec![Self::reply(id, json!({}), None)]
            }
            // A capture that is not from the surface: what crashed CEF's off-screen browsers.
            "Page.captureScreenshot" if params.get("fromSurface").is_some_and(|v| v != true) => {
                st.crashed = true;
                vec![]
            }
            "Page.captureScreenshot" => vec![Self::reply(id, json!({"data": "iVBORw0KGgo="}), None)],
            "Test.hang" => vec![],
            "Test.fail" => vec![json!({"id": id, "error": {"code": -32000, "message": "failed on purpose"}})],
            _ => vec![Self::reply(id, json!({}), None)],
        }
    }

    /// Sends as the app's own tool runtime would (ids below the facade's range); the reply goes to every sink.
    pub fn app_send(&self, id: i64, method: &str) {
        let msg = json!({"id": id, "method": method});
        self.state.lock().unwrap().log.push(msg.clone());
        let out = match method {
            "Runtime.evaluate" => vec![Self::reply(&json!(id), json!({"app": true}), None)],
            _ => self.respond(&msg),
        };
        self.deliver(out);
    }
}

impl GuestChannel for FakeGuest {
    fn send(&self, message: &str) -> Result<(), GuestError> {
        let msg: Value = serde_json::from_str(message).map_err(|e| GuestError::new(e.to_string()))?;
        {
            let mut st = self.state.lock().unwrap();
            if st.crashed {
                return Err(GuestError::new("renderer gone"));
            }
            st.log.push(msg.clone());
        }
        let out = self.respond(&msg);
        // Re-entrant delivery inside send(), as CEF does for Target.* replies.
        self.deliver(out);
        Ok(())
    }

    fn subscribe(&self, sink: GuestSink) {
        let mut st = self.state.lock().unwrap();
        st.sinks.retain(|s| !s.is_closed());
        st.sinks.push(sink);
    }

    fn crashed(&self) -> bool {
        self.state.lock().unwrap().crashed
    }
}

/// One permission change an isolated context was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionCall {
    pub context: ContextId,
    pub origin: Option<String>,
    pub permissions: Vec<PermissionType>,
    /// `None`: a reset.
    pub setting: Option<PermissionSetting>,
}

/// The app's registry of browser nodes.
#[derive(Default)]
pub struct FakeGuests {
    guests: Mutex<Vec<(GuestId, Arc<FakeGuest>)>>,
    pub opened: Mutex<Vec<String>>,
    pub closed: Mutex<Vec<GuestId>>,
    pub activated: Mutex<Vec<GuestId>>,
    /// Guests whose page was given focus through `focus_page`.
    pub page_focused: Mutex<Vec<GuestId>>,
    /// Guests a client needed painted (`paint_for_client`), in order.
    pub painted_for: Mutex<Vec<GuestId>>,
    /// Every focus emulation change: guest and on.
    pub focus_emulation: Mutex<Vec<(GuestId, bool)>>,
    /// Guests whose page shows a JavaScript dialog now.
    pub dialogs: Mutex<HashSet<GuestId>>,
    /// Every dialog answer: guest, accept, prompt text.
    pub answers: Mutex<Vec<(GuestId, bool, Option<String>)>>,
    /// Page sizes set through `resize_window` (800x600 until then).
    pub sizes: Mutex<Vec<(GuestId, u32, u32)>>,
    /// Every download behaviour set, in order, with the context it was set for.
    pub download_behaviors: Mutex<Vec<(Option<ContextId>, DownloadBehavior)>>,
    /// Live isolated contexts, in creation order.
    pub contexts: Mutex<Vec<ContextId>>,
    /// The context of each guest opened in one.
    pub guest_contexts: Mutex<Vec<(GuestId, ContextId)>>,
    /// Contexts disposed, in order.
    pub disposed: Mutex<Vec<ContextId>>,
    /// Each guest's opener, as the app would report it.
    pub openers: Mutex<Vec<(GuestId, GuestOpener)>>,
    /// Permission changes of isolated contexts, in order (`None` setting: a reset).
    pub permissions: Mutex<Vec<PermissionCall>>,
    next: AtomicU32,
}

impl FakeGuests {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Adds a live guest, as if the user opened a browser node.
    pub fn add(&self, url: &str, has_iframe: bool) -> (GuestId, Arc<FakeGuest>) {
        let n = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let id = GuestId::new(format!("node{n}::tab1"));
        let guest = FakeGuest::new(n, url, has_iframe);
        self.guests.lock().unwrap().push((id.clone(), guest.clone()));
        (id, guest)
    }

    /// Removes a guest, as if its node was closed in the app.
    pub fn remove(&self, id: &GuestId) {
        self.guests.lock().unwrap().retain(|(g, _)| g != id);
    }

    pub fn get(&self, id: &GuestId) -> Option<Arc<FakeGuest>> {
        self.guests.lock().unwrap().iter().find(|(g, _)| g == id).map(|(_, f)| f.clone())
    }

    pub fn by_target(&self, target_id: &str) -> Option<(GuestId, Arc<FakeGuest>)> {
        self.guests.lock().unwrap().iter().find(|(_, f)| f.target_id == target_id).cloned()
    }
}

impl Guests for FakeGuests {
    fn list(&self) -> Vec<GuestId> {
        self.guests.lock().unwrap().iter().map(|(g, _)| g.clone()).collect()
    }

    fn channel(&self, id: &GuestId) -> Option<Arc<dyn GuestChannel>> {
        self.get(id).map(|g| g as Arc<dyn GuestChannel>)
    }

    fn open(&self, url: &str, context: Option<&ContextId>) -> Result<GuestId, GuestError> {
        self.opened.lock().unwrap().push(url.to_string());
        let id = self.add(url, false).0;
        if let Some(c) = context {
            self.guest_contexts.lock().unwrap().push((id.clone(), c.clone()));
        }
        Ok(id)
    }

    fn create_context(&self) -> Result<ContextId, GuestError> {
        let mut contexts = self.contexts.lock().unwrap();
        let id = ContextId::new(format!("ctx-{}", contexts.len() + self.disposed.lock().unwrap().len() + 1));
        contexts.push(id.clone());
        Ok(id)
    }

    fn dispose_context(&self, id: &ContextId) -> Result<(), GuestError> {
        let mut contexts = self.contexts.lock().unwrap();
        if !contexts.contains(id) {
            return Err(GuestError::new("no such context"));
        }
        contexts.retain(|c| c != id);
        let pages: Vec<GuestId> =
            self.guest_contexts.lock().unwrap().iter().filter(|(_, c)| c == id).map(|(g, _)| g.clone()).collect();
        for g in &pages {
            self.remove(g);
        }
        self.disposed.lock().unwrap().push(id.clone());
        Ok(())
    }

    fn contexts(&self) -> Vec<ContextId> {
        self.contexts.lock().unwrap().clone()
    }

    fn context_of(&self, id: &GuestId) -> Option<ContextId> {
        let live = self.contexts.lock().unwrap();
        self.guest_contexts.lock().unwrap().iter().find(|(g, c)| g == id && live.contains(c)).map(|(_, c)| c.clone())
    }

    fn close(&self, id: &GuestId) -> Result<(), GuestError> {
        if self.get(id).is_none() {
            return Err(GuestError::new("no such node"));
        }
        self.remove(id);
        self.closed.lock().unwrap().push(id.clone());
        Ok(())
    }

    fn activate(&self, id: &GuestId) {
        self.activated.lock().unwrap().push(id.clone());
    }

    fn focus_page(&self, id: &GuestId) {
        self.page_focused.lock().unwrap().push(id.clone());
    }

    fn paint_for_client(&self, id: &GuestId) {
        self.painted_for.lock().unwrap().push(id.clone());
    }

    fn emulate_focus(&self, id: &GuestId, on: bool) {
        self.focus_emulation.lock().unwrap().push((id.clone(), on));
    }

    fn normalize_url(&self, raw: &str) -> Result<String, GuestError> {
        let raw = raw.trim();
        if raw == "about:blank" || raw.starts_with("http://") || raw.starts_with("https://") {
            Ok(raw.to_string())
        } else {
            Err(GuestError::new("scheme not allowed"))
        }
    }

    fn answer_dialog(&self, id: &GuestId, accept: bool, prompt_text: Option<&str>) -> Result<(), GuestError> {
        if !self.dialogs.lock().unwrap().remove(id) {
            return Err(GuestError::new("No dialog is showing"));
        }
        self.answers.lock().unwrap().push((id.clone(), accept, prompt_text.map(str::to_string)));
        Ok(())
    }

    fn window_bounds(&self, id: &GuestId) -> Option<WindowBounds> {
        self.get(id)?;
        let sizes = self.sizes.lock().unwrap();
        let (width, height) =
            sizes.iter().rev().find(|(g, ..)| g == id).map(|(_, w, h)| (*w, *h)).unwrap_or((800, 600));
        Some(WindowBounds { left: 100, top: 50, width, height })
    }

    fn opener(&self, id: &GuestId) -> Option<GuestOpener> {
        // As the app: only while the opener lives.
        let opener = self.openers.lock().unwrap().iter().find(|(g, _)| g == id).map(|(_, o)| o.clone())?;
        self.get(&opener.guest).map(|_| opener)
    }

    fn set_permissions(
        &self,
        context: &ContextId,
        origin: Option<&str>,
        permissions: &[PermissionType],
        setting: PermissionSetting,
    ) -> Result<(), GuestError> {
        if !self.contexts.lock().unwrap().contains(context) {
            return Err(GuestError::new("no such context"));
        }
        self.permissions.lock().unwrap().push(PermissionCall {
            context: context.clone(),
            origin: origin.map(str::to_string),
            permissions: permissions.to_vec(),
            setting: Some(setting),
        });
        Ok(())
    }

    fn reset_permissions(&self, context: &ContextId) -> Result<(), GuestError> {
        if !self.contexts.lock().unwrap().contains(context) {
            return Err(GuestError::new("no such context"));
        }
        let call = PermissionCall { context: context.clone(), origin: None, permissions: vec![], setting: None };
        self.permissions.lock().unwrap().push(call);
        Ok(())
    }

    fn set_download_behavior(&self, context: Option<&ContextId>, behavior: DownloadBehavior) -> Result<(), GuestError> {
        self.download_behaviors.lock().unwrap().push((context.cloned(), behavior));
        Ok(())
    }

    fn resize_window(&self, id: &GuestId, width: u32, height: u32) -> Result<(), GuestError> {
        self.get(id).ok_or_else(|| GuestError::new("no such node"))?;
        self.sizes.lock().unwrap().push((id.clone(), width, height));
        Ok(())
    }

    fn version(&self) -> BrowserVersion {
        BrowserVersion {
            product: "Chrome/131.0.6778.205".into(),
            revision: "@abc".into(),
            user_agent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0 Safari/537.36".into(),
            js_version: "13.1.201.22".into(),
        }
    }
}

/// One raw HTTP/1.1 exchange (the request must ask for `Connection: close`): status and body.
pub fn http(port: u16, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let _ = stream.write_all(request.as_bytes());
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// A GET with the usual headers plus `extra` lines.
pub fn get(port: u16, path: &str, extra: &str) -> (u16, String) {
    http(port, &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}Connection: close\r\n\r\n"))
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A minimal CDP client over a real WebSocket.
pub struct Cdp {
    pub ws: Ws,
    next_id: i64,
    backlog: VecDeque<Value>,
}

impl Cdp {
    pub async fn connect(url: &str) -> Self {
        let (ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(url)).await.unwrap().unwrap();
        Self::from_ws(ws)
    }

    pub fn from_ws(ws: Ws) -> Self {
        Self { ws, next_id: 0, backlog: VecDeque::new() }
    }

    /// Sends a command; returns its id.
    pub async fn send(&mut self, method: &str, params: Option<Value>, session: Option<&str>) -> i64 {
        self.next_id += 1;
        let mut msg = json!({"id": self.next_id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::Text(msg.to_string().into())).await.unwrap();
        self.next_id
    }

    /// The next message from the facade.
    pub async fn next(&mut self) -> Value {
        if let Some(v) = self.backlog.pop_front() {
            return v;
        }
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next()).await.expect("timed out waiting for the facade");
            match frame {
                Some(Ok(Message::Text(t))) => return serde_json::from_str(t.as_str()).unwrap(),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => panic!("expected a CDP message, got {other:?}"),
            }
        }
    }

    /// Sends a command and returns (reply, everything received before it).
    pub async fn call(&mut self, method: &str, params: Option<Value>, session: Option<&str>) -> (Value, Vec<Value>) {
        let id = self.send(method, params, session).await;
        self.reply_to(id).await
    }

    /// Waits for the reply to `id`; returns it and what came before it.
    pub async fn reply_to(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let msg = self.next().await;
            if msg["id"] == id {
                return (msg, before);
            }
            before.push(msg);
        }
    }

    /// Waits for an event by name; returns it and what came before it.
    pub async fn event(&mut self, method: &str) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let msg = self.next().await;
            if msg["method"] == method {
                return (msg, before);
            }
            before.push(msg);
        }
    }

    /// Puts messages back to be read again first.
    pub fn unread(&mut self, messages: Vec<Value>) {
        for m in messages.into_iter().rev() {
            self.backlog.push_front(m);
        }
    }

    /// Reads until the server closes; returns the close code.
    pub async fn close_code(&mut self) -> Option<u16> {
        loop {
            match tokio::time::timeout(WAIT, self.ws.next()).await.expect("timed out waiting for close") {
                Some(Ok(Message::Close(frame))) => return frame.map(|f| u16::from(f.code)),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return None,
            }
        }
    }
}

/// Events by method name.
pub fn methods(messages: &[Value]) -> Vec<String> {
    messages.iter().filter_map(|m| m["method"].as_str().map(String::from)).collect()
}
