//! The bearer token: 32 random bytes written as 64 lower-case hex characters.
//!
//! It has no `Display` and a redacted `Debug`, so it cannot slip into a log
//! line; [`Token::expose`] is the one way to its text, for the places that
//! hand it on (a discovery file, an agent's environment, a request header).

use std::fmt;

use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::hex;
use crate::random::{fill_random, RandomError};

/// Length of a token's text: 32 bytes as hex.
pub const TOKEN_LEN: usize = 64;

/// Text that is not a token (not 64 lower-case hex characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a token: expected {TOKEN_LEN} lower-case hex characters")]
pub struct InvalidToken;

/// A bearer token. Equality is constant-time; serialised as its text, and
/// deserialised only from well-formed text.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Token(String);

impl Token {
    /// A fresh token from 32 bytes of OS randomness.
    pub fn generate() -> Result<Self, RandomError> {
        let mut bytes = [0u8; TOKEN_LEN / 2];
        fill_random(&mut bytes)?;
        Ok(Token(hex::encode(&bytes)))
    }

    /// Parses a token, accepting only 64 lower-case hex characters.
    pub fn parse(text: &str) -> Result<Self, InvalidToken> {
        if Self::is_well_formed(text.as_bytes()) {
            Ok(Token(text.to_owned()))
        } else {
            Err(InvalidToken)
        }
    }

    /// Whether `text` has a token's shape (64 lower-case hex characters).
    pub fn is_well_formed(text: &[u8]) -> bool {
        text.len() == TOKEN_LEN && hex::is_lower_hex(text)
    }

    /// The secret text, for handing on to whoever must present it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison with presented bytes of any length. A length
    /// mismatch returns early: the length is public (always 64).
    pub fn matches(&self, presented: &[u8]) -> bool {
        bool::from(self.ct_eq(presented))
    }

    /// [`Token::matches`] as a [`subtle::Choice`], for callers that fold
    /// several comparisons together without branching.
    pub fn ct_eq(&self, presented: &[u8]) -> subtle::Choice {
        // subtle's slice comparison is 0 for unequal lengths, else constant-time.
        self.0.as_bytes().ct_eq(presented)
    }
}

impl PartialEq for Token {
    fn eq(&self, other: &Self) -> bool {
        self.matches(other.0.as_bytes())
    }
}

impl Eq for Token {}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl TryFrom<String> for Token {
    type Error = InvalidToken;

    fn try_from(text: String) -> Result<Self, InvalidToken> {
        if Self::is_well_formed(text.as_bytes()) {
            Ok(Token(text))
        } else {
            Err(InvalidToken)
        }
    }
}

impl From<Token> for String {
    fn from(token: Token) -> String {
        token.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_lower_hex_unique_and_redacted() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_eq!(a.expose().len(), TOKEN_LEN);
        assert!(a.expose().bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains(a.expose()));
    }

    #[test]
    fn parse_accepts_only_the_token_shape() {
        let text = "0123456789abcdef".repeat(4);
        assert_eq!(Token::parse(&text).unwrap().expose(), text);
        for bad in ["", "abc", &text[..63], &format!("{text}0"), &text.to_uppercase(), &"g".repeat(64)] {
            assert_eq!(Token::parse(bad), Err(InvalidToken), "{bad}");
        }
    }

    #[test]
    fn matches_and_equality_are_exact() {
        let t = Token::generate().unwrap();
        assert!(t.matches(t.expose().as_bytes()));
        assert!(bool::from(t.ct_eq(t.expose().as_bytes())));
        assert!(!t.matches(b""));
        assert!(!t.matches(&t.expose().as_bytes()[..63]));
        assert!(!t.matches(t.expose().to_uppercase().replace(|c: char| c.is_ascii_digit(), "x").as_bytes()));
        let mut longer = t.expose().to_owned();
        longer.push('0');
        assert!(!t.matches(longer.as_bytes()));
        let mut flipped = t.expose().as_bytes().to_vec();
        flipped[63] = if flipped[63] == b'0' { b'1' } else { b'0' };
        assert!(!t.matches(&flipped));
        assert_eq!(t, Token::parse(t.expose()).unwrap());
        assert_ne!(t, Token::parse(std::str::from_utf8(&flipped).unwrap()).unwrap());
    }

    #[test]
    fn serde_is_the_text_and_refuses_malformed_input() {
        let t = Token::generate().unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, format!("\"{}\"", t.expose()));
        assert_eq!(serde_json::from_str::<Token>(&json).unwrap(), t);
        assert!(serde_json::from_str::<Token>("\"abc\"").is_err());
    }
}
