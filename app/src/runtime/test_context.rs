//! A test context in the style of GPUI's `TestAppContext`: a real
//! [`Runtime`] on a temporary data directory with a fake browser engine
//! ([`FakeEngine`]: pages that answer the typed page driving of the tool
//! operations, page-driver's [`Page`]), a
//! recording PTY spawner (nothing starts, or, with
//! [`TestContext::with_terminals`], fake terminals start) and no window. The test thread is
//! the main thread: [`TestContext::call`] submits a tool call through
//! [`RuntimeToolHost::execute`] (the worker pool, as the tool server does)
//! and ticks the loop until the reply arrives, so every operation runs
//! in-process in milliseconds.

use super::engine::{Browser, BrowserEngine, LiveBrowser};
use super::terminals::RecordingSpawner;
use super::tools::{DesktopEnv, RuntimeToolHost};
use super::{AppHandle, Runtime, RuntimeConfig, Waker};
use crate::model::{AgentKind, NodeId, NodeKind};
use cef_bridge::input::{ButtonsHeld, KeyInput, Modifiers, MouseButton};
use cef_bridge::{
    url_policy, BrowserError, BrowserEvent, BrowserId, BrowserOptions, DevToolsChannel, EngineError, Frame, JsDialog,
};
use crossbeam_channel::Sender;
use page_driver::{
    BackendNodeId, BoxModel, BrowserVersion, CdpError, DriveError, EventStream, ExecutionContextId, FrameId, FrameInfo,
    FrameTree, FunctionCall, Input, LayoutMetrics, Lifecycle, MediaFeature, Method, Navigation, NodeDescription,
    ObjectId, Page, Pending, PropertyDescriptor, Quad, RawEvent, RemoteObject, ScreenshotOptions, SessionId,
    TransportError,
};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tool_server::{ExecuteFuture, ToolCall, ToolError, ToolHost, ToolIdentity};

/// Longest one call may take before the test fails (operations take milliseconds).
const CALL_LIMIT: Duration = Duration::from_secs(10);
/// How long the loop sleeps between turns while a call is out.
const TURN: Duration = Duration::from_millis(1);
/// The title every fake page reports.
pub(crate) const FAKE_TITLE: &str = "Fake page";

/// A typed call from an operation name and its JSON arguments, through the
/// server's own validation (what an agent's request becomes).
pub(crate) fn tool(operation: &str, args: Value) -> ToolCall {
    let request = tool_server::validate_tool_request(&json!({"operation": operation, "args": args}))
        .unwrap_or_else(|e| panic!("{operation} {args}: {e}"));
    ToolCall::from_request(request).unwrap_or_else(|e| panic!("{operation}: {e}"))
}

/// The runtime, its tool host and the fakes behind them.
pub(crate) struct TestContext {
    /// The runtime under test (the test thread is its main thread).
    pub(crate) rt: Runtime,
    /// The fake engine's pages.
    pub(crate) pages: Arc<FakePages>,
    /// What the runtime asked to spawn.
    pub(crate) spawner: Arc<RecordingSpawner>,
    /// The first agent node (added at start), the usual caller.
    pub(crate) agent: ToolIdentity,
    host: RuntimeToolHost,
    waker: Arc<Waker>,
    dir: tempfile::TempDir,
}

impl TestContext {
    /// A runtime with one open project (`<tmp>/project`) holding one agent node.
    pub(crate) fn new() -> Self {
        Self::with_call_timeout(super::CALL_TIMEOUT)
    }

    /// The same, with operations' main-thread deadline at `timeout`.
    pub(crate) fn with_call_timeout(timeout: Duration) -> Self {
        Self::with(timeout, RecordingSpawner::default())
    }

    /// The same, where terminal nodes start: each gets a fake terminal
    /// ([`RecordingSpawner::terminal`] finds it).
    pub(crate) fn with_terminals() -> Self {
        Self::with(super::CALL_TIMEOUT, RecordingSpawner::starting())
    }

    /// The same, as the window's runtime is (views follow the zoom; a person answers page menus).
    pub(crate) fn windowed() -> Self {
        Self::build(super::CALL_TIMEOUT, RecordingSpawner::default(), true)
    }

    /// A context with operations' main-thread deadline at `timeout` whose PTYs start through `spawner`.
    pub(crate) fn with(timeout: Duration, spawner: RecordingSpawner) -> Self {
        Self::build(timeout, spawner, false)
    }

