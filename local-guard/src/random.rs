//! OS randomness, for tokens, ids and temp-file names.

/// The OS random source failed.
#[derive(Debug, thiserror::Error)]
#[error("could not read OS randomness: {0}")]
pub struct RandomError(#[from] getrandom::Error);

/// Fills `buf` from the OS random source.
pub fn fill_random(buf: &mut [u8]) -> Result<(), RandomError> {
    Ok(getrandom::fill(buf)?)
}

/// A random version-4 UUID in its lower-case hyphenated form, the shape
/// Chromium gives its target ids and download guids.
pub fn random_uuid() -> Result<String, RandomError> {
    let mut b = [0u8; 16];
    fill_random(&mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = crate::hex::encode(&b);
    Ok(format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_with_fresh_bytes() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        fill_random(&mut a).unwrap();
        fill_random(&mut b).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn uuids_are_version_4_and_fresh() {
        let (a, b) = (random_uuid().unwrap(), random_uuid().unwrap());
        assert_ne!(a, b);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![8, 4, 4, 4, 12]);
        assert!(parts[2].starts_with('4'), "{a}");
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{a}");
    }

    #[test]
    fn a_failure_keeps_getrandom_s_error_as_its_source() {
        let cause = getrandom::Error::UNSUPPORTED;
        let err = RandomError::from(cause);
        assert_eq!(err.to_string(), format!("could not read OS randomness: {cause}"), "the message is as before");
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source, Some(cause.to_string()));
    }
}
