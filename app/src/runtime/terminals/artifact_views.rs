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
/// file as new).
const SHOW_FILE: &str = r#"f=$1
what="in $f against HEAD"
show() {
  if git rev-parse --verify -q HEAD >/dev/null 2>&1 && git ls-files --error-unmatch -- "$f" >/dev/null 2>&1; then
    git -c color.ui=always --no-pager diff HEAD -- "$f"
  else
    git -c color.ui=always --no-pager diff --no-index -- /dev/null "$f"
  fi
}"#;

/// Shows the worktree `$1`'s work since it left branch `$2`: from where the
/// two meet (`git diff <base>...HEAD`) to the working tree, so uncommitted
/// edits are in, then each untracked file as new.
const SHOW_WORKTREE: &str = r#"cd "$1" || exit 1
base=$2
what="on $(git rev-parse --abbrev-ref HEAD 2>/dev/null) since $base"
show() {
  mb=$(git merge-base "$base" HEAD 2>/dev/null) || { printf 'no history shared with %s
' "$base"; return; }
  git -c color.ui=always --no-pager diff "$mb"
  git ls-files --others --exclude-standard | while IFS= read -r f; do
    git -c color.ui=always --no-pager diff --no-index -- /dev/null "$f"
  done
}"#;

/// Shows what `show` prints in `less`, then offers to show it again, so edits
/// made meanwhile appear without reopening the node.
const PAGER_LOOP: &str = r#"while :; do
  out=$(show)
  if [ -z "$out" ]; then
    printf 'No changes %s.\n' "$what"
  elif command -v less >/dev/null 2>&1; then
    printf '%s\n' "$out" | less -R -X -K
  else
    printf '%s\n' "$out"
  fi
  printf '\n[Enter: show the diff again]  '
  read -r _ || exit 0
  printf '\033[H\033[2J'
done"#;

/// The command line that shows `path` in `view` (a diff with a `base`: the
/// worktree folder `path` against that branch), with `var` reading the
/// environment and `path_var` the PATH to search.
pub fn artifact_command(
    path: &Path,
    view: ArtifactView,
    base: Option<&str>,
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
            Ok(match base {
                Some(base) => vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    format!("{SHOW_WORKTREE}\n{PAGER_LOOP}"),
                    "termsprawl-worktree-diff".into(),
                    file,
                    base.to_owned(),
                ],
                None => vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    format!("{SHOW_FILE}\n{PAGER_LOOP}"),
                    "termsprawl-diff".into(),
                    file,
                ],
            })
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
        match artifact_command(file, ArtifactView::Editor, None, none, path) {
            Err(NotLaunched::NeedsSetup { looked_for }) => assert!(looked_for.contains("$EDITOR"), "{looked_for}"),
            other => panic!("no editor anywhere: {other:?}"),
        }
        let vi = bin(dir.path(), "vi");
        assert_eq!(artifact_command(file, ArtifactView::Editor, None, none, path).unwrap(), [vi, "/p/notes.md".into()]);
        let nano = bin(dir.path(), "nano");
        assert_eq!(
            artifact_command(file, ArtifactView::Editor, None, none, path).unwrap(),
            [nano, "/p/notes.md".into()]
        );
        let env = |v: &str| match v {
            "EDITOR" => Some("code -w".to_owned()),
            "VISUAL" => Some("  ".to_owned()),
            _ => None,
        };
        assert_eq!(
            artifact_command(file, ArtifactView::Editor, None, env, path).unwrap(),
            ["/bin/sh", "-c", "code -w \"$@\"", "code -w", "/p/notes.md"]
        );
        let visual = |v: &str| (v == "VISUAL").then(|| "hx".to_owned());
        assert_eq!(artifact_command(file, ArtifactView::Editor, None, visual, path).unwrap()[2], "hx \"$@\"");
    }

    #[test]
    fn the_diff_view_needs_git_and_shows_the_file_against_head() {
        let dir = tempfile::tempdir().unwrap();
        let path = Some(dir.path().as_os_str());
        let file = Path::new("/p/notes.md");
        assert!(
            matches!(artifact_command(file, ArtifactView::Diff, None, |_| None, path), Err(NotLaunched::NeedsSetup { looked_for }) if looked_for == "git")
        );
        bin(dir.path(), "git");
        let cmd = artifact_command(file, ArtifactView::Diff, None, |_| None, path).unwrap();
        assert_eq!((cmd[0].as_str(), cmd[3].as_str(), cmd[4].as_str()), ("/bin/sh", "termsprawl-diff", "/p/notes.md"));
    }

    /// `text` without its SGR colour sequences.
    fn strip_sgr(text: &str) -> String {
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
                None,
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
            strip_sgr(&String::from_utf8_lossy(&out.stdout))
        };
        assert!(run("a.txt").contains("No changes in"), "{}", run("a.txt"));
        std::fs::write(repo.path().join("a.txt"), "one\nTWO\n").unwrap();
        let changed = run("a.txt");
        assert!(changed.contains("-two") && changed.contains("+TWO"), "{changed}");
        std::fs::write(repo.path().join("new.txt"), "fresh\n").unwrap();
        assert!(run("new.txt").contains("+fresh"), "{}", run("new.txt"));
    }

    #[test]
    fn the_worktree_diff_shows_commits_uncommitted_and_untracked_work_since_the_base() {
        let (_t, root) = crate::worktree::tests::repo();
        let plan = crate::worktree::plan(&root, "claude").unwrap();
        crate::worktree::create(&plan).unwrap();
        let dir = plan.dir.clone();
        let git = crate::worktree::tests::run;
        let run = || {
            let cmd =
                artifact_command(&dir, ArtifactView::Diff, Some("main"), |_| None, std::env::var_os("PATH").as_deref())
                    .unwrap();
            assert_eq!(cmd[3], "termsprawl-worktree-diff");
            let out = std::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            strip_sgr(&String::from_utf8_lossy(&out.stdout))
        };
        assert!(run().contains("No changes on agent/claude-1 since main"), "{}", run());
        std::fs::write(dir.join("b.txt"), "committed\n").unwrap();
        git(&dir, &["add", "b.txt"]);
        git(&dir, &["commit", "-qm", "b"]);
        std::fs::write(dir.join("a.txt"), "uncommitted\n").unwrap();
        std::fs::write(dir.join("c.txt"), "untracked\n").unwrap();
        let text = run();
        for line in ["+committed", "-one", "+uncommitted", "+untracked"] {
            assert!(text.contains(line), "{line} missing in {text}");
        }
        // Work on the base after the fork is not the agent's: not in its diff.
        std::fs::write(root.join("main-only.txt"), "base\n").unwrap();
        git(&root, &["add", "main-only.txt"]);
        git(&root, &["commit", "-qm", "on main"]);
        let text = run();
        assert!(text.contains("+committed") && !text.contains("main-only"), "{text}");
    }
}