    fn build(timeout: Duration, spawner: RecordingSpawner, windowed: bool) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let data_dir = dir.path().join("data");
        let config = RuntimeConfig {
            data_dir: data_dir.clone(),
            project: Some(dir.path().join("project")),
            browser_control: true,
            views_follow_zoom: windowed,
        };
        let waker = Waker::new();
        let (events_tx, events_rx) = crossbeam_channel::unbounded();
        let pages = Arc::new(FakePages::new(events_tx));
        let (handle, jobs) = AppHandle::new(waker.clone());
        let engine = Box::new(FakeEngine(pages.clone()));
        let mut rt = Runtime::new(config, engine, handle, jobs, events_rx);
        let spawner = Arc::new(spawner);
        rt.use_pty_spawner(spawner.clone());
        let state = crate::paths::agent_tools(&data_dir);
        local_guard::files::ensure_private_dir(&state).expect("agent-tools dir");
        rt.tools.shared.attach_state_dir(&state);
        let host = RuntimeToolHost::new(rt.handle(), rt.tools.shared.clone(), data_dir).with_call_timeout(timeout);
        let agent = add_agent(&mut rt, "Agent A");
        TestContext { rt, pages, spawner, agent, host, waker, dir }
    }

    /// The same context, where `terminal_external` sees `desktop` instead of the process's environment.
    pub(crate) fn with_desktop(mut self, desktop: DesktopEnv) -> Self {
        self.host = self.host.with_desktop(desktop);
        self
    }

    /// The project folder.
    pub(crate) fn folder(&self) -> PathBuf {
        self.rt.project().expect("a project is open").folder().to_path_buf()
    }

    /// The temporary directory everything lives in (the project is `project/` in it).
    pub(crate) fn root(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Adds an agent node (a `custom` agent: not set up, so nothing launches) and returns its identity.
    pub(crate) fn add_agent(&mut self, title: &str) -> ToolIdentity {
        add_agent(&mut self.rt, title)
    }

    /// Adds a node of `kind` at (x, y) and returns its id.
    pub(crate) fn add(&mut self, kind: NodeKind, title: &str, rect: (f64, f64, f64, f64)) -> NodeId {
        self.rt.add_node(kind, title, (rect.2, rect.3), Some((rect.0, rect.1))).expect("node added")
    }

    /// Runs `call` as `identity` and returns its result.
    pub(crate) fn call(&mut self, identity: &ToolIdentity, call: ToolCall) -> Result<Value, ToolError> {
        let reply = self.host.execute(identity, call);
        self.finish(reply)
    }

    /// Runs `operation` with `args` as the first agent.
    pub(crate) fn run(&mut self, operation: &str, args: Value) -> Result<Value, ToolError> {
        let agent = self.agent.clone();
        self.call(&agent, tool(operation, args))
    }

    /// The tool host the tool server would call (for what it asks besides operations: hooks, project folders).
    pub(crate) fn host(&self) -> &RuntimeToolHost {
        &self.host
    }

    /// Submits `call` without running the loop (a stalled main thread until [`finish`](Self::finish)).
    pub(crate) fn submit(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture {
        self.host.execute(identity, call)
    }

    /// Runs the loop until `reply` is ready.
    pub(crate) fn finish(&mut self, mut reply: ExecuteFuture) -> Result<Value, ToolError> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let end = Instant::now() + CALL_LIMIT;
        loop {
            self.rt.tick();
            if let Poll::Ready(r) = reply.as_mut().poll(&mut cx) {
                return r;
            }
            assert!(Instant::now() < end, "the operation did not answer within {CALL_LIMIT:?}");
            self.waker.wait_until(Instant::now() + TURN);
        }
    }

    /// A node of the open project.
    pub(crate) fn node(&self, id: &str) -> Option<crate::model::Node> {
        let id = NodeId::new(id).ok()?;
        self.rt.project().and_then(|p| p.node(&id)).cloned()
    }

    /// The fake page showing a browser node.
    pub(crate) fn page_of(&self, node: &str) -> Option<Arc<FakeBrowser>> {
        let id = NodeId::new(node).ok()?;
        let (_, b) = self.rt.browsers.for_node(&id)?;
        self.pages.get(b.id())
    }
}

/// Adds a `custom` agent node to the open project, right of everything (the
/// first at the origin, so tests can name positions); its identity.
fn add_agent(rt: &mut Runtime, title: &str) -> ToolIdentity {
    let p = rt.project().expect("a project is open");
    let folder = p.folder().to_path_buf();
    let at = p.bounds().map_or((0.0, 0.0), |b| (b.x + b.w + 40.0, b.y));
    let kind = NodeKind::Agent { agent: AgentKind::Custom, cwd: folder, worktree: None };
    let id = rt.add_node(kind, title, (600.0, 400.0), Some(at)).expect("agent node");
    let project = rt.project_id().expect("a project is open");
    ToolIdentity::new(id.as_str(), project.as_str())
}

