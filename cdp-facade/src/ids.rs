//! Identifiers the facade makes up: CDP message ids sent to guests, session
//! ids, window ids and the shared browser context id (the browser target id
//! is `local_guard::random_uuid`).

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use local_guard::hex::encode as hex;
use local_guard::{fill_random, RandomError};

use crate::guest::GuestId;

/// Message ids the facade uses on guest channels; the app's own users of a channel must stay below it.
///
/// Chromium parses ids as 32-bit integers, so the range ends at `i32::MAX`.
pub const FACADE_ID_RANGE: RangeInclusive<i64> = (1 << 30)..=(i32::MAX as i64);

/// Hands out message ids inside [`FACADE_ID_RANGE`], wrapping around (old ids are long answered by then).
#[derive(Debug, Default)]
pub(crate) struct MessageIds {
    counter: AtomicU64,
}

impl MessageIds {
    /// The next id; unique across the facade until the range wraps.
    pub(crate) fn next(&self) -> i64 {
        let span = (FACADE_ID_RANGE.end() - FACADE_ID_RANGE.start() + 1) as u64;
        let n = self.counter.fetch_add(1, Ordering::Relaxed) % span;
        FACADE_ID_RANGE.start() + n as i64
    }
}

/// Makes session ids that look like Chromium's (32 upper-case hex) and never repeat within a boot.
#[derive(Debug)]
pub(crate) struct SessionIds {
    prefix: u64,
    counter: AtomicU64,
}

impl SessionIds {
    /// A generator with a random prefix.
    pub(crate) fn new() -> Result<Self, RandomError> {
        let mut bytes = [0u8; 8];
        fill_random(&mut bytes)?;
        Ok(Self { prefix: u64::from_le_bytes(bytes), counter: AtomicU64::new(1) })
    }

    /// The next session id.
    pub(crate) fn next(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        format!("{:016X}{:016X}", self.prefix, n)
    }
}

/// `Browser.WindowID` of each guest asked about, stable for the facade's life.
#[derive(Debug, Default)]
pub(crate) struct WindowIds(Mutex<HashMap<GuestId, i64>>);

impl WindowIds {
    /// The guest's window id, allocated on first use.
    pub(crate) fn of(&self, guest: &GuestId) -> i64 {
        let mut ids = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let next = ids.len() as i64 + 1;
        *ids.entry(guest.clone()).or_insert(next)
    }

    /// The guest behind a window id handed out before.
    pub(crate) fn guest(&self, window_id: i64) -> Option<GuestId> {
        let ids = self.0.lock().unwrap_or_else(|p| p.into_inner());
        ids.iter().find(|(_, w)| **w == window_id).map(|(g, _)| g.clone())
    }
}

/// 32 random upper-case hex characters (the form of a browser context id).
pub(crate) fn random_hex_id() -> Result<String, RandomError> {
    let mut b = [0u8; 16];
    fill_random(&mut b)?;
    Ok(hex(&b).to_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_stay_in_range_and_wrap() {
        let ids = MessageIds::default();
        let first = ids.next();
        assert_eq!(first, *FACADE_ID_RANGE.start());
        assert_eq!(ids.next(), first + 1);
        let span = (FACADE_ID_RANGE.end() - FACADE_ID_RANGE.start() + 1) as u64;
        ids.counter.store(span - 1, Ordering::Relaxed);
        assert_eq!(ids.next(), *FACADE_ID_RANGE.end());
        assert_eq!(ids.next(), *FACADE_ID_RANGE.start());
    }

    #[test]
    fn session_ids_are_unique_upper_hex() {
        let ids = SessionIds::new().unwrap();
        let a = ids.next();
        let b = ids.next();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(&c)));
    }

    #[test]
    fn window_ids_are_stable_and_lead_back() {
        let ids = WindowIds::default();
        let (a, b) = (GuestId::from("n1::t1"), GuestId::from("n2::t1"));
        assert_eq!(ids.of(&a), 1);
        assert_eq!(ids.of(&b), 2);
        assert_eq!(ids.of(&a), 1);
        assert_eq!(ids.guest(2), Some(b));
        assert_eq!(ids.guest(3), None);
    }

    #[test]
    fn context_ids_are_32_upper_hex() {
        let id = random_hex_id().unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|c| c.is_ascii_digit() || (b'A'..=b'F').contains(&c)));
    }
}
