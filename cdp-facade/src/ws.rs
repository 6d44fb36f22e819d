//! The CDP WebSocket: upgrade checks, token check (close 4001), the
//! one-client-at-a-time slot, frame limits and the socket read/write loops
//! around the [`Router`].

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_VERSION, UPGRADE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use crate::client_slot::evict;
use crate::http_access::{self, Body};
use crate::router::{Outgoing, Router};
use crate::shared::Shared;

/// Close code for a missing or wrong token.
pub const CLOSE_UNAUTHORIZED: u16 = 4001;
/// How often guests are polled for newcomers, deaths and crashes.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long the socket is kept to finish a close handshake.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

fn header_has_token(req: &Request<Incoming>, name: hyper::header::HeaderName, token: &str) -> bool {
    req.headers()
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// Answers a request for `/devtools/...` (Host already checked): 101 and a client task, or an error status.
pub(crate) fn upgrade(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let mut response = accept_upgrade(shared, req);
    if response.status() != StatusCode::SWITCHING_PROTOCOLS {
        // A refused upgrade ends the connection rather than leaving it idle.
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn accept_upgrade(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    // Browsers always send Origin; CDP clients never do. This stops web pages from driving guests.
    if local_guard::from_browser(req.headers()) {
        return http_access::json_error(StatusCode::FORBIDDEN, "Origin header is not allowed");
    }
    if req.uri().path() != shared.browser_ws_path() {
        return http_access::json_error(StatusCode::NOT_FOUND, "not found");
    }
    let is_upgrade = req.method() == Method::GET
        && header_has_token(&req, UPGRADE, "websocket")
        && header_has_token(&req, CONNECTION, "upgrade")
        && req.headers().get(SEC_WEBSOCKET_VERSION).is_some_and(|v| v == "13");
    let Some(key) = req.headers().get(SEC_WEBSOCKET_KEY).filter(|_| is_upgrade) else {
        return http_access::json_error(StatusCode::BAD_REQUEST, "expected a WebSocket upgrade");
    };
    let accept = derive_accept_key(key.as_bytes());
    let authorized = http_access::authorized(&shared.token, req.headers(), req.uri(), true);
    tokio::spawn(async move {
        let upgraded = match hyper::upgrade::on(req).await {
            Ok(u) => u,
            Err(e) => {
                tracing::debug!(error = %e, "WebSocket upgrade failed");
                return;
            }
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(shared.config.max_message_bytes))
            .max_frame_size(Some(shared.config.max_message_bytes));
        let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
        if authorized {
            run_client(shared, ws).await;
        } else {
            tracing::info!("CDP client rejected: missing or wrong token");
            reject(ws).await;
        }
    });
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        headers.insert(SEC_WEBSOCKET_ACCEPT, v);
    }
    // No Sec-WebSocket-Extensions: permessage-deflate is declined.
    response
}

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

async fn reject(mut ws: Socket) {
    let frame = CloseFrame { code: CloseCode::from(CLOSE_UNAUTHORIZED), reason: "Unauthorized".into() };
    if ws.send(Message::Close(Some(frame))).await.is_ok() {
        // Let the client answer the close so it reads our code rather than a reset.
        let _ = tokio::time::timeout(CLOSE_GRACE, async { while let Some(Ok(_)) = ws.next().await {} }).await;
    }
}

async fn run_client(shared: Arc<Shared>, ws: Socket) {
    let (mut claim, previous) = shared.clients.claim();
    if let Some(previous) = previous {
        tracing::info!("a new CDP client replaces the connected one");
        evict(previous).await;
    }
    tracing::info!("CDP client connected");
    let (sink, mut stream) = ws.split();
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_loop(sink, out_rx));
    let (mut router, mut inputs) = Router::new(shared.clone(), out_tx.clone());
    let mut downloads = shared.downloads.0.subscribe();
    let mut poll = tokio::time::interval(POLL_INTERVAL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);

    let close: Option<(u16, &'static str)> = loop {
        tokio::select! {
            biased;
            _ = &mut claim.evicted => break Some((1001, "replaced by a newer CDP client")),
            Some((tag, event)) = inputs.guest.recv() => router.on_guest(tag, event),
            Some(completion) = inputs.completions.recv() => router.on_completion(completion),
            notice = downloads.recv() => match notice {
                Ok(notice) => router.on_download(notice),
                Err(broadcast::error::RecvError::Lagged(n)) => tracing::warn!(n, "download events dropped for a slow client"),
                // Shared holds the sender for as long as this loop runs.
                Err(broadcast::error::RecvError::Closed) => {}
            },
            frame = stream.next() => match frame {
                None | Some(Ok(Message::Close(_))) => break None,
                Some(Ok(Message::Text(text))) => router.on_client_text(text.as_str()),
                Some(Ok(Message::Binary(_))) => break Some((1003, "binary frames are not supported")),
                Some(Ok(_)) => {}
                Some(Err(WsError::Capacity(_))) => break Some((1009, "message too big")),
                Some(Err(WsError::Utf8(_))) => break Some((1007, "invalid UTF-8")),
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "CDP socket error");
                    break None;
                }
            },
            _ = poll.tick() => router.on_poll(),
            _ = shared.guests_changed.notified() => router.on_poll(),
        }
        if let Some(close) = router.take_close() {
            break Some(close);
        }
    };
    router.shutdown();
    drop(router);
    if let Some((code, reason)) = close {
        let _ = out_tx.send(Outgoing::Close(code, reason));
        // Read on (discarding) so the close handshake completes and the client sees our code.
        let _ = tokio::time::timeout(CLOSE_GRACE, async {
            while let Some(frame) = stream.next().await {
                match frame {
                    Ok(_) | Err(WsError::Capacity(_)) | Err(WsError::Utf8(_)) => {}
                    Err(_) => break,
                }
            }
        })
        .await;
    }
    drop(out_tx);
    let _ = tokio::time::timeout(CLOSE_GRACE, writer).await;
    shared.clients.release(claim.id);
    tracing::info!("CDP client disconnected");
}

async fn write_loop(
    mut sink: futures_util::stream::SplitSink<Socket, Message>,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) {
    'outer: while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        // Batch whatever is queued into one flush.
        while let Some(item) = next.take() {
            match item {
                Outgoing::Text(text) => {
                    if sink.feed(Message::Text(text.into())).await.is_err() {
                        break 'outer;
                    }
                }
                Outgoing::Close(code, reason) => {
                    let frame = CloseFrame { code: CloseCode::from(code), reason: reason.into() };
                    let _ = sink.send(Message::Close(Some(frame))).await;
                    break 'outer;
                }
            }
            next = rx.try_recv().ok();
        }
        if sink.flush().await.is_err() {
            break;
        }
    }
    let _ = sink.close().await;
}