/// The fake engine's browsers, and where their events go.
pub(crate) struct FakePages {
    browsers: Mutex<Vec<Arc<FakeBrowser>>>,
    next_id: AtomicU64,
    events: Sender<BrowserEvent>,
    /// What a CDP client set as the download behaviour.
    pub(crate) downloads: cef_bridge::DownloadPolicy,
    /// Live isolated contexts, and the count handed out.
    pub(crate) contexts: Mutex<Vec<cef_bridge::RequestContextId>>,
    next_context: AtomicU64,
    /// Site permissions set per context, in order (`None` setting: a reset).
    pub(crate) site_permissions: Mutex<Vec<SitePermissionCall>>,
}

/// One site-permission call the fake engine was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SitePermissionCall {
    pub(crate) context: cef_bridge::RequestContextId,
    pub(crate) site: Option<String>,
    pub(crate) permissions: Vec<cef_bridge::SitePermission>,
    /// `None`: every permission of the context was reset.
    pub(crate) setting: Option<cef_bridge::SiteSetting>,
}

impl FakePages {
    fn new(events: Sender<BrowserEvent>) -> Self {
        Self {
            browsers: Mutex::new(vec![]),
            next_id: AtomicU64::new(1),
            events,
            downloads: Default::default(),
            contexts: Mutex::new(vec![]),
            next_context: AtomicU64::new(0),
            site_permissions: Mutex::new(vec![]),
        }
    }

    /// A browser by id.
    pub(crate) fn get(&self, id: BrowserId) -> Option<Arc<FakeBrowser>> {
        self.browsers.lock().iter().find(|b| b.id == id).cloned()
    }
}

/// A browser engine without Chromium: browsers exist at once and never paint.
struct FakeEngine(Arc<FakePages>);

impl BrowserEngine for FakeEngine {
    fn pump(&self) {}
    fn pump_interval(&self) -> Duration {
        cef_bridge::MAX_PUMP_INTERVAL
    }
    fn next_pump_deadline(&self) -> Instant {
        Instant::now() + cef_bridge::MAX_PUMP_INTERVAL
    }
    fn create_browser(&self, options: &BrowserOptions) -> Result<Browser, EngineError> {
        // The real engine's own refusal, so the runtime sees the same answer.
        if !url_policy::is_allowed_nav_url(&options.url) {
            let scheme = options.url.split(':').next().unwrap_or("").to_string();
            return Err(BrowserError::Refused(url_policy::UrlPolicyError::RefusedScheme(scheme)).into());
        }
        if let Some(c) = options.context.filter(|c| !self.0.contexts.lock().contains(c)) {
            return Err(EngineError::NoSuchContext(c));
        }
        let id = BrowserId(self.0.next_id.fetch_add(1, Ordering::Relaxed));
        let b = Arc::new(FakeBrowser::new(id, options, self.0.events.clone()));
        self.0.browsers.lock().push(b.clone());
        Ok(b)
    }
    fn browser(&self, id: BrowserId) -> Option<Browser> {
        self.0.get(id).map(|b| b as Browser)
    }
    fn create_context(&self) -> Result<cef_bridge::RequestContextId, EngineError> {
        let n = self.0.next_context.fetch_add(1, Ordering::Relaxed) + 1;
        let id = cef_bridge::RequestContextId::from_raw(n);
        self.0.contexts.lock().push(id);
        Ok(id)
    }
    fn dispose_context(&self, id: cef_bridge::RequestContextId) -> bool {
        let mut live = self.0.contexts.lock();
        let before = live.len();
        live.retain(|c| *c != id);
        live.len() < before
    }
    fn set_site_permissions(
        &self,
        context: cef_bridge::RequestContextId,
        site: Option<&str>,
        permissions: &[cef_bridge::SitePermission],
        setting: cef_bridge::SiteSetting,
    ) -> Result<(), EngineError> {
        if !self.0.contexts.lock().contains(&context) {
            return Err(EngineError::NoSuchContext(context));
        }
        self.0.site_permissions.lock().push(SitePermissionCall {
            context,
            site: site.map(str::to_string),
            permissions: permissions.to_vec(),
            setting: Some(setting),
        });
        Ok(())
    }
    fn reset_site_permissions(&self, context: cef_bridge::RequestContextId) -> Result<(), EngineError> {
        if !self.0.contexts.lock().contains(&context) {
            return Err(EngineError::NoSuchContext(context));
        }
        let call = SitePermissionCall { context, site: None, permissions: vec![], setting: None };
        self.0.site_permissions.lock().push(call);
        Ok(())
    }
    fn download_policy(&self) -> cef_bridge::DownloadPolicy {
        self.0.downloads.clone()
    }
    fn shutdown(self: Box<Self>) {}
}

