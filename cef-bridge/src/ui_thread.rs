//! Running closures on CEF's UI thread (the app's main thread) from any thread.

use crate::cef_object::cef_object;
use cef::{sys, ImplTask, Task, ThreadId};
use parking_lot::Mutex;
use std::sync::Arc;

type BoxedTask = Box<dyn FnOnce() + Send + 'static>;

cef_object!(ClosureTask, _cef_task_t, WrapTask { f: Arc<Mutex<Option<BoxedTask>>> });

impl ImplTask for ClosureTask {
    fn get_raw(&self) -> *mut sys::_cef_task_t {
        self.object.cast()
    }
    fn execute(&self) {
        if let Some(f) = self.f.lock().take() {
            f();
        }
    }
}

fn ui() -> ThreadId {
    ThreadId::from(sys::cef_thread_id_t::TID_UI)
}

/// True when called on CEF's UI thread.
pub fn on_ui_thread() -> bool {
    cef::currently_on(ui()) == 1
}

/// Runs `f` on the UI thread: now if already there, else posted.
/// Returns false when CEF refused the task (engine shut down).
pub fn run_on_ui<F: FnOnce() + Send + 'static>(f: F) -> bool {
    if on_ui_thread() {
        f();
        return true;
    }
    post_to_ui(f)
}

/// Posts `f` to the UI thread even when already on it (runs after the current task).
pub fn post_to_ui<F: FnOnce() + Send + 'static>(f: F) -> bool {
    let mut task = Task::new(ClosureTask::create(Arc::new(Mutex::new(Some(Box::new(f))))));
    cef::post_task(ui(), Some(&mut task)) == 1
}
