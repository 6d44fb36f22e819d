//! Words for `sh`: the one quoting every command line the app builds uses
//! (tmux's `pipe-pane` command, agents' hook commands).

/// `text` in single quotes for `sh`, each `'` written as `'\''`. Written by
/// hand: the quoting crates (shlex) pick double quotes for text with a `'`,
/// while tmux and agent settings files here are read back and compared in
/// this one form.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_plain_words_are_quoted_too() {
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("plain"), "'plain'");
    }
}