/// One fake page: records what the runtime did to it and answers its page driving.
pub(crate) struct FakeBrowser {
    id: BrowserId,
    devtools: Arc<DevToolsChannel>,
    page: Arc<FakePage>,
    size: Mutex<(u32, u32)>,
    scale: Mutex<f32>,
    closed: AtomicBool,
    /// The isolated context it was created in.
    pub(crate) context: Option<cef_bridge::RequestContextId>,
    /// Every URL navigated to (normalised), in order.
    pub(crate) navigations: Mutex<Vec<String>>,
    /// The dialog the fake page "opened" ([`FakeBrowser::open_dialog`]).
    dialog: Mutex<Option<JsDialog>>,
    /// Every dialog answer: accept, the text a prompt returned.
    pub(crate) dialog_answers: Mutex<Vec<(bool, Option<String>)>>,
    /// The file chooser the fake page waits on ([`FakeBrowser::open_file_chooser`]).
    file_chooser: Mutex<Option<cef_bridge::FileChooser>>,
    /// The context menu the fake page waits on ([`FakeBrowser::open_context_menu`]).
    context_menu: Mutex<Option<cef_bridge::ContextMenu>>,
    /// Every context menu answer the page got, in order (`None`: closed without a command of its own).
    pub(crate) menu_answers: Mutex<Vec<Option<cef_bridge::MenuCommand>>>,
    /// Every history and load command ("back", "forward", "reload", "stop"), in order.
    pub(crate) history: Mutex<Vec<&'static str>>,
    /// Every find-in-page request (text, forward, find_next), and `None` for each stop.
    pub(crate) finds: Mutex<Vec<Option<(String, bool, bool)>>>,
    /// The paint rate the runtime set last.
    pub(crate) frame_rate: Mutex<u32>,
    /// Hidden as a background tab.
    pub(crate) hidden: AtomicBool,
    /// How many full repaints the runtime asked for.
    pub(crate) invalidations: AtomicUsize,
    events: Sender<BrowserEvent>,
}

impl FakeBrowser {
    fn new(id: BrowserId, options: &BrowserOptions, events: Sender<BrowserEvent>) -> Self {
        // Raw CDP (a facade client's) reaches no page here: nothing is attached to answer it.
        let devtools = Arc::new(DevToolsChannel::new());
        let page = Arc::new(FakePage {
            url: Mutex::new(options.url.clone()),
            marker: Mutex::new(None),
            focused: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            methods: Mutex::new(vec![]),
            inputs: Mutex::new(vec![]),
        });
        Self {
            id,
            devtools,
            page,
            size: Mutex::new((options.width, options.height)),
            context: options.context,
            scale: Mutex::new(1.0),
            closed: AtomicBool::new(false),
            navigations: Mutex::new(vec![]),
            dialog: Mutex::new(None),
            dialog_answers: Mutex::new(vec![]),
            file_chooser: Mutex::new(None),
            context_menu: Mutex::new(None),
            menu_answers: Mutex::new(vec![]),
            history: Mutex::new(vec![]),
            finds: Mutex::new(vec![]),
            frame_rate: Mutex::new(options.frame_rate),
            hidden: AtomicBool::new(false),
            invalidations: AtomicUsize::new(0),
            events,
        }
    }

    /// Sends `event` as the engine would (this browser's load state, find results…).
    pub(crate) fn report(&self, event: BrowserEvent) {
        let _ = self.events.send(event);
    }

    /// This browser's id.
    pub(crate) fn browser_id(&self) -> BrowserId {
        self.id
    }

