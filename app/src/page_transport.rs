//! cef-bridge's DevTools channel as page-driver's [`Transport`]: how every
//! part of the app that drives a page (the browser tools, `shot`, the canvas
//! shot) reaches it. Only raw calls pass here; what they mean is
//! page-driver's. (The CDP facade relays a client's text untouched through
//! `runtime/facade_channel.rs` instead.)

use cef_bridge::{DevToolsChannel, DevToolsError, PendingReply};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use page_driver::{
    Answer, CdpError, CdpPage, DriveError, EventStream, FrameId, InFlight, Method, RawEvent, SessionId, Transport,
    TransportError,
};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// A page driven over its browser's DevTools channel.
pub fn cdp_page(channel: Arc<DevToolsChannel>) -> CdpPage<ChannelTransport> {
    CdpPage::new(ChannelTransport { channel })
}

/// A browser's DevTools channel, as page-driver's transport.
pub struct ChannelTransport {
    channel: Arc<DevToolsChannel>,
}

impl Transport for ChannelTransport {
    fn send(
        &self,
        session: Option<&SessionId>,
        method: Method,
        params: Value,
    ) -> Result<Box<dyn InFlight>, TransportError> {
        let pending = self.channel.request(method.name(), params, session.map(SessionId::as_str)).map_err(failed)?;
        Ok(Box::new(Flight(pending)))
    }

    fn events(&self) -> Box<dyn EventStream> {
        Box::new(Events(self.channel.subscribe()))
    }

    fn crashed(&self) -> bool {
        self.channel.crashed()
    }

    fn attach_hidden(&self, frame: &FrameId, timeout: Duration) -> Result<SessionId, DriveError> {
        match self.channel.attach_private(frame.as_str(), timeout) {
            Ok(id) => Ok(SessionId::new(id)),
            Err(DevToolsError::Protocol { code, message, data, .. }) => {
                Err(DriveError::Protocol { method: Method::AttachToTarget, error: CdpError { code, message, data } })
            }
            Err(DevToolsError::Timeout { timeout, .. }) => {
                Err(DriveError::Timeout { method: Method::AttachToTarget, timeout })
            }
            Err(e) => Err(failed(e).into()),
        }
    }

    fn detach_hidden(&self, session: &SessionId, timeout: Duration) {
        self.channel.detach_private(session.as_str(), timeout);
    }
}

/// The channel's own failure (closed, malformed), kept as the source.
fn failed(e: DevToolsError) -> TransportError {
    TransportError::Failed(Box::new(e))
}

/// One command's reply on its way through the channel.
struct Flight(PendingReply);

impl InFlight for Flight {
    fn poll(&mut self, wait: Duration) -> Option<Result<Answer, TransportError>> {
        match self.0.receiver().recv_timeout(wait) {
            Ok(raw) => Some(
                raw.and_then(|r| r.parse())
                    .map_err(failed)
                    .map(|reply| reply.map_err(|e| CdpError { code: e.code, message: e.message, data: e.data })),
            ),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err(TransportError::Gone)),
        }
    }

    fn is_answered(&self) -> bool {
        !self.0.receiver().is_empty()
    }
}

/// The channel's events.
struct Events(Receiver<cef_bridge::DevToolsEvent>);

impl EventStream for Events {
    fn next(&mut self, wait: Duration) -> Result<Option<RawEvent>, TransportError> {
        match self.0.recv_timeout(wait) {
            Ok(e) => Ok(Some(RawEvent { method: e.method, params: e.params })),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(TransportError::Gone),
        }
    }
}
