//! The browser-level CDP methods the emulated browser answers, declared
//! once: each method's wire name and whether a page session may send it too
//! (Chromium's browser handler answers those on any session). The router
//! asks this table which page-session commands go to the emulated browser,
//! and the browser dispatches on the same variants, so the two cannot
//! drift. A leaf.

/// Whether a page session may send a method, or only the root and browser sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// The root session and browser sessions.
    Browser,
    /// Also page sessions.
    AnySession,
}

macro_rules! browser_methods {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $reach:ident;)*) => {
        /// A browser-level CDP method.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum BrowserMethod {
            $($(#[$doc])* $variant,)*
        }

        impl BrowserMethod {
            /// Every method, in the table's order.
            const ALL: &[BrowserMethod] = &[$(BrowserMethod::$variant),*];

            /// The method's wire name, `Domain.method`.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(BrowserMethod::$variant => $name,)*
                }
            }

            fn reach(self) -> Reach {
                match self {
                    $(BrowserMethod::$variant => Reach::$reach,)*
                }
            }
        }
    };
}

browser_methods! {
    /// `Browser.getVersion`.
    GetVersion = "Browser.getVersion", Browser;
    /// `Browser.close`: ends the client's connection, never the app.
    Close = "Browser.close", AnySession;
    /// `Browser.crash`: refused (a client never crashes the app's nodes).
    Crash = "Browser.crash", AnySession;
    /// `Browser.crashGpuProcess`: refused, as `Browser.crash`.
    CrashGpuProcess = "Browser.crashGpuProcess", AnySession;
    /// `Browser.setDownloadBehavior`.
    SetDownloadBehavior = "Browser.setDownloadBehavior", Browser;
    /// `Browser.grantPermissions`.
    GrantPermissions = "Browser.grantPermissions", AnySession;
    /// `Browser.setPermission`.
    SetPermission = "Browser.setPermission", AnySession;
    /// `Browser.resetPermissions`.
    ResetPermissions = "Browser.resetPermissions", AnySession;
    /// `Storage.getCookies`.
    GetCookies = "Storage.getCookies", Browser;
    /// `Storage.setCookies`.
    SetCookies = "Storage.setCookies", Browser;
    /// `Storage.clearCookies`.
    ClearCookies = "Storage.clearCookies", Browser;
    /// `Runtime.runIfWaitingForDebugger` (a page session's is answered by the router at once).
    RunIfWaitingForDebugger = "Runtime.runIfWaitingForDebugger", Browser;
    /// `Browser.getWindowForTarget`.
    GetWindowForTarget = "Browser.getWindowForTarget", AnySession;
    /// `Browser.getWindowBounds`.
    GetWindowBounds = "Browser.getWindowBounds", AnySession;
    /// `Browser.setWindowBounds`.
    SetWindowBounds = "Browser.setWindowBounds", AnySession;
    /// `Browser.setContentsSize`.
    SetContentsSize = "Browser.setContentsSize", AnySession;
    /// `Target.getBrowserContexts`.
    GetBrowserContexts = "Target.getBrowserContexts", AnySession;
    /// `Target.createBrowserContext`.
    CreateBrowserContext = "Target.createBrowserContext", AnySession;
    /// `Target.disposeBrowserContext`.
    DisposeBrowserContext = "Target.disposeBrowserContext", AnySession;
    /// `Target.getTargetInfo` (a page session's goes to its guest).
    GetTargetInfo = "Target.getTargetInfo", Browser;
    /// `Target.getTargets`.
    GetTargets = "Target.getTargets", AnySession;
    /// `Target.setDiscoverTargets` (a page session's goes to its guest).
    SetDiscoverTargets = "Target.setDiscoverTargets", Browser;
    /// `Target.setAutoAttach` (a page session's goes to its guest: iframes, workers).
    SetAutoAttach = "Target.setAutoAttach", Browser;
    /// `Target.attachToTarget`.
    AttachToTarget = "Target.attachToTarget", Browser;
    /// `Target.attachToBrowserTarget`.
    AttachToBrowserTarget = "Target.attachToBrowserTarget", AnySession;
    /// `Target.detachFromTarget` (a page session's goes to its guest: its child sessions).
    DetachFromTarget = "Target.detachFromTarget", Browser;
    /// `Target.createTarget`.
    CreateTarget = "Target.createTarget", AnySession;
    /// `Target.closeTarget`.
    CloseTarget = "Target.closeTarget", AnySession;
    /// `Target.activateTarget`.
    ActivateTarget = "Target.activateTarget", AnySession;
    /// `Page.bringToFront`: the page's node is activated (on the root: not found).
    BringToFront = "Page.bringToFront", AnySession;
}

impl BrowserMethod {
    /// The browser-level method of this wire name, if it is one.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Whether the emulated browser answers this method on a page session too.
    pub(crate) fn on_page_session(self) -> bool {
        self.reach() == Reach::AnySession
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_are_unique() {
        for m in BrowserMethod::ALL {
            assert_eq!(BrowserMethod::parse(m.name()), Some(*m));
        }
        let mut names: Vec<&str> = BrowserMethod::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), BrowserMethod::ALL.len());
        assert_eq!(BrowserMethod::parse("Runtime.evaluate"), None);
    }

    #[test]
    fn page_sessions_reach_the_methods_chromium_answers_on_any_session() {
        let mut on_page: Vec<&str> =
            BrowserMethod::ALL.iter().filter(|m| m.on_page_session()).map(|m| m.name()).collect();
        on_page.sort();
        let mut expected = vec![
            "Target.createTarget",
            "Target.closeTarget",
            "Target.activateTarget",
            "Page.bringToFront",
            "Target.getTargets",
            "Target.getBrowserContexts",
            "Target.createBrowserContext",
            "Target.disposeBrowserContext",
            "Target.attachToBrowserTarget",
            "Browser.close",
            "Browser.crash",
            "Browser.crashGpuProcess",
            "Browser.getWindowForTarget",
            "Browser.getWindowBounds",
            "Browser.setWindowBounds",
            "Browser.setContentsSize",
            "Browser.grantPermissions",
            "Browser.setPermission",
            "Browser.resetPermissions",
        ];
        expected.sort();
        assert_eq!(on_page, expected);
    }
}