    fn record(&self, command: &'static str) -> Result<(), BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::Closed);
        }
        self.history.lock().push(command);
        Ok(())
    }

    /// Acts as if the page called `alert`/`confirm`/`prompt` (the engine's event included).
    /// The page opens a file chooser, as CEF reports one.
    pub(crate) fn open_file_chooser(&self, chooser: cef_bridge::FileChooser) {
        *self.file_chooser.lock() = Some(chooser.clone());
        let _ = self.events.send(BrowserEvent::FileChooserOpened { id: self.id, chooser });
    }

    /// The page opens its context menu, as CEF reports one.
    pub(crate) fn open_context_menu(&self, menu: cef_bridge::ContextMenu) {
        *self.context_menu.lock() = Some(menu.clone());
        let _ = self.events.send(BrowserEvent::ContextMenuOpened { id: self.id, menu });
    }

    pub(crate) fn open_dialog(&self, dialog: JsDialog) {
        *self.dialog.lock() = Some(dialog.clone());
        let _ = self.events.send(BrowserEvent::DialogOpened { id: self.id, dialog });
    }

    /// The page's URL now.
    pub(crate) fn current_url(&self) -> String {
        self.page.url.lock().clone()
    }

    /// Every DevTools method the page was driven with, in order.
    pub(crate) fn methods(&self) -> Vec<Method> {
        self.page.methods.lock().clone()
    }

    /// Every input the page was sent (mouse, keys, text), in order.
    pub(crate) fn inputs(&self) -> Vec<Input> {
        self.page.inputs.lock().clone()
    }
}

impl LiveBrowser for FakeBrowser {
    fn id(&self) -> BrowserId {
        self.id
    }
    fn context(&self) -> Option<cef_bridge::RequestContextId> {
        self.context
    }
    fn devtools(&self) -> Arc<DevToolsChannel> {
        self.devtools.clone()
    }
    fn page(&self) -> Arc<dyn Page> {
        self.page.clone()
    }
    fn url(&self) -> String {
        self.current_url()
    }
    fn is_loading(&self) -> bool {
        false
    }
    fn is_created(&self) -> bool {
        true
    }
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
    fn view_size(&self) -> (u32, u32) {
        *self.size.lock()
    }
    fn take_frame(&self) -> Option<Frame> {
        None
    }
    fn last_frame(&self) -> Option<Frame> {
        None
    }
    fn acknowledge_frame(&self) {}
    fn scale(&self) -> f32 {
        *self.scale.lock()
    }
    fn set_scale(&self, scale: f32) -> Result<(), BrowserError> {
        *self.scale.lock() = scale;
        Ok(())
    }
    fn resize(&self, width: u32, height: u32) -> Result<(), BrowserError> {
        *self.size.lock() = (width, height);
        Ok(())
    }
    fn navigate(&self, address: &str) -> Result<String, BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::Closed);
        }
        // The same policy and normalisation as cef-bridge's navigate.
        let url = url_policy::normalize_address(address)?;
        self.navigations.lock().push(url.clone());
        *self.page.url.lock() = url.clone();
        *self.page.marker.lock() = None;
        Ok(url)
    }
    fn go_back(&self) -> Result<(), BrowserError> {
        self.record("back")
    }
    fn go_forward(&self) -> Result<(), BrowserError> {
        self.record("forward")
    }
    fn reload(&self) -> Result<(), BrowserError> {
        self.record("reload")
    }
    fn stop(&self) -> Result<(), BrowserError> {
        self.record("stop")
    }
    fn find(&self, text: &str, forward: bool, find_next: bool) -> Result<(), BrowserError> {
        self.finds.lock().push(Some((text.to_string(), forward, find_next)));
        Ok(())
    }
    fn stop_finding(&self) -> Result<(), BrowserError> {
        self.finds.lock().push(None);
        Ok(())
    }
    fn close(&self) -> Result<(), BrowserError> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Err(BrowserError::Closed);
        }
        self.devtools.detach("browser closed");
        self.page.closed.store(true, Ordering::Release);
        let _ = self.events.send(BrowserEvent::Closed { id: self.id });
        Ok(())
    }
    fn invalidate(&self) -> Result<(), BrowserError> {
        self.invalidations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn set_frame_rate(&self, fps: u32) -> Result<(), BrowserError> {
        *self.frame_rate.lock() = fps.clamp(1, 60);
        Ok(())
    }
    fn frame_rate(&self) -> u32 {
        *self.frame_rate.lock()
    }
    fn set_hidden(&self, hidden: bool) -> Result<(), BrowserError> {
        self.hidden.store(hidden, Ordering::Relaxed);
        Ok(())
    }
    fn is_hidden(&self) -> bool {
        self.hidden.load(Ordering::Relaxed)
    }
    fn set_focus(&self, _focused: bool) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_mouse_move(&self, _: i32, _: i32, _: Modifiers, _: ButtonsHeld, _: bool) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_mouse_click(
        &self,
        _: i32,
        _: i32,
        _: MouseButton,
        _: bool,
        _: u32,
        _: Modifiers,
    ) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_mouse_wheel(&self, _: i32, _: i32, _: i32, _: i32, _: Modifiers) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_key(&self, _: &KeyInput) -> Result<(), BrowserError> {
        Ok(())
    }
    fn file_chooser(&self) -> Option<cef_bridge::FileChooser> {
        self.file_chooser.lock().clone()
    }
    fn answer_file_chooser(&self, _: Option<Vec<std::path::PathBuf>>) -> Result<(), BrowserError> {
        self.file_chooser.lock().take().map(|_| ()).ok_or(BrowserError::NoFileChooser)
    }
    fn dialog(&self) -> Option<JsDialog> {
        self.dialog.lock().clone()
    }
    fn context_menu(&self) -> Option<cef_bridge::ContextMenu> {
        self.context_menu.lock().clone()
    }
    fn answer_context_menu(
        &self,
        command: Option<cef_bridge::MenuCommand>,
    ) -> Result<cef_bridge::ContextMenu, BrowserError> {
        let mut slot = self.context_menu.lock();
        let open = slot.as_ref().ok_or(BrowserError::NoContextMenu)?;
        if let Some(c) = command.filter(|c| !open.offers(*c)) {
            return Err(BrowserError::NotInMenu(c));
        }
        let menu = slot.take().ok_or(BrowserError::NoContextMenu)?;
        // What the page gets: its own commands, and none for the app's (as CEF's callback is answered).
        self.menu_answers.lock().push(command.filter(|c| c.is_page_command()));
        let _ = self.events.send(BrowserEvent::ContextMenuClosed { id: self.id });
        Ok(menu)
    }
    fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<JsDialog, BrowserError> {
        let dialog = self.dialog.lock().take().ok_or(BrowserError::NoDialog)?;
        let text = (dialog.kind == cef_bridge::DialogKind::Prompt)
            .then(|| prompt_text.unwrap_or(&dialog.default_prompt).to_string());
        self.dialog_answers.lock().push((accept, text));
        let _ = self.events.send(BrowserEvent::DialogClosed { id: self.id });
        Ok(dialog)
    }
}

