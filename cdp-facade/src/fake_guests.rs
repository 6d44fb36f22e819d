//! Test doubles of the app side for the crate's unit tests: [`FakeGuests`]
//! (a list of pages, their windows and contexts, what the app was asked)
//! and [`FakeChannel`], which records what is sent and answers nothing —
//! a test hands the browser its completions itself.

use std::sync::{Arc, Mutex};

use crate::guest::{
    BrowserVersion, ContextId, DownloadBehavior, GuestChannel, GuestError, GuestId, GuestOpener, GuestSink, Guests,
    PermissionSetting, PermissionType, WindowBounds,
};

/// A guest channel that records each message and never answers.
#[derive(Default)]
pub(crate) struct FakeChannel {
    sent: Mutex<Vec<String>>,
    sinks: Mutex<Vec<GuestSink>>,
    crashed: Mutex<bool>,
}

impl FakeChannel {
    /// The messages sent so far.
    pub(crate) fn sent(&self) -> Vec<String> {
        self.sent.lock().unwrap().clone()
    }

    /// The renderer dies (or comes back).
    pub(crate) fn set_crashed(&self, crashed: bool) {
        *self.crashed.lock().unwrap() = crashed;
    }
}

impl GuestChannel for FakeChannel {
    fn send(&self, message: &str) -> Result<(), GuestError> {
        self.sent.lock().unwrap().push(message.to_string());
        Ok(())
    }

    fn subscribe(&self, sink: GuestSink) {
        self.sinks.lock().unwrap().push(sink);
    }

    fn crashed(&self) -> bool {
        *self.crashed.lock().unwrap()
    }
}

/// One page of the fake app.
struct Page {
    id: GuestId,
    channel: Arc<FakeChannel>,
    bounds: WindowBounds,
    context: Option<ContextId>,
}

/// The app's browser nodes, as a test sets them up.
#[derive(Default)]
pub(crate) struct FakeGuests {
    pages: Mutex<Vec<Page>>,
    contexts: Mutex<Vec<ContextId>>,
    /// Download behaviours set, in order.
    pub(crate) behaviors: Mutex<Vec<(Option<ContextId>, DownloadBehavior)>>,
}

impl FakeGuests {
    /// Adds a page of the person's profile; its channel.
    pub(crate) fn add(&self, id: &str) -> Arc<FakeChannel> {
        self.add_in(id, None)
    }

    /// Adds a page of an isolated context (made known to `contexts`); its channel.
    pub(crate) fn add_in(&self, id: &str, context: Option<&str>) -> Arc<FakeChannel> {
        let channel = Arc::new(FakeChannel::default());
        let context = context.map(ContextId::new);
        if let Some(c) = &context {
            let mut contexts = self.contexts.lock().unwrap();
            if !contexts.contains(c) {
                contexts.push(c.clone());
            }
        }
        let bounds = WindowBounds { left: 10, top: 20, width: 800, height: 600 };
        self.pages.lock().unwrap().push(Page { id: GuestId::from(id), channel: channel.clone(), bounds, context });
        channel
    }

    /// The page goes away.
    pub(crate) fn remove(&self, id: &str) {
        self.pages.lock().unwrap().retain(|p| p.id.as_str() != id);
    }

    /// The page's channel, as the fake typed it.
    pub(crate) fn fake_channel(&self, id: &str) -> Arc<FakeChannel> {
        let pages = self.pages.lock().unwrap();
        pages.iter().find(|p| p.id.as_str() == id).map(|p| p.channel.clone()).expect("a page of that id")
    }
}

impl Guests for FakeGuests {
    fn list(&self) -> Vec<GuestId> {
        self.pages.lock().unwrap().iter().map(|p| p.id.clone()).collect()
    }

    fn channel(&self, id: &GuestId) -> Option<Arc<dyn GuestChannel>> {
        let pages = self.pages.lock().unwrap();
        pages.iter().find(|p| &p.id == id).map(|p| p.channel.clone() as Arc<dyn GuestChannel>)
    }

    fn open(&self, _url: &str, _context: Option<&ContextId>) -> Result<GuestId, GuestError> {
        Err(GuestError::new("the fake opens nothing"))
    }

    fn create_context(&self) -> Result<ContextId, GuestError> {
        Err(GuestError::new("the fake makes no context"))
    }

    fn dispose_context(&self, _id: &ContextId) -> Result<(), GuestError> {
        Ok(())
    }

    fn contexts(&self) -> Vec<ContextId> {
        self.contexts.lock().unwrap().clone()
    }

    fn context_of(&self, id: &GuestId) -> Option<ContextId> {
        self.pages.lock().unwrap().iter().find(|p| &p.id == id).and_then(|p| p.context.clone())
    }

    fn opener(&self, _id: &GuestId) -> Option<GuestOpener> {
        None
    }

    fn close(&self, _id: &GuestId) -> Result<(), GuestError> {
        Ok(())
    }

    fn activate(&self, _id: &GuestId) {}

    fn focus_page(&self, _id: &GuestId) {}

    fn paint_for_client(&self, _id: &GuestId) {}

    fn emulate_focus(&self, _id: &GuestId, _on: bool) {}

    fn normalize_url(&self, raw: &str) -> Result<String, GuestError> {
        if raw.starts_with("file:") {
            return Err(GuestError::new("file URLs are not opened"));
        }
        Ok(raw.to_string())
    }

    fn version(&self) -> BrowserVersion {
        BrowserVersion {
            product: "Chrome/131.0.0.0".into(),
            revision: "@fake".into(),
            user_agent: "Fake/1.0".into(),
            js_version: "13.1".into(),
        }
    }

    fn answer_dialog(&self, _id: &GuestId, _accept: bool, _prompt_text: Option<&str>) -> Result<(), GuestError> {
        Err(GuestError::new("No dialog is showing"))
    }

    fn window_bounds(&self, id: &GuestId) -> Option<WindowBounds> {
        self.pages.lock().unwrap().iter().find(|p| &p.id == id).map(|p| p.bounds)
    }

    fn resize_window(&self, _id: &GuestId, _width: u32, _height: u32) -> Result<(), GuestError> {
        Ok(())
    }

    fn set_permissions(
        &self,
        _context: &ContextId,
        _origin: Option<&str>,
        _permissions: &[PermissionType],
        _setting: PermissionSetting,
    ) -> Result<(), GuestError> {
        Ok(())
    }

    fn reset_permissions(&self, _context: &ContextId) -> Result<(), GuestError> {
        Ok(())
    }

    fn set_download_behavior(&self, context: Option<&ContextId>, behavior: DownloadBehavior) -> Result<(), GuestError> {
        self.behaviors.lock().unwrap().push((context.cloned(), behavior));
        Ok(())
    }
}
