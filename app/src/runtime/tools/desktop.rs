//! What `terminal_external` reads of the app's process environment, as a
//! value ([`DesktopEnv`]: whether a display is set, PATH, the user's shell),
//! and where it comes from ([`DesktopSource`]): the process, read once per
//! call at the edge, or, in tests, a fixed value, since tests running in
//! parallel cannot safely set the process's variables.

use std::ffi::OsString;
#[cfg(test)]
use std::sync::Arc;

/// The desktop a command may open a terminal window on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DesktopEnv {
    /// An X11 or Wayland display is set.
    pub(crate) display: bool,
    /// PATH, where desktop terminals are probed.
    pub(crate) path_var: Option<OsString>,
    /// The user's shell (the canvas fallback runs the command with it).
    pub(crate) shell: String,
}

impl DesktopEnv {
    /// The app's own environment now.
    pub(crate) fn of_process() -> Self {
        let display = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
        let shell = std::env::var("SHELL").ok().filter(|s| s.starts_with('/')).unwrap_or_else(|| "/bin/sh".into());
        Self { display, path_var: std::env::var_os("PATH"), shell }
    }
}

/// Where an operation's [`DesktopEnv`] comes from.
#[derive(Debug, Clone, Default)]
pub(crate) enum DesktopSource {
    /// The app's process environment, read when the operation runs.
    #[default]
    Process,
    /// A test's desktop.
    #[cfg(test)]
    Fixed(Arc<DesktopEnv>),
}

impl DesktopSource {
    /// The environment to use now.
    pub(crate) fn read(&self) -> DesktopEnv {
        match self {
            Self::Process => DesktopEnv::of_process(),
            #[cfg(test)]
            Self::Fixed(env) => (**env).clone(),
        }
    }
}
