//! Chromium's X11 events, dispatched.
//!
//! On Linux, Chromium reads its X connection through a GLib source on the
//! default main context (`X11EventWatcherGlib`). CEF's external message pump
//! (`CefDoMessageLoopWork`) runs Chromium's tasks but never iterates that
//! context, so events sent to Chromium's own X windows wait forever: another
//! program asking for the text a page copied (a `SelectionRequest` to
//! Chromium's clipboard window) gets no answer, and copying from a page never
//! reaches the desktop (CEF issue 3117 is the same root). Each pump therefore
//! also dispatches what is ready on that context, without blocking.
//!
//! The two GLib functions are looked up at run time: libcef links GLib, so
//! they are always in the process once the engine is loaded, and the build
//! needs no GLib development files. Headless (no X server) the context holds
//! nothing of Chromium's and the call returns at once.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

type DefaultContext = unsafe extern "C" fn() -> *mut c_void;
type Iteration = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// The most sources dispatched per pump, so a flood of X events cannot hold the loop.
const MAX_DISPATCHES: usize = 64;

struct Glib {
    default_context: DefaultContext,
    iteration: Iteration,
}

fn glib() -> Option<&'static Glib> {
    static GLIB: OnceLock<Option<Glib>> = OnceLock::new();
    GLIB.get_or_init(|| {
        // SAFETY: dlsym with RTLD_DEFAULT searches the loaded objects; the
        // names are NUL-terminated literals, and a found symbol has the C
        // signature GLib documents for it.
        unsafe {
            let default_context = libc::dlsym(libc::RTLD_DEFAULT, c"g_main_context_default".as_ptr());
            let iteration = libc::dlsym(libc::RTLD_DEFAULT, c"g_main_context_iteration".as_ptr());
            if default_context.is_null() || iteration.is_null() {
                tracing::warn!("GLib not found in the process: pages' copies will not reach the desktop clipboard");
                return None;
            }
            Some(Glib {
                default_context: std::mem::transmute::<*mut c_void, DefaultContext>(default_context),
                iteration: std::mem::transmute::<*mut c_void, Iteration>(iteration),
            })
        }
    })
    .as_ref()
}

/// Dispatches what is ready on GLib's default main context, never waiting.
/// Call on the thread that runs CEF's pump (Chromium's UI thread).
pub(crate) fn dispatch_ready() {
    let Some(g) = glib() else { return };
    // SAFETY: both functions are GLib's own, called with the default
    // context on the thread that owns it (CEF's UI thread); `0` = never block.
    unsafe {
        let context = (g.default_context)();
        for _ in 0..MAX_DISPATCHES {
            if (g.iteration)(context, 0) == 0 {
                break;
            }
        }
    }
}
