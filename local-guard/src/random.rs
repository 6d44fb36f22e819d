//! OS randomness, for tokens, ids and temp-file names.

/// The OS random source failed.
#[derive(Debug, thiserror::Error)]
#[error("could not read OS randomness: {0}")]
pub struct RandomError(String);

/// Fills `buf` from the OS random source.
pub fn fill_random(buf: &mut [u8]) -> Result<(), RandomError> {
    getrandom::fill(buf).map_err(|e| RandomError(e.to_string()))
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
}
