//! Every Chromium command-line switch and disabled feature the engine sets,
//! each with the reason, in one place. Most keep Chromium off the network:
//! the app talks only to 127.0.0.1 and to the hosts of the pages it is asked
//! to load (ARCHITECTURE.md, "Network privacy", has the table of which knob
//! stops which host; `app/tests/privacy_e2e.rs` checks it under strace).

/// Which Chromium platform flags to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayMode {
    /// An X server is present (a window, or Xvfb).
    X11,
    /// No display server: Ozone's headless platform.
    Headless,
}

impl DisplayMode {
    /// X11 when `DISPLAY` is set, headless otherwise.
    pub fn detect() -> Self {
        match std::env::var_os("DISPLAY") {
            Some(d) if !d.is_empty() => DisplayMode::X11,
            _ => DisplayMode::Headless,
        }
    }
}

/// One switch: its name (without `--`), value, and why it is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    /// The switch name, without the leading `--`.
    pub name: &'static str,
    /// Its value (`--name=value`), if any.
    pub value: Option<&'static str>,
    /// What it turns off (for the docs and the reader).
    pub why: &'static str,
}

const fn flag(name: &'static str, why: &'static str) -> Switch {
    Switch { name, value: None, why }
}

/// Switches for every display mode.
pub const SWITCHES: &[Switch] = &[
    // Rendering on these machines (NOTES-cef): software only.
    flag("disable-gpu", "GPU acceleration (software rendering; WebGL still works through SwiftShader)"),
    flag("disable-gpu-compositing", "GPU compositing (off-screen frames are copied from shared memory)"),
    // Logging: see `stderr`.
    Switch {
        name: "enable-logging",
        value: Some("stderr"),
        why: "log to stderr only, which the engine points at chromium.log (with a log file Chromium also echoes errors to stderr)",
    },
    // Network privacy.
    flag(
        "disable-background-networking",
        "background services' fetches: variations seed, safe-browsing lists, promotions, network time",
    ),
    flag("disable-component-update", "the component updater (update.googleapis.com, redirector.gvt1.com)"),
    flag("disable-sync", "Chrome Sync (clients4.google.com, chrome-sync)"),
    flag("disable-domain-reliability", "Domain Reliability beacons (*.gvt2.com)"),
    flag("disable-breakpad", "crash-report uploads (clients2.google.com/cr)"),
    // No --metrics-recording-only: this build neither records nor sends UMA
    // without it (no consent, not Google-branded), while with it UMA records in
    // its test mode, whose one log never closes and keeps every user action
    // (issue 16: about 30 KiB a minute under the soak).
    flag("disable-default-apps", "installing default web apps from the web store"),
    flag(
        "disable-component-extensions-with-background-pages",
        "built-in extensions with background pages (their update checks)",
    ),
    flag("no-pings", "hyperlink-auditing pings (<a ping>)"),
    flag("no-first-run", "first-run tasks (welcome page, import, promotions)"),
    flag("no-default-browser-check", "the default-browser check"),
    flag("disable-field-trial-config", "field-trial testing configs: the same features on every machine"),
    // GAIA's /ListAccounts (accounts.google.com) runs at every profile start
    // and retries; no switch, feature or preference turns it off in an
    // embedder. Port 1 is on Chromium's list of blocked ports, so requests to
    // these origins fail before any socket or DNS lookup exists.
    Switch { name: "gaia-url", value: Some(BLOCKED_ORIGIN), why: "Google account lookups (accounts.google.com)" },
    Switch { name: "google-apis-url", value: Some(BLOCKED_ORIGIN), why: "Google API token calls (www.googleapis.com)" },
    Switch { name: "lso-url", value: Some(BLOCKED_ORIGIN), why: "OAuth sign-in pages (accounts.google.com/o/oauth2)" },
];

/// An origin Chromium never connects to: port 1 is on its blocked-port list
/// (requests fail with ERR_UNSAFE_PORT before a socket is opened).
pub const BLOCKED_ORIGIN: &str = "http://127.0.0.1:1";

