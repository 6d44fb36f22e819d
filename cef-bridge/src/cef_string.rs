//! Reading CEF's UTF-16 strings without cef-rs 132.3.2's UTF-8 conversion,
//! which passes a NULL output pointer to `cef_string_utf16_to_utf8` and
//! segfaults (defect 1 of `defects`, which re-exports these). Every CEF
//! string this crate reads goes through here. Kept apart from `defects` so
//! that reading a string needs nothing of the vtable patches (which know
//! browsers, menus and file choosers).

use cef::{sys, CefStringUtf16};

/// Decodes a CEF UTF-16 string without the crashing UTF-8 conversion (defect 1).
pub fn string_from_cef(s: &CefStringUtf16) -> String {
    let raw: *const sys::_cef_string_utf16_t = s.into();
    // SAFETY: `raw` points at the string's live cef_string_utf16_t for the
    // duration of this call (borrowed from `s`).
    unsafe { string_from_raw(raw) }
}

/// Decodes a raw `cef_string_t` pointer (NULL or empty gives "").
///
/// # Safety
/// `raw` must be NULL or point at a valid `cef_string_utf16_t` whose buffer
/// holds `length` UTF-16 units.
pub unsafe fn string_from_raw(raw: *const sys::_cef_string_utf16_t) -> String {
    match raw.as_ref() {
        Some(r) if !r.str_.is_null() && r.length > 0 => {
            String::from_utf16_lossy(std::slice::from_raw_parts(r.str_, r.length))
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_utf16_without_the_crashing_conversion() {
        // With cef 132.3.2, CefStringUtf8::from(&s) on this value segfaults.
        for text in ["", "plain", "Grüße — 日本語 😀"] {
            let s = CefStringUtf16::from(text);
            assert_eq!(string_from_cef(&s), text);
        }
        // SAFETY: NULL is explicitly allowed.
        assert_eq!(unsafe { string_from_raw(std::ptr::null()) }, "");
    }
}
