//! Site permissions of isolated request contexts: what a CDP client grants,
//! denies or resets (`Browser.grantPermissions`, `Browser.setPermission`,
//! `Browser.resetPermissions`) for the pages of a context it made.
//!
//! Chromium's DevTools keeps such overrides only for the browser contexts its
//! own delegate knows, which CEF's request contexts are not; so a context's
//! grants are written as Chromium content settings of that context (an
//! off-the-record profile: in memory only, gone with it) for each site they
//! name. A grant for every site cannot be written as a default there (CEF
//! refuses defaults for incognito contexts), so it is kept here and written
//! for each site as its frames load. Every setting written is remembered, so
//! a reset puts each back to Chromium's default. The person's own profile is
//! never touched here: its default of denying stays.

use std::collections::{BTreeMap, BTreeSet};

use cef::sys::cef_content_setting_types_t as T;
use cef::sys::cef_content_setting_values_t as V;

/// A permission a page asks for, by the names of the Permissions API and
/// CDP's `Browser.PermissionType`, where Chromium keeps a content setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SitePermission {
    /// `navigator.geolocation`.
    Geolocation,
    /// `Notification.requestPermission`.
    Notifications,
    /// Web MIDI.
    Midi,
    /// Web MIDI with system-exclusive messages.
    MidiSysex,
    /// Clipboard read and write.
    ClipboardReadWrite,
    /// Clipboard write of sanitized data.
    ClipboardSanitizedWrite,
    /// Motion and light sensors.
    Sensors,
    /// Background sync.
    BackgroundSync,
    /// Periodic background sync.
    PeriodicBackgroundSync,
    /// Background fetch.
    BackgroundFetch,
    /// Persistent storage.
    DurableStorage,
    /// Idle detection.
    IdleDetection,
    /// Storage access from an embedded site.
    StorageAccess,
    /// Top-level storage access.
    TopLevelStorageAccess,
    /// Window management (multi-screen placement).
    WindowManagement,
    /// Local font access.
    LocalFonts,
    /// Screen wake lock.
    WakeLockScreen,
    /// System wake lock.
    WakeLockSystem,
    /// Protected media identifier.
    ProtectedMediaIdentifier,
    /// Payment handler.
    PaymentHandler,
    /// Web NFC.
    Nfc,
    /// Microphone.
    AudioCapture,
    /// Camera.
    VideoCapture,
    /// Camera pan, tilt and zoom.
    CameraPanTiltZoom,
    /// Screen capture.
    DisplayCapture,
    /// Pointer lock.
    PointerLock,
    /// Keyboard lock.
    KeyboardLock,
    /// Fullscreen without a gesture.
    AutomaticFullscreen,
    /// Augmented reality.
    Ar,
    /// Virtual reality.
    Vr,
    /// Hand tracking.
    HandTracking,
    /// Web printing.
    WebPrinting,
    /// Audio output device selection.
    SpeakerSelection,
    /// Captured surface control.
    CapturedSurfaceControl,
    /// Web app installation.
    WebAppInstallation,
}

