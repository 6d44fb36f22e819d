//! A page's file chooser (`<input type=file>`, `showOpenFilePicker`) that CEF
//! hands to the app instead of opening a desktop dialog of its own: what the
//! page asks for, and the callback that answers it. A CDP client that
//! intercepts file choosers (`Page.setInterceptFileChooserDialog`) gets them
//! through DevTools instead; CEF never asks the app then.

/// What the page wants chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChooserMode {
    /// One existing file.
    Open,
    /// One or more existing files.
    OpenMultiple,
    /// One existing folder (`webkitdirectory`).
    OpenFolder,
    /// A file to write (it need not exist).
    Save,
}

/// A file chooser a page opened.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileChooser {
    /// What is to be chosen.
    pub mode: ChooserMode,
    /// The title the page gave it (usually empty: the app words it then).
    pub title: String,
    /// The file or folder the page suggested, possibly empty.
    pub default_path: String,
    /// What the page accepts: extensions (".txt"), MIME types ("image/png") or
    /// wildcards ("image/*"); empty accepts anything.
    pub accept: Vec<String>,
}