/// Chromium features turned off (one `--disable-features` list; a second
/// switch of that name would replace the first).
pub const DISABLED_FEATURES: &[(&str, &str)] = &[
    // Paint holding keeps showing the previous page until the new one has
    // "contentful" paint (text, images): a page of plain colour would stay
    // blank for seconds. Off-screen views want the page as it is.
    ("PaintHolding", "keeping the previous page on screen until the next one paints content"),
    // Network privacy.
    ("Translate", "the translate bar and its language-model downloads (translate.googleapis.com)"),
    ("MediaRouter", "Cast discovery (mDNS/SSDP on the local network)"),
    ("DialMediaRouteProvider", "DIAL (SSDP) discovery of Cast devices"),
    ("OptimizationHints", "optimisation-guide hints (optimizationguide-pa.googleapis.com)"),
    ("OptimizationHintsFetching", "fetching optimisation hints for visited hosts"),
    ("OptimizationGuideModelDownloading", "optimisation-guide model downloads (redirector.gvt1.com)"),
    ("OptimizationTargetPrediction", "on-device prediction models"),
    ("AutofillServerCommunication", "autofill form-type queries and votes (content-autofill.googleapis.com)"),
    ("NetworkTimeServiceQuerying", "network-time queries (clients2.google.com/time)"),
    ("SegmentationPlatform", "segmentation-platform models"),
    ("PushMessaging", "push messaging through GCM (mtalk.google.com)"),
    ("SpellcheckService", "spell-check dictionary downloads (redirector.gvt1.com)"),
    // Memory (issue 16, soak/heap-sites): Journeys' context clusterer keeps
    // every visit of the last hour in memory (about 0.3 KiB a navigation)
    // for a history page the app does not have.
    ("Journeys", "history clusters (Journeys): in-memory clusters of every visit, for chrome://history"),
];

/// The switches for a display mode, ready for the command line.
pub fn switches_for(display: DisplayMode) -> Vec<(String, Option<String>)> {
    let mut s: Vec<(String, Option<String>)> = Vec::with_capacity(SWITCHES.len() + 2);
    if display == DisplayMode::Headless {
        s.push(("ozone-platform".into(), Some("headless".into())));
    }
    s.extend(SWITCHES.iter().map(|w| (w.name.to_string(), w.value.map(str::to_string))));
    let features: Vec<&str> = DISABLED_FEATURES.iter().map(|(f, _)| *f).collect();
    s.push(("disable-features".into(), Some(features.join(","))));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(s: &'a [(String, Option<String>)], name: &str) -> Option<Option<&'a str>> {
        s.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_deref())
    }

    #[test]
    fn switches_differ_by_display() {
        let h = switches_for(DisplayMode::Headless);
        assert_eq!(value(&h, "ozone-platform"), Some(Some("headless")));
        let x = switches_for(DisplayMode::X11);
        assert_eq!(value(&x, "ozone-platform"), None);
        for s in [&h, &x] {
            assert_eq!(value(s, "disable-gpu"), Some(None));
            assert_eq!(value(s, "disable-gpu-compositing"), Some(None));
        }
    }

    #[test]
    fn every_privacy_knob_is_on_the_command_line() {
        let s = switches_for(DisplayMode::Headless);
        for name in [
            "disable-background-networking",
            "disable-component-update",
            "disable-sync",
            "disable-domain-reliability",
            "disable-breakpad",
            "no-pings",
            "no-first-run",
            "disable-field-trial-config",
        ] {
            assert_eq!(value(&s, name), Some(None), "--{name} missing");
        }
        for name in ["gaia-url", "google-apis-url", "lso-url"] {
            assert_eq!(value(&s, name), Some(Some(BLOCKED_ORIGIN)), "--{name} not blocked");
        }
        let features = value(&s, "disable-features").flatten().unwrap_or_default();
        let features: Vec<&str> = features.split(',').collect();
        for f in [
            "Translate",
            "MediaRouter",
            "OptimizationHints",
            "OptimizationGuideModelDownloading",
            "AutofillServerCommunication",
            "NetworkTimeServiceQuerying",
            "SpellcheckService",
            "PaintHolding",
        ] {
            assert!(features.contains(&f), "feature {f} not disabled: {features:?}");
        }
    }

    #[test]
    fn metrics_are_not_recorded() {
        let s = switches_for(DisplayMode::Headless);
        assert_eq!(value(&s, "metrics-recording-only"), None, "it starts UMA recording, whose log grows for ever");
        let features = value(&s, "disable-features").flatten().unwrap_or_default();
        assert!(features.split(',').any(|f| f == "Journeys"), "history clusters keep every visit in memory");
    }

    #[test]
    fn chromium_logs_to_stderr_only() {
        assert_eq!(value(&switches_for(DisplayMode::X11), "enable-logging"), Some(Some("stderr")));
    }

    #[test]
    fn each_switch_and_feature_appears_once_with_a_reason() {
        let s = switches_for(DisplayMode::Headless);
        let mut names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a switch is set twice (the last would win)");
        let mut features: Vec<&str> = DISABLED_FEATURES.iter().map(|(f, _)| *f).collect();
        features.sort();
        let before = features.len();
        features.dedup();
        assert_eq!(before, features.len());
        assert!(SWITCHES.iter().all(|w| !w.why.is_empty() && !w.name.starts_with('-')));
        assert!(DISABLED_FEATURES.iter().all(|(f, why)| !why.is_empty() && !f.contains(',')));
    }
}
