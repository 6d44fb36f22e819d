//! A loopback HTTP/1 server on its own thread with its own tokio runtime.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::pin::Pin;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::oneshot;

use crate::error::FacadeError;
use crate::http_access::Body;

/// How long stopping waits for in-flight blocking calls into the app.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Most HTTP connections served at once (WebSockets excluded once upgraded);
/// at the cap a new connection replaces the one idle the longest.
const MAX_CONNECTIONS: usize = 512;

/// A boxed future run once when the server stops (before its runtime is dropped).
pub(crate) type ShutdownHook = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Binds 127.0.0.1 on an OS-assigned port.
pub(crate) fn bind_loopback() -> Result<StdListener, FacadeError> {
    let listener = StdListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(FacadeError::Bind)?;
    listener.set_nonblocking(true).map_err(FacadeError::Bind)?;
    Ok(listener)
}

/// A running server; dropping or [`ServerThread::stop`] ends it.
#[derive(Debug)]
pub(crate) struct ServerThread {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    join: Option<JoinHandle<()>>,
}

impl ServerThread {
    /// Serves `handler` on `listener` from a new thread named `name`; `on_stop` runs before the thread ends.
    pub(crate) fn spawn<H, F>(
        name: &str,
        listener: StdListener,
        handler: H,
        on_stop: ShutdownHook,
    ) -> Result<Self, FacadeError>
    where
        H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
        F: Future<Output = Response<Body>> + Send + 'static,
    {
        let addr = listener.local_addr().map_err(FacadeError::Bind)?;
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(FacadeError::Runtime)?;
        let (stop_tx, stop_rx) = oneshot::channel();
        let thread_name = name.to_string();
        let join = std::thread::Builder::new()
            .name(thread_name.clone())
            .spawn(move || {
                runtime.block_on(serve(thread_name, listener, handler, stop_rx, on_stop));
                // A blocking call into the app (e.g. an open waiting on a busy main thread) must not hang shutdown.
                runtime.shutdown_timeout(SHUTDOWN_GRACE);
            })
            .map_err(FacadeError::Runtime)?;
        Ok(Self { addr, stop: Some(stop_tx), join: Some(join) })
    }

    /// The bound address.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, runs the stop hook, ends every connection and joins the thread.
    pub(crate) fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(join) = self.join.take() {
            if join.join().is_err() {
                tracing::error!("server thread panicked");
            }
        }
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn serve<H, F>(
    name: String,
    listener: StdListener,
    handler: H,
    mut stop: oneshot::Receiver<()>,
    on_stop: ShutdownHook,
) where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(server = %name, error = %e, "could not register the listener; endpoint unavailable");
            return;
        }
    };
    let slots = conn_slots::Slots::new(MAX_CONNECTIONS);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Typically EMFILE: back off instead of spinning.
                        tracing::warn!(server = %name, error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // At the cap, the connection idle the longest makes way: a slowloris
                // flood cannot lock real clients out, and memory stays bounded.
                let slot = match slots.admit() {
                    Ok(slot) => Arc::new(slot),
                    Err(e) => {
                        tracing::warn!(server = %name, error = %e, "connection limit reached; closing new connection");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let handler = handler.clone();
                tokio::spawn(async move {
                    let request_slot = slot.clone();
                    let service = service_fn(move |req| {
                        request_slot.busy();
                        let fut = handler(req);
                        let slot = request_slot.clone();
                        async move {
                            let response = fut.await;
                            slot.idle();
                            Ok::<_, std::convert::Infallible>(response)
                        }
                    });
                    // Upgraded (WebSocket) connections leave this future, and their slot, once switched.
                    let conn = http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(Duration::from_secs(30))
                        .serve_connection(TokioIo::new(stream), service)
                        .with_upgrades();
                    tokio::select! {
                        result = conn => {
                            if let Err(e) = result {
                                tracing::debug!(error = %e, "http connection ended with an error");
                            }
                        }
                        _ = slot.evicted() => tracing::debug!("idle connection evicted for a new one"),
                    }
                });
            }
        }
    }
    drop(listener);
    on_stop.await;
}
