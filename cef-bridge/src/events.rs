//! What browsers report to the app, and the frames they paint.

use std::fmt;

/// Stable identifier of one off-screen browser, assigned by cef-bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrowserId(pub u64);

impl fmt::Display for BrowserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "browser-{}", self.0)
    }
}

/// How a renderer process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// Non-zero exit status.
    Abnormal,
    /// Killed (SIGKILL, OOM killer, task manager).
    Killed,
    /// Crashed (segfault and the like).
    Crashed,
    /// Ran out of memory.
    OutOfMemory,
    /// Never launched.
    LaunchFailed,
    /// Any other reason CEF reports.
    Other,
}

/// Which JavaScript dialog a page opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogKind {
    /// `alert()`: one button.
    Alert,
    /// `confirm()`: OK or Cancel.
    Confirm,
    /// `prompt()`: a line of text, OK or Cancel.
    Prompt,
    /// "Leave this page?" before unload, reload or close.
    BeforeUnload,
}

impl DialogKind {
    /// The name CDP uses (`Page.DialogType`).
    pub fn cdp_name(self) -> &'static str {
        match self {
            Self::Alert => "alert",
            Self::Confirm => "confirm",
            Self::Prompt => "prompt",
            Self::BeforeUnload => "beforeunload",
        }
    }
}

/// A JavaScript dialog waiting for an answer; the page is blocked until then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsDialog {
    /// Which dialog.
    pub kind: DialogKind,
    /// The text the page shows.
    pub message: String,
    /// The prompt's initial text (empty for the other kinds).
    pub default_prompt: String,
    /// The URL of the page (or frame origin) that opened it.
    pub url: String,
}