/// The document of a fake page and its page driving: the tool operations'
/// scripts (load probe, navigation tag, inspect, locate, focus check) and
/// DOM reads get what a loaded page with one button (`#go`, backend node
/// 1, ref `e1`) in one frame would answer, and input and screenshots what
/// Chromium answers.
struct FakePage {
    url: Mutex<String>,
    /// The navigation marker the current document was tagged with.
    marker: Mutex<Option<String>>,
    /// Whether the button has keyboard focus.
    focused: AtomicBool,
    /// The browser closed: nothing answers any more.
    closed: AtomicBool,
    /// Every method the page was driven with, in order.
    methods: Mutex<Vec<Method>>,
    /// Every input it was sent, in order.
    inputs: Mutex<Vec<Input>>,
}

/// The report the page model script gives for the fake page: one button.
fn fake_report(url: &str) -> Value {
    json!({
        "url": url, "title": FAKE_TITLE, "text": "Hello", "textChars": 5,
        "items": [{"n": 0, "role": "button", "name": "Go", "lm": -1}],
        "landmarks": [], "hidden": 0, "off": 0, "viewport": [800, 600, 0, 0, 800, 600],
    })
}

/// The page model inspect returns for the fake page.
pub(crate) fn fake_page_model(url: &str) -> Value {
    json!({
        "url": url, "title": FAKE_TITLE, "text": "Hello", "elements": "e1 button Go\n",
        "scroll": "0,0 of 800x600, viewport 800x600",
    })
}

/// The fake page's screenshot: a 4 × 3 PNG.
pub(crate) fn fake_screenshot() -> Vec<u8> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, 4, 3);
    encoder.set_color(png::ColorType::Rgba);
    let mut writer = encoder.write_header().expect("png header");
    writer.write_image_data(&[0x80; 4 * 3 * 4]).expect("png data");
    drop(writer);
    png
}

/// An object the fake page's scripts return: the button, or the collector's node array.
fn object(id: &str) -> RemoteObject {
    RemoteObject { kind: "object".into(), object_id: Some(ObjectId::new(id)), ..RemoteObject::default() }
}

/// A value a script returned by value.
fn value(v: Value) -> RemoteObject {
    RemoteObject { kind: "object".into(), value: Some(v), ..RemoteObject::default() }
}

/// What the fake page answers for a node it does not have.
fn no_node(method: Method) -> DriveError {
    DriveError::Protocol {
        method,
        error: CdpError { code: -32000, message: "No node with given id found".into(), data: None },
    }
}

/// The fake page's events: none will come.
struct NoEvents;

impl EventStream for NoEvents {
    fn next(&mut self, _wait: Duration) -> Result<Option<RawEvent>, TransportError> {
        Err(TransportError::Gone)
    }
}

