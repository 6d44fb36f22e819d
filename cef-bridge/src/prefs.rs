//! The Chromium preferences the engine sets at start-up, each with the
//! reason: the services that have no switch or feature of their own
//! (sign-in, safe browsing, spelling service, DNS prefetch…). Set on the
//! global request context (the profile) and the global preference manager
//! (local state) once CEF's context exists, before the first browser.

use crate::cef_string::string_from_cef;
use cef::{CefStringUtf16, ImplPreferenceManager, ImplValue};
use thiserror::Error;

/// A preference value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefValue {
    /// A boolean preference.
    Bool(bool),
    /// An integer preference.
    Int(i32),
    /// A string preference.
    Str(&'static str),
}

/// Which preference store a preference lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefStore {
    /// The profile's preferences (the global request context).
    Profile,
    /// Browser-wide local state (the global preference manager).
    LocalState,
}

/// One preference: store, name, value, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pref {
    /// Where it lives.
    pub store: PrefStore,
    /// Chromium's dotted preference name.
    pub name: &'static str,
    /// The value set.
    pub value: PrefValue,
    /// What it turns off.
    pub why: &'static str,
}

const fn profile(name: &'static str, value: PrefValue, why: &'static str) -> Pref {
    Pref { store: PrefStore::Profile, name, value, why }
}

/// Every preference the engine sets.
pub const PREFERENCES: &[Pref] = &[
    profile(
        "net.network_prediction_options",
        // NETWORK_PREDICTION_NEVER
        PrefValue::Int(2),
        "DNS prefetch, preconnect and prefetch of links a page shows but was not asked to load",
    ),
    profile("signin.allowed", PrefValue::Bool(false), "browser sign-in and account lookups (accounts.google.com)"),
    profile("safebrowsing.enabled", PrefValue::Bool(false), "Safe Browsing lookups (safebrowsing.googleapis.com)"),
    profile("search.suggest_enabled", PrefValue::Bool(false), "search suggestions (www.google.com/complete)"),
    profile("alternate_error_pages.enabled", PrefValue::Bool(false), "error-page suggestions (www.google.com)"),
    profile("translate.enabled", PrefValue::Bool(false), "the translate offer (translate.googleapis.com)"),
    profile("browser.enable_spellchecking", PrefValue::Bool(false), "spell-check dictionary downloads"),
    profile("spellcheck.use_spelling_service", PrefValue::Bool(false), "the online spelling service"),
    profile("autofill.profile_enabled", PrefValue::Bool(false), "address autofill (content-autofill.googleapis.com)"),
    profile("autofill.credit_card_enabled", PrefValue::Bool(false), "payment autofill (payments.google.com)"),
    profile("credentials_enable_service", PrefValue::Bool(false), "the password manager (passwordsleakcheck-pa)"),
    profile(
        "url_keyed_anonymized_data_collection.enabled",
        PrefValue::Bool(false),
        "URL-keyed metrics collection",
    ),
    Pref {
        store: PrefStore::LocalState,
        name: "dns_over_https.mode",
        value: PrefValue::Str("off"),
        why: "automatic secure-DNS upgrade (DoH to the system resolver's provider): names resolve only as the system does",
    },
];

fn cef_value(v: PrefValue) -> Option<cef::Value> {
    let value = cef::value_create()?;
    let ok = match v {
        PrefValue::Bool(b) => value.set_bool(i32::from(b)),
        PrefValue::Int(i) => value.set_int(i),
        PrefValue::Str(s) => value.set_string(Some(&CefStringUtf16::from(s))),
    };
    (ok == 1).then_some(value)
}

/// Why one preference could not be set (logged, then skipped).
#[derive(Debug, Error)]
enum PrefError {
    /// The store does not know the name or keeps it from being changed.
    #[error("unknown or not user-modifiable")]
    NotModifiable,
    /// CEF could not make a value to hold it.
    #[error("cannot make the value")]
    NoValue,
    /// The store refused the value, in CEF's words.
    #[error("{0}")]
    Refused(String),
    /// No preference store to set it in.
    #[error("no preference store")]
    NoStore,
}

fn set(manager: &impl ImplPreferenceManager, pref: &Pref) -> Result<(), PrefError> {
    let name = CefStringUtf16::from(pref.name);
    if manager.can_set_preference(Some(&name)) != 1 {
        return Err(PrefError::NotModifiable);
    }
    let mut value = cef_value(pref.value).ok_or(PrefError::NoValue)?;
    // CEF refuses the call when the error out-parameter is NULL, and cef-rs
    // passes NULL for every string but a "user free" one: allocate one.
    // SAFETY: CEF allocates an empty string; CefStringUtf16 frees it on drop.
    let mut error = CefStringUtf16::from(unsafe { cef::sys::cef_string_userfree_utf16_alloc() });
    if manager.set_preference(Some(&name), Some(&mut value), Some(&mut error)) == 1 {
        Ok(())
    } else {
        Err(PrefError::Refused(string_from_cef(&error)))
    }
}

/// Sets every preference of [`PREFERENCES`] (on CEF's UI thread, once its
/// context is initialised); one that cannot be set is logged and skipped.
pub(crate) fn apply() {
    let local_state = cef::preference_manager_get_global();
    if let Some(profile) = cef::request_context_get_global_context() {
        apply_to_profile(&profile);
    } else {
        tracing::warn!("no global request context: the profile preferences are not set");
    }
    for pref in PREFERENCES.iter().filter(|p| p.store == PrefStore::LocalState) {
        let result = match &local_state {
            Some(m) => set(m, pref),
            None => Err(PrefError::NoStore),
        };
        if let Err(error) = result {
            tracing::warn!(name = pref.name, %error, "could not set a Chromium preference");
        }
    }
}

/// Sets the profile preferences of [`PREFERENCES`] on one request context
/// (the global one, or an isolated context once CEF initialised it).
pub(crate) fn apply_to_profile(profile: &impl ImplPreferenceManager) {
    for pref in PREFERENCES.iter().filter(|p| p.store == PrefStore::Profile) {
        if let Err(error) = set(profile, pref) {
            tracing::warn!(name = pref.name, %error, "could not set a Chromium preference");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_preference_appears_once_with_a_reason() {
        let mut names: Vec<&str> = PREFERENCES.iter().map(|p| p.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        assert!(PREFERENCES.iter().all(|p| !p.why.is_empty() && !p.name.is_empty()));
    }

    #[test]
    fn the_privacy_preferences_are_there() {
        let get = |name: &str| PREFERENCES.iter().find(|p| p.name == name).map(|p| p.value);
        assert_eq!(get("net.network_prediction_options"), Some(PrefValue::Int(2)));
        assert_eq!(get("signin.allowed"), Some(PrefValue::Bool(false)));
        assert_eq!(get("safebrowsing.enabled"), Some(PrefValue::Bool(false)));
        assert_eq!(get("browser.enable_spellchecking"), Some(PrefValue::Bool(false)));
        assert_eq!(get("autofill.profile_enabled"), Some(PrefValue::Bool(false)));
        assert_eq!(get("dns_over_https.mode"), Some(PrefValue::Str("off")));
    }
}
