//! The CEF objects this crate keeps in state shared across threads, and the
//! wrapper that lets exactly those cross.
//!
//! CEF objects are atomically ref-counted and their C++ implementations are
//! thread-safe for the calls made off the UI thread here
//! (`send_dev_tools_message`, which CEF posts to the UI thread itself). Every
//! other call is made inside [`run_on_ui`](crate::run_on_ui).

/// A CEF object type that may be kept in state shared across threads. Only
/// the types listed in this file are meant to cross; sealed so no other type
/// can claim it.
pub(crate) trait CrossThread: sealed::Sealed + Send + Sync {}

mod sealed {
    /// Keeps [`CrossThread`](super::CrossThread) to the types of this file.
    pub trait Sealed {}
    impl Sealed for cef::BrowserHost {}
    impl Sealed for cef::Browser {}
    impl Sealed for cef::Registration {}
    impl Sealed for cef::JsdialogCallback {}
    impl Sealed for cef::FileDialogCallback {}
    impl Sealed for cef::RunContextMenuCallback {}
    impl Sealed for cef::RequestContext {}
}

impl CrossThread for cef::BrowserHost {}
impl CrossThread for cef::Browser {}
impl CrossThread for cef::Registration {}
impl CrossThread for cef::JsdialogCallback {}
impl CrossThread for cef::FileDialogCallback {}
impl CrossThread for cef::RunContextMenuCallback {}
impl CrossThread for cef::RequestContext {}

/// A CEF object that may be moved across threads: one of the [`CrossThread`] types.
///
/// Send and Sync come from cef-rs itself (its `RefGuard` is Send + Sync for
/// ref-counted types); the bound keeps us from shipping any other CEF type.
pub(crate) struct CefRef<T: CrossThread>(pub(crate) T);

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_cross_thread_cef_types_are_send_and_sync() {
        assert_send_sync::<CefRef<cef::BrowserHost>>();
        assert_send_sync::<CefRef<cef::Browser>>();
        assert_send_sync::<CefRef<cef::Registration>>();
        assert_send_sync::<CefRef<cef::JsdialogCallback>>();
        assert_send_sync::<CefRef<cef::FileDialogCallback>>();
        assert_send_sync::<CefRef<cef::RunContextMenuCallback>>();
        assert_send_sync::<CefRef<cef::RequestContext>>();
    }
}