impl FakePage {
    /// Records that the page was driven with `method`; fails once the browser closed.
    fn driven(&self, method: Method) -> Result<(), DriveError> {
        self.methods.lock().push(method);
        if self.closed.load(Ordering::Acquire) {
            return Err(TransportError::Gone.into());
        }
        Ok(())
    }

    /// The value of one of the tool operations' by-value scripts.
    fn script_value(&self, expression: &str) -> Value {
        if let Some(tag) = expression.strip_prefix("window.__termsprawlNav = ") {
            let marker: String = serde_json::from_str(tag).unwrap_or_default();
            *self.marker.lock() = Some(marker.clone());
            return json!(marker);
        }
        if expression.contains("window.__termsprawlNav || null") {
            return json!({
                "url": *self.url.lock(), "title": FAKE_TITLE, "ready": "complete", "marker": *self.marker.lock(),
            });
        }
        if expression.contains("return {focused:") {
            return json!({"focused": self.focused.load(Ordering::Acquire)});
        }
        Value::Null
    }

    /// The result of one of the scripts whose object stays in the page.
    fn script_object(&self, expression: &str) -> RemoteObject {
        if expression.contains("document.querySelector(") {
            let selector: String = expression
                .strip_prefix("document.querySelector(")
                .and_then(|rest| rest.strip_suffix(')'))
                .and_then(|arg| serde_json::from_str(arg).ok())
                .unwrap_or_default();
            return if selector == "#go" {
                object("node-1")
            } else {
                RemoteObject { kind: "object".into(), subtype: Some("null".into()), ..RemoteObject::default() }
            };
        }
        if expression.contains("nodes.info") {
            return object("nodes");
        }
        RemoteObject { kind: "undefined".into(), ..RemoteObject::default() }
    }
}