impl SitePermission {
    /// Chromium's content setting for it.
    pub(crate) fn content_type(self) -> T {
        use SitePermission::*;
        match self {
            Geolocation => T::CEF_CONTENT_SETTING_TYPE_GEOLOCATION,
            Notifications => T::CEF_CONTENT_SETTING_TYPE_NOTIFICATIONS,
            Midi => T::CEF_CONTENT_SETTING_TYPE_MIDI,
            MidiSysex => T::CEF_CONTENT_SETTING_TYPE_MIDI_SYSEX,
            ClipboardReadWrite => T::CEF_CONTENT_SETTING_TYPE_CLIPBOARD_READ_WRITE,
            ClipboardSanitizedWrite => T::CEF_CONTENT_SETTING_TYPE_CLIPBOARD_SANITIZED_WRITE,
            Sensors => T::CEF_CONTENT_SETTING_TYPE_SENSORS,
            BackgroundSync => T::CEF_CONTENT_SETTING_TYPE_BACKGROUND_SYNC,
            PeriodicBackgroundSync => T::CEF_CONTENT_SETTING_TYPE_PERIODIC_BACKGROUND_SYNC,
            BackgroundFetch => T::CEF_CONTENT_SETTING_TYPE_BACKGROUND_FETCH,
            DurableStorage => T::CEF_CONTENT_SETTING_TYPE_DURABLE_STORAGE,
            IdleDetection => T::CEF_CONTENT_SETTING_TYPE_IDLE_DETECTION,
            StorageAccess => T::CEF_CONTENT_SETTING_TYPE_STORAGE_ACCESS,
            TopLevelStorageAccess => T::CEF_CONTENT_SETTING_TYPE_TOP_LEVEL_STORAGE_ACCESS,
            WindowManagement => T::CEF_CONTENT_SETTING_TYPE_WINDOW_MANAGEMENT,
            LocalFonts => T::CEF_CONTENT_SETTING_TYPE_LOCAL_FONTS,
            WakeLockScreen => T::CEF_CONTENT_SETTING_TYPE_WAKE_LOCK_SCREEN,
            WakeLockSystem => T::CEF_CONTENT_SETTING_TYPE_WAKE_LOCK_SYSTEM,
            ProtectedMediaIdentifier => T::CEF_CONTENT_SETTING_TYPE_PROTECTED_MEDIA_IDENTIFIER,
            PaymentHandler => T::CEF_CONTENT_SETTING_TYPE_PAYMENT_HANDLER,
            Nfc => T::CEF_CONTENT_SETTING_TYPE_NFC,
            AudioCapture => T::CEF_CONTENT_SETTING_TYPE_MEDIASTREAM_MIC,
            VideoCapture => T::CEF_CONTENT_SETTING_TYPE_MEDIASTREAM_CAMERA,
            CameraPanTiltZoom => T::CEF_CONTENT_SETTING_TYPE_CAMERA_PAN_TILT_ZOOM,
            DisplayCapture => T::CEF_CONTENT_SETTING_TYPE_DISPLAY_CAPTURE,
            PointerLock => T::CEF_CONTENT_SETTING_TYPE_POINTER_LOCK,
            KeyboardLock => T::CEF_CONTENT_SETTING_TYPE_KEYBOARD_LOCK,
            AutomaticFullscreen => T::CEF_CONTENT_SETTING_TYPE_AUTOMATIC_FULLSCREEN,
            Ar => T::CEF_CONTENT_SETTING_TYPE_AR,
            Vr => T::CEF_CONTENT_SETTING_TYPE_VR,
            HandTracking => T::CEF_CONTENT_SETTING_TYPE_HAND_TRACKING,
            WebPrinting => T::CEF_CONTENT_SETTING_TYPE_WEB_PRINTING,
            SpeakerSelection => T::CEF_CONTENT_SETTING_TYPE_SPEAKER_SELECTION,
            CapturedSurfaceControl => T::CEF_CONTENT_SETTING_TYPE_CAPTURED_SURFACE_CONTROL,
            WebAppInstallation => T::CEF_CONTENT_SETTING_TYPE_WEB_APP_INSTALLATION,
        }
    }
}

/// What a site is told when it asks for a permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteSetting {
    /// Granted without asking.
    Granted,
    /// Refused without asking.
    Denied,
    /// Asked for (here: the person's denial, as every prompt gets).
    Prompt,
}

impl SiteSetting {
    fn content_value(self) -> V {
        match self {
            SiteSetting::Granted => V::CEF_CONTENT_SETTING_VALUE_ALLOW,
            SiteSetting::Denied => V::CEF_CONTENT_SETTING_VALUE_BLOCK,
            SiteSetting::Prompt => V::CEF_CONTENT_SETTING_VALUE_ASK,
        }
    }
}

/// One content setting to write: for pages of `site` embedded in `top`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Write {
    pub(crate) site: String,
    pub(crate) top: String,
    pub(crate) permission: SitePermission,
    pub(crate) value: V,
}

/// The grants of one isolated context: those for every site, and every
/// setting written so far (to be put back by a reset).
#[derive(Debug, Default)]
pub(crate) struct ContextGrants {
    any_site: BTreeMap<SitePermission, SiteSetting>,
    written: BTreeSet<(String, String, SitePermission)>,
}

impl ContextGrants {
    /// Records `setting` for `permissions` of `site` (`None`: every site) and
    /// returns the settings to write now; `loaded` are the (frame, top) sites
    /// of the context's frames, which a grant for every site reaches at once.
    pub(crate) fn set(
        &mut self,
        site: Option<&str>,
        permissions: &[SitePermission],
        setting: SiteSetting,
        loaded: &[(String, String)],
    ) -> Vec<Write> {
        let pairs: Vec<(String, String)> = match site {
            Some(s) => vec![(s.to_string(), s.to_string())],
            None => {
                for p in permissions {
                    self.any_site.insert(*p, setting);
                }
                loaded.to_vec()
            }
        };
        let mut writes = Vec::new();
        for (site, top) in pairs {
            for p in permissions {
                self.written.insert((site.clone(), top.clone(), *p));
                writes.push(Write {
                    site: site.clone(),
                    top: top.clone(),
                    permission: *p,
                    value: setting.content_value(),
                });
            }
        }
        writes
    }

