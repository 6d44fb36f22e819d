//! The [`Facade`] handle: starts the virtual CDP browser's HTTP + WebSocket
//! server on its own thread and holds the state shared by its connections.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use crate::browser_env::BrowserEnv;
use crate::client_slot::ClientSlot;
use crate::config::FacadeConfig;
use crate::downloads::DownloadNotifier;
use crate::error::FacadeError;
use crate::guest::Guests;
use crate::http_access::{self, Body};
use crate::server_thread::{bind_loopback, ServerThread};
use crate::shared::Shared;
use crate::{discovery, ws};
use local_guard::Token;

/// The running virtual CDP browser. Dropping it closes it.
pub struct Facade {
    shared: Arc<Shared>,
    server: ServerThread,
}

impl Facade {
    /// Binds 127.0.0.1 on a random port and serves discovery + CDP from a new thread.
    pub fn start(config: FacadeConfig, token: Token, guests: Arc<dyn Guests>) -> Result<Self, FacadeError> {
        let listener = bind_loopback()?;
        let port = listener.local_addr().map_err(FacadeError::Bind)?.port();
        let shared = Arc::new(Shared {
            token,
            port,
            config,
            env: Arc::new(BrowserEnv::new(guests)?),
            clients: ClientSlot::default(),
            guests_changed: Arc::new(tokio::sync::Notify::new()),
            downloads: DownloadNotifier::new(),
        });
        let handler_shared = shared.clone();
        let handler = move |req: Request<Incoming>| {
            let shared = handler_shared.clone();
            async move { route(shared, req).await }
        };
        let stop_shared = shared.clone();
        let on_stop = Box::pin(async move { stop_shared.clients.evict_current().await });
        let server = ServerThread::spawn("cdp-facade", listener, handler, on_stop)?;
        tracing::info!(port, "CDP facade listening on 127.0.0.1");
        Ok(Self { shared, server })
    }

    /// The loopback port.
    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    /// `http://127.0.0.1:<port>` (discovery endpoints need the token as `?token=` or Bearer).
    pub fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// The browser WebSocket URL, token included, as `/json/version` reports it.
    pub fn browser_ws_url(&self) -> String {
        self.shared.browser_ws_url()
    }

    /// The shared browser context id every page target reports.
    pub fn browser_context_id(&self) -> &str {
        &self.shared.env.context_id
    }

    /// A handle the app rings when browser nodes appear or go (any thread).
    pub fn guests_changed_notifier(&self) -> GuestsChanged {
        GuestsChanged(self.shared.guests_changed.clone())
    }

    /// The handle the app tells of its pages' downloads (any thread).
    pub fn download_notifier(&self) -> DownloadNotifier {
        self.shared.downloads.clone()
    }

    /// Disconnects the client (cleaning up its guest sessions) and stops the server.
    pub fn close(mut self) {
        self.server.stop();
    }
}

/// Tells the facade that the set of guests changed, so a connected client
/// hears of a new or closed page now rather than at the next poll (which
/// stays, for anything a notification misses).
#[derive(Clone)]
pub struct GuestsChanged(Arc<tokio::sync::Notify>);

impl GuestsChanged {
    /// Rings the facade; cheap, never blocks, coalesces with pending rings.
    pub fn notify(&self) {
        self.0.notify_one();
    }
}

impl Drop for Facade {
    fn drop(&mut self) {
        self.server.stop();
    }
}

async fn route(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    if !local_guard::host_allowed(req.headers(), shared.port) {
        return http_access::json_error(StatusCode::FORBIDDEN, "forbidden host");
    }
    let path = req.uri().path();
    if path.starts_with("/devtools/") {
        return ws::upgrade(shared, req);
    }
    if path.starts_with("/json") {
        return discovery::handle(&shared, &req).await;
    }
    let mut not_found = Response::new(Full::new(Bytes::from_static(b"not found")));
    *not_found.status_mut() = StatusCode::NOT_FOUND;
    not_found
}