impl Page for FakePage {
    fn evaluate_value(&self, expression: &str) -> Result<Value, DriveError> {
        self.driven(Method::Evaluate)?;
        Ok(self.script_value(expression))
    }
    fn evaluate_later(&self, expression: &str) -> Result<Pending<Value>, DriveError> {
        Ok(Pending::ready(self.evaluate_value(expression)))
    }
    fn evaluate_object(
        &self,
        _: Option<&SessionId>,
        expression: &str,
        _: Option<ExecutionContextId>,
        _: &str,
    ) -> Result<RemoteObject, DriveError> {
        self.driven(Method::Evaluate)?;
        Ok(self.script_object(expression))
    }
    fn call_function_on(&self, _: Option<&SessionId>, call: &FunctionCall<'_>) -> Result<RemoteObject, DriveError> {
        self.driven(Method::CallFunctionOn)?;
        if call.object.as_str() != "node-1" {
            return Err(DriveError::unsupported(Method::CallFunctionOn));
        }
        if call.args.get("focus") == Some(&Value::Bool(true)) {
            self.focused.store(true, Ordering::Release);
        }
        Ok(value(json!({"x": 50, "y": 20})))
    }
    fn properties(&self, _: Option<&SessionId>, object_id: &ObjectId) -> Result<Vec<PropertyDescriptor>, DriveError> {
        self.driven(Method::GetProperties)?;
        if object_id.as_str() != "nodes" {
            return Err(DriveError::unsupported(Method::GetProperties));
        }
        let report = fake_report(&self.url.lock()).to_string();
        let property = |name: &str, v: RemoteObject| PropertyDescriptor { name: name.into(), value: Some(v) };
        Ok(vec![
            property("0", RemoteObject { subtype: Some("node".into()), ..object("node-1") }),
            property("length", RemoteObject { kind: "number".into(), ..value(json!(1)) }),
            property("info", RemoteObject { kind: "string".into(), ..value(json!(report)) }),
        ])
    }
    fn release_object_group(&self, _: Option<&SessionId>, _: &str) -> Result<(), DriveError> {
        self.driven(Method::ReleaseObjectGroup)
    }
    fn frame_tree(&self, _: Option<&SessionId>) -> Result<FrameTree, DriveError> {
        self.driven(Method::GetFrameTree)?;
        let frame = FrameInfo { id: FrameId::new("F1"), url: self.url.lock().clone() };
        Ok(FrameTree { frame, child_frames: vec![] })
    }
    fn create_isolated_world(
        &self,
        _: Option<&SessionId>,
        _: &FrameId,
        _: &str,
    ) -> Result<ExecutionContextId, DriveError> {
        self.driven(Method::CreateIsolatedWorld)?;
        Ok(ExecutionContextId(7))
    }
    fn enable_page_events(&self) -> Result<(), DriveError> {
        self.driven(Method::EnablePage)?;
        Err(DriveError::unsupported(Method::EnablePage))
    }
    fn set_lifecycle_events(&self, _: bool) -> Result<(), DriveError> {
        self.driven(Method::SetLifecycleEventsEnabled)?;
        Err(DriveError::unsupported(Method::SetLifecycleEventsEnabled))
    }
    fn lifecycle(&self) -> Lifecycle {
        Lifecycle::new(Box::new(NoEvents))
    }
    fn navigate(&self, _: &str) -> Result<Navigation, DriveError> {
        self.driven(Method::Navigate)?;
        Err(DriveError::unsupported(Method::Navigate))
    }
    fn layout_metrics(&self) -> Result<LayoutMetrics, DriveError> {
        self.driven(Method::GetLayoutMetrics)?;
        Err(DriveError::unsupported(Method::GetLayoutMetrics))
    }
    fn screenshot(&self, _: &ScreenshotOptions) -> Result<Vec<u8>, DriveError> {
        self.driven(Method::CaptureScreenshot)?;
        Ok(fake_screenshot())
    }
    fn set_scrollbars_hidden(&self, _: bool) -> Result<(), DriveError> {
        self.driven(Method::SetScrollbarsHidden)?;
        Err(DriveError::unsupported(Method::SetScrollbarsHidden))
    }
    fn set_emulated_media(&self, _: &[MediaFeature]) -> Result<(), DriveError> {
        self.driven(Method::SetEmulatedMedia)?;
        Err(DriveError::unsupported(Method::SetEmulatedMedia))
    }
    fn describe_node(
        &self,
        _: Option<&SessionId>,
        object_id: &ObjectId,
    ) -> Result<Pending<NodeDescription>, DriveError> {
        self.driven(Method::DescribeNode)?;
        Ok(Pending::ready(if object_id.as_str() == "node-1" {
            Ok(NodeDescription { backend_node_id: BackendNodeId(1), frame_id: None })
        } else {
            Err(DriveError::unsupported(Method::DescribeNode))
        }))
    }
    fn resolve_node(&self, _: Option<&SessionId>, node: BackendNodeId, _: &str) -> Result<RemoteObject, DriveError> {
        self.driven(Method::ResolveNode)?;
        if node != BackendNodeId(1) {
            return Err(no_node(Method::ResolveNode));
        }
        Ok(object("node-1"))
    }
    fn content_quads(&self, _: Option<&SessionId>, object_id: &ObjectId) -> Result<Vec<Quad>, DriveError> {
        self.driven(Method::GetContentQuads)?;
        if object_id.as_str() != "node-1" {
            return Err(DriveError::unsupported(Method::GetContentQuads));
        }
        Ok(vec![Quad(vec![10.0, 10.0, 90.0, 10.0, 90.0, 30.0, 10.0, 30.0])])
    }
    fn frame_owner(&self, _: Option<&SessionId>, _: &FrameId) -> Result<BackendNodeId, DriveError> {
        self.driven(Method::GetFrameOwner)?;
        Err(DriveError::unsupported(Method::GetFrameOwner))
    }
    fn box_model(&self, _: Option<&SessionId>, _: BackendNodeId) -> Result<BoxModel, DriveError> {
        self.driven(Method::GetBoxModel)?;
        Err(DriveError::unsupported(Method::GetBoxModel))
    }
    fn dispatch(&self, input: &Input) -> Result<Pending<()>, DriveError> {
        self.driven(match input {
            Input::Mouse(_) => Method::DispatchMouseEvent,
            Input::Key(_) => Method::DispatchKeyEvent,
            Input::InsertText(_) => Method::InsertText,
        })?;
        self.inputs.lock().push(input.clone());
        Ok(Pending::ready(Ok(())))
    }
    fn list_targets(&self) -> Result<(), DriveError> {
        self.driven(Method::GetTargets)?;
        Err(DriveError::unsupported(Method::GetTargets))
    }
    fn attach_frame(&self, _: &FrameId) -> Result<SessionId, DriveError> {
        self.driven(Method::AttachToTarget)?;
        Err(DriveError::unsupported(Method::AttachToTarget))
    }
    fn detach(&self, _: &SessionId) {
        let _ = self.driven(Method::DetachFromTarget);
    }
    fn crashed(&self) -> bool {
        false
    }
    fn browser_version(&self) -> Result<BrowserVersion, DriveError> {
        self.driven(Method::GetVersion)?;
        Err(DriveError::unsupported(Method::GetVersion))
    }
}
