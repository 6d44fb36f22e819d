//! Boilerplate shared by every CEF object this crate implements.
//!
//! cef-rs 132.3.2 has no `wrap_*!` macros: an implemented interface needs a
//! struct holding its `RcImpl` pointer, `WrapX::wrap_rc` to store it, `Clone`
//! (add a reference) and `Rc::as_base`. [`cef_object!`] writes that once.
//! An optional `patch` function runs in `wrap_rc` with the fresh `RcImpl`
//! (the C struct and this object), which is where the out-parameter vtable
//! slots are replaced (see `defects`).

/// Declares a CEF object struct with its ref-counting plumbing.
macro_rules! cef_object {
    ($name:ident, $raw:ident, $wrap:ident { $($field:ident : $ty:ty),* $(,)? } $(, patch = $patch:path)?) => {
        pub(crate) struct $name {
            object: *mut cef::rc::RcImpl<cef::sys::$raw, Self>,
            $($field: $ty,)*
        }
        impl $name {
            // One argument per field: a client holds all its handlers.
            #[allow(dead_code, clippy::too_many_arguments)]
            pub(crate) fn create($($field: $ty),*) -> Self {
                Self { object: std::ptr::null_mut(), $($field,)* }
            }
        }
        impl cef::$wrap for $name {
            fn wrap_rc(&mut self, object: *mut cef::rc::RcImpl<cef::sys::$raw, Self>) {
                self.object = object;
                $(
                    // SAFETY: `object` is the freshly created RcImpl of this wrapper.
                    unsafe { $patch(object) };
                )?
            }
        }
        impl Clone for $name {
            fn clone(&self) -> Self {
                // SAFETY: `object` was set by wrap_rc before any clone happens.
                unsafe { cef::rc::Rc::add_ref(&(*self.object).interface) };
                Self { object: self.object, $($field: self.$field.clone(),)* }
            }
        }
        impl cef::rc::Rc for $name {
            fn as_base(&self) -> &cef::sys::cef_base_ref_counted_t {
                // SAFETY: the C struct begins with cef_base_ref_counted_t.
                unsafe { &*(self.object as *const cef::sys::cef_base_ref_counted_t) }
            }
        }
    };
}

pub(crate) use cef_object;
