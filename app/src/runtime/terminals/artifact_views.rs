//! How an artifact node shows its file: a terminal running the user's editor
//! (the editor view) or the file's git diff in a pager (the diff view).
//!
//! Both are real programs in the node's own terminal session (tmux-backed like
//! every terminal, so an open editor survives a restart): the editor view
//! edits the file with whatever the user edits files with, the diff view shows
//! exactly what `git diff` shows. The editor is `$VISUAL`, then `$EDITOR`
//! (run through `sh` the way git runs it, so `EDITOR="code -w"` works), then
//! the first of nano, vim and vi on PATH.

use super::status::NotLaunched;
use crate::model::ArtifactView;
use std::ffi::OsStr;
use std::path::Path;

/// Editors tried in order when neither `$VISUAL` nor `$EDITOR` is set.
const FALLBACK_EDITORS: [&str; 3] = ["nano", "vim", "vi"];

/// Shows `$1`'s changes against HEAD (a file git does not track: the whole
/// file as new) in `less`, then offers to show them again, so edits made
/// meanwhile appear without reopening the node.
const DIFF_SCRIPT: &str = r#"f=$1
show() {
  if git rev-parse --verify -q HEAD >/dev/null 2>&1 && git ls-files --error-unmatch -- "$f" >/dev/null 2>&1; then
    git -c color.ui=always --no-pager diff HEAD -- "$f"
  else
    git -c color.ui=always --no-pager diff --no-index -- /dev/null "$f"
  fi
}
while :; do
  out=$(show)
  if [ -z "$out" ]; then
    printf 'No changes in %s against HEAD.\n' "$f"
  elif command -v less >/dev/null 2>&1; then
    printf '%s\n' "$out" | less -R -X -K
  else
    printf '%s\n' "$out"
  fi
  printf '\n[Enter: show the diff again]  '
  read -r _ || exit 0
  printf '\033[H\033[2J'
done"#;

/// The command line that shows `path` in `view`, with `var` reading the
/// environment and `path_var` the PATH to search.
pub fn artifact_command(
    path: &Path,
    view: ArtifactView,
    var: impl Fn(&str) -> Option<String>,
    path_var: Option<&OsStr>,
) -> Result<Vec<String>, NotLaunched> {
    let file = path.display().to_string();
    match view {
        ArtifactView::Editor => {
            if let Some(editor) =
                ["VISUAL", "EDITOR"].iter().filter_map(|v| var(v)).map(|e| e.trim().to_owned()).find(|e| !e.is_empty())
            {
                return Ok(vec!["/bin/sh".into(), "-c".into(), format!("{editor} \"$@\""), editor, file]);
            }
            FALLBACK_EDITORS
                .iter()
                .find_map(|e| terminal::agents::probe(e, path_var).ok())
                .map(|exe| vec![exe.display().to_string(), file])
                .ok_or_else(|| NotLaunched::NeedsSetup {
                    looked_for: "an editor ($VISUAL, $EDITOR, nano, vim or vi)".into(),
                })
        }
        ArtifactView::Diff => {
            terminal::agents::probe("git", path_var)
                .map_err(|_| NotLaunched::NeedsSetup { looked_for: "git".into() })?;
            Ok(vec!["/bin/sh".into(), "-c".into(), DIFF_SCRIPT.into(), "termsprawl-diff".into(), file])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn bin(dir: &Path, name: &str) -> String {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.display().to_string()
    }

    #[test]
    fn the_editor_is_visual_then_editor_then_the_first_one_installed() {
        let dir = tempfile::tempdir().unwrap();
        let path = Some(dir.path().as_os_str());
        let file = Path::new("/p/notes.md");
        let none = |_: &str| None;
        match artifact_command(file, ArtifactView::Editor, none, path) {
            Err(NotLaunched::NeedsSetup { looked_for }) => assert!(looked_for.contains("$EDITOR"), "{looked_for}"),
            other => panic!("no editor anywhere: {other:?}"),
        }
        let vi = bin(dir.path(), "vi");
        assert_eq!(artifact_command(file, ArtifactView::Editor, none, path).unwrap(), [vi, "/p/notes.md".into()]);
        let nano = bin(dir.path(), "nano");
        assert_eq!(artifact_command(file, ArtifactView::Editor, none, path).unwrap(), [nano, "/p/notes.md".into()]);
        let env = |v: &str| match v {
            "EDITOR" => Some("code -w".to_owned()),
            "VISUAL" => Some("  ".to_owned()),
            _ => None,
        };
        assert_eq!(
            artifact_command(file, ArtifactView::Editor, env, path).unwrap(),
            ["/bin/sh", "-c", "code -w \"$@\"", "code -w", "/p/notes.md"]
        );
        let visual = |v: &str| (v == "VISUAL").then(|| "hx".to_owned());
        assert_eq!(artifact_command(file, ArtifactView::Editor, visual, path).unwrap()[2], "hx \"$@\"");
    }

    #[test]
    fn the_diff_view_needs_git_and_shows_the_file_against_head() {
        let dir = tempfile::tempdir().unwrap();
        let path = Some(dir.path().as_os_str());
        let file = Path::new("/p/notes.md");
        assert!(
            matches!(artifact_command(file, ArtifactView::Diff, |_| None, path), Err(NotLaunched::NeedsSetup { looked_for }) if looked_for == "git")
        );
        bin(dir.path(), "git");
        let cmd = artifact_command(file, ArtifactView::Diff, |_| None, path).unwrap();
        assert_eq!((cmd[0].as_str(), cmd[3].as_str(), cmd[4].as_str()), ("/bin/sh", "termsprawl-diff", "/p/notes.md"));
    }

    #[test]
    fn the_diff_script_shows_changes_untracked_files_and_no_changes() {
        if terminal::agents::probe("git", std::env::var_os("PATH").as_deref()).is_err() {
            // ./dev test installs it: there a missing one fails instead of skipping.
            assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "not installed, and ./dev test needs it");
            println!("skipping: git is not installed");
            return;
        }
        let repo = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(repo.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        git(&["init", "-q"]);
        std::fs::write(repo.path().join("a.txt"), "one\ntwo\n").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "-qm", "a"]);
        // No terminal: stdin is empty so the script shows the diff once and ends;
        // with no tty, less (if any) passes the text through.
        let run = |name: &str| {
            let cmd = artifact_command(
                &repo.path().join(name),
                ArtifactView::Diff,
                |_| None,
                std::env::var_os("PATH").as_deref(),
            )
            .unwrap();
            let out = std::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .current_dir(repo.path())
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            // Strip SGR colours for the comparison.
            let mut plain = String::new();
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                if c == '\x1b' {
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                } else {
                    plain.push(c);
                }
            }
            plain
        };
        assert!(run("a.txt").contains("No changes in"), "{}", run("a.txt"));
        std::fs::write(repo.path().join("a.txt"), "one\nTWO\n").unwrap();
        let changed = run("a.txt");
        assert!(changed.contains("-two") && changed.contains("+TWO"), "{changed}");
        std::fs::write(repo.path().join("new.txt"), "fresh\n").unwrap();
        assert!(run("new.txt").contains("+fresh"), "{}", run("new.txt"));
    }
}