/// An event from a browser, delivered on the CEF UI (main) thread.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserEvent {
    /// The browser exists; its DevTools channel is live.
    Created {
        /// Which browser.
        id: BrowserId,
    },
    /// A new frame is ready: take it with `BrowserHandle::take_frame`.
    /// Coalesced: one event until the frame is taken.
    FrameReady {
        /// Which browser.
        id: BrowserId,
    },
    /// The page title changed.
    TitleChanged {
        /// Which browser.
        id: BrowserId,
        /// New title.
        title: String,
    },
    /// The main frame's URL changed.
    AddressChanged {
        /// Which browser.
        id: BrowserId,
        /// New URL.
        url: String,
    },
    /// Loading started or stopped.
    LoadingStateChanged {
        /// Which browser.
        id: BrowserId,
        /// True while loading.
        loading: bool,
        /// History navigation available.
        can_go_back: bool,
        /// Forward navigation available.
        can_go_forward: bool,
    },
    /// How far the page's load has come (CEF's estimate, 0.0 at the start to 1.0 when done).
    LoadProgress {
        /// Which browser.
        id: BrowserId,
        /// Fraction loaded, 0.0..=1.0.
        progress: f64,
    },
    /// The main frame finished loading.
    LoadFinished {
        /// Which browser.
        id: BrowserId,
        /// HTTP status (0 for non-HTTP).
        http_status: i32,
    },
    /// The main frame failed to load.
    LoadFailed {
        /// Which browser.
        id: BrowserId,
        /// URL that failed.
        url: String,
        /// Chromium net error code (e.g. -102 connection refused).
        error_code: i32,
        /// Chromium net error name (e.g. net::ERR_CONNECTION_REFUSED).
        error_text: String,
    },
    /// A main-frame navigation was refused by the URL policy.
    NavigationBlocked {
        /// Which browser.
        id: BrowserId,
        /// Refused URL.
        url: String,
    },
    /// The renderer process died; pending DevTools commands have failed. `reload()` recovers.
    RenderProcessTerminated {
        /// Which browser.
        id: BrowserId,
        /// How it ended.
        status: Termination,
        /// Exit or signal code.
        error_code: i32,
    },
    /// A page opened a web popup (e.g. a sign-in window) that shares its session;
    /// the popup browser already exists and should become a browser node.
    PopupOpened {
        /// The new popup browser.
        id: BrowserId,
        /// The page that opened it.
        opener: BrowserId,
    },
    /// A page asked for a URL in a new tab/window (target=_blank, middle-click):
    /// the app may open a new tab for it.
    NewTabRequested {
        /// The page that asked.
        opener: BrowserId,
        /// URL to open (already checked by the URL policy).
        url: String,
        /// A background tab was asked for (a middle-click, Ctrl+click): not shown at once.
        background: bool,
    },
    /// A download started (saved where the download policy says, never opened).
    DownloadStarted {
        /// Which browser.
        id: BrowserId,
        /// The download's guid (CDP's name for it).
        guid: String,
        /// What is downloaded.
        url: String,
        /// The file name the server or the link suggested.
        suggested_name: String,
        /// Where it is being written; `None` when the policy refused it.
        path: Option<std::path::PathBuf>,
    },
    /// A download got further (bytes arrived) or ended; each state is told once.
    DownloadProgress {
        /// Which browser.
        id: BrowserId,
        /// The download's guid.
        guid: String,
        /// Bytes received so far.
        received: u64,
        /// Bytes expected, 0 while unknown.
        total: u64,
        /// How far it has come.
        state: crate::downloads::DownloadState,
    },
    /// A download ended.
    DownloadFinished {
        /// Which browser.
        id: BrowserId,
        /// Where it was written.
        path: std::path::PathBuf,
        /// False when cancelled or interrupted.
        complete: bool,
    },
    /// A page opened a file chooser; it waits for `BrowserHandle::answer_file_chooser`.
    FileChooserOpened {
        /// Which browser.
        id: BrowserId,
        /// What it asks for.
        chooser: crate::FileChooser,
    },
    /// A page opened a JavaScript dialog; it waits for `BrowserHandle::answer_dialog`.
    DialogOpened {
        /// Which browser.
        id: BrowserId,
        /// What it asks.
        dialog: JsDialog,
    },
    /// The open dialog went away (answered, or reset by navigation or close).
    DialogClosed {
        /// Which browser.
        id: BrowserId,
    },
    /// A page opened its context menu; it waits for `BrowserHandle::answer_context_menu`.
    ContextMenuOpened {
        /// Which browser.
        id: BrowserId,
        /// What it offers.
        menu: crate::ContextMenu,
    },
    /// The open context menu went away (answered, or closed by CEF).
    ContextMenuClosed {
        /// Which browser.
        id: BrowserId,
    },
    /// What a find-in-page search found so far (CEF reports as it scans; the
    /// last report of a search has `final_update`).
    FindResult {
        /// Which browser.
        id: BrowserId,
        /// Matches on the page.
        count: u32,
        /// The highlighted match, 1-based (0 with no match).
        active: u32,
        /// True on the search's last report.
        final_update: bool,
    },
    /// The browser closed and its handle is dead.
    Closed {
        /// Which browser.
        id: BrowserId,
    },
}

/// A rectangle in view pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelRect {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// The latest painted image of a browser view, with the regions that changed
/// since the frame was last taken.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels, BGRA, premultiplied, rows tightly packed (`width * 4` bytes).
    pub bgra: Vec<u8>,
    /// Regions changed since the previous `take_frame` (the whole view after a resize).
    pub dirty: Vec<PixelRect>,
}

impl Frame {
    /// The pixel at (x, y) as (r, g, b, a), or None outside the frame.
    pub fn rgba_at(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = ((y * self.width + x) * 4) as usize;
        let p = self.bgra.get(i..i + 4)?;
        Some([p[2], p[1], p[0], p[3]])
    }

    /// The frame as tightly packed RGBA bytes.
    pub fn to_rgba(&self) -> Vec<u8> {
        let mut out = self.bgra.clone();
        for px in out.chunks_exact_mut(4) {
            px.swap(0, 2);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgba_conversion_and_bounds() {
        let f = Frame { width: 2, height: 1, bgra: vec![1, 2, 3, 255, 10, 20, 30, 128], dirty: vec![] };
        assert_eq!(f.rgba_at(0, 0), Some([3, 2, 1, 255]));
        assert_eq!(f.rgba_at(1, 0), Some([30, 20, 10, 128]));
        assert_eq!(f.rgba_at(2, 0), None);
        assert_eq!(f.to_rgba(), vec![3, 2, 1, 255, 30, 20, 10, 128]);
    }
}
