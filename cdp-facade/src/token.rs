//! The per-boot bearer token shared by the agent server and the CDP facade.

use std::fmt;

use subtle::ConstantTimeEq;

/// Failure to obtain OS randomness.
#[derive(Debug, thiserror::Error)]
#[error("could not read OS randomness: {0}")]
pub struct RandomnessError(String);

/// Fills `buf` from the OS random source.
pub(crate) fn fill_random(buf: &mut [u8]) -> Result<(), RandomnessError> {
    getrandom::fill(buf).map_err(|e| RandomnessError(e.to_string()))
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// 32 random bytes as 64 lower-case hex characters. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh token from OS randomness.
    pub fn generate() -> Result<Self, RandomnessError> {
        let mut bytes = [0u8; 32];
        fill_random(&mut bytes)?;
        Ok(Self(hex(&bytes)))
    }

    /// The token text, for the discovery file and URLs handed to the agent.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison with a presented token.
    pub fn matches(&self, presented: &str) -> bool {
        // Length is not secret (always 64); content is compared without early exit.
        let ours = self.0.as_bytes();
        let theirs = presented.as_bytes();
        ours.len() == theirs.len() && bool::from(ours.ct_eq(theirs))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_unique_and_redacted() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains(a.as_str()));
    }

    #[test]
    fn matches_only_the_exact_token() {
        let t = Token::generate().unwrap();
        assert!(t.matches(t.as_str()));
        assert!(!t.matches(""));
        assert!(!t.matches(&t.as_str()[..63]));
        assert!(!t.matches(&t.as_str().to_uppercase().replace(|c: char| c.is_ascii_digit(), "x")));
        let mut other = t.as_str().to_string();
        other.push('0');
        assert!(!t.matches(&other));
    }

    #[test]
    fn hex_encodes_bytes() {
        assert_eq!(hex(&[0x00, 0xab, 0x0f]), "00ab0f");
    }
}