    /// The settings a frame of `site` in a page of `top` needs as it loads
    /// (the grants for every site it has not been given yet).
    pub(crate) fn on_load(&mut self, site: &str, top: &str) -> Vec<Write> {
        let mut writes = Vec::new();
        for (p, setting) in &self.any_site {
            if self.written.insert((site.to_string(), top.to_string(), *p)) {
                writes.push(Write {
                    site: site.to_string(),
                    top: top.to_string(),
                    permission: *p,
                    value: setting.content_value(),
                });
            }
        }
        writes
    }

    /// Forgets every grant; returns the settings that put each written one back to Chromium's default.
    pub(crate) fn reset(&mut self) -> Vec<Write> {
        self.any_site.clear();
        std::mem::take(&mut self.written)
            .into_iter()
            .map(|(site, top, permission)| Write { site, top, permission, value: V::CEF_CONTENT_SETTING_VALUE_DEFAULT })
            .collect()
    }

    /// Whether a frame loading needs a look (some grant covers every site).
    pub(crate) fn covers_every_site(&self) -> bool {
        !self.any_site.is_empty()
    }
}

/// The origin of a URL as content settings key it (`scheme://host[:port]`),
/// `None` for URLs without one (`about:blank`, `data:`).
pub(crate) fn site_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    match parsed.origin() {
        o @ url::Origin::Tuple(..) => Some(o.ascii_serialization()),
        url::Origin::Opaque(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SitePermission::*;

    #[test]
    fn a_grant_for_one_site_is_written_for_it_and_put_back_by_reset() {
        let mut g = ContextGrants::default();
        let w = g.set(Some("http://127.0.0.1:8000"), &[Geolocation, Notifications], SiteSetting::Granted, &[]);
        assert_eq!(w.len(), 2);
        assert!(w.iter().all(|w| w.site == "http://127.0.0.1:8000" && w.value == V::CEF_CONTENT_SETTING_VALUE_ALLOW));
        assert!(!g.covers_every_site());
        assert!(g.on_load("http://127.0.0.1:8000", "http://127.0.0.1:8000").is_empty());
        let back = g.reset();
        assert_eq!(back.len(), 2);
        assert!(back.iter().all(|w| w.value == V::CEF_CONTENT_SETTING_VALUE_DEFAULT));
        assert!(g.reset().is_empty(), "a second reset has nothing to put back");
    }

    #[test]
    fn a_grant_for_every_site_reaches_loaded_frames_now_and_new_sites_once_as_they_load() {
        let mut g = ContextGrants::default();
        let loaded = vec![("http://a.test".to_string(), "http://a.test".to_string())];
        let w = g.set(None, &[Geolocation], SiteSetting::Granted, &loaded);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].site, "http://a.test");
        assert!(g.covers_every_site());
        assert!(g.on_load("http://a.test", "http://a.test").is_empty(), "already written");
        let w = g.on_load("http://b.test", "http://a.test");
        assert_eq!((w.len(), w[0].site.as_str(), w[0].top.as_str()), (1, "http://b.test", "http://a.test"));
        assert_eq!(g.reset().len(), 2);
        assert!(!g.covers_every_site());
        assert!(g.on_load("http://c.test", "http://c.test").is_empty(), "reset forgets the grant for every site");
    }

    #[test]
    fn denied_and_prompt_are_written_as_block_and_ask() {
        let mut g = ContextGrants::default();
        assert_eq!(
            g.set(Some("http://a.test"), &[Midi], SiteSetting::Denied, &[])[0].value,
            V::CEF_CONTENT_SETTING_VALUE_BLOCK
        );
        assert_eq!(
            g.set(Some("http://a.test"), &[Midi], SiteSetting::Prompt, &[])[0].value,
            V::CEF_CONTENT_SETTING_VALUE_ASK
        );
        assert_eq!(g.reset().len(), 1, "one setting written twice is put back once");
    }

    #[test]
    fn sites_are_origins_and_opaque_urls_have_none() {
        assert_eq!(site_of("http://127.0.0.1:8000/a/b?c#d").as_deref(), Some("http://127.0.0.1:8000"));
        assert_eq!(site_of("https://example.test/").as_deref(), Some("https://example.test"));
        assert_eq!(site_of("about:blank"), None);
        assert_eq!(site_of("not a url"), None);
    }
}
