//! Lower-case hex, as tokens and random ids are written.
//!
//! By hand rather than a crate: the whole codec is these two loops.

/// A string that is not hex.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    /// An odd number of digits.
    #[error("hex text has an odd length {0}")]
    OddLength(usize),
    /// A character that is not a hex digit.
    #[error("invalid hex digit at byte {0}")]
    InvalidDigit(usize),
}

/// Lower-case hex of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// The bytes of hex `text` (either case).
pub fn decode(text: &str) -> Result<Vec<u8>, HexError> {
    let digits = text.as_bytes();
    if digits.len() & 1 == 1 {
        return Err(HexError::OddLength(digits.len()));
    }
    let value = |i: usize| match digits[i] {
        c @ b'0'..=b'9' => Ok(c - b'0'),
        c @ b'a'..=b'f' => Ok(c - b'a' + 10),
        c @ b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(HexError::InvalidDigit(i)),
    };
    (0..digits.len()).step_by(2).map(|i| Ok(value(i)? << 4 | value(i + 1)?)).collect()
}

/// Whether `bytes` are all lower-case hex digits.
pub fn is_lower_hex(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_lowercase() {
        assert_eq!(encode(&[0x00, 0xab, 0xff, 0x10, 0x0f]), "00abff100f");
        assert_eq!(encode(&[0x00, 0xab, 0xff, 0x10]), "00abff10");
        assert_eq!(encode(&[0x00, 0xab, 0x0f]), "00ab0f");
        assert_eq!(encode(&[]), "");
    }

    #[test]
    fn decodes_either_case_and_round_trips() {
        assert_eq!(decode("00abFF10").unwrap(), vec![0x00, 0xab, 0xff, 0x10]);
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&encode(&bytes)).unwrap(), bytes);
    }

    #[test]
    fn refuses_odd_length_and_non_digits() {
        assert_eq!(decode("abc"), Err(HexError::OddLength(3)));
        assert_eq!(decode("0g"), Err(HexError::InvalidDigit(1)));
        assert_eq!(decode("+1"), Err(HexError::InvalidDigit(0)));
    }

    #[test]
    fn lower_hex_check() {
        assert!(is_lower_hex(b"0123456789abcdef"));
        assert!(!is_lower_hex(b"ABC"));
        assert!(!is_lower_hex(b"g"));
    }
}
