//! Git worktrees for agent nodes, through the git CLI (`git -C <dir> …`):
//! whether a folder can have one, a unique `agent/<name>` branch, creating
//! the worktree under the repository's git-ignored `.worktrees/`, what
//! removing it would lose, and removing it.
//!
//! Every check that can refuse runs before anything is written, so a refused
//! request leaves the repository as it was. Errors are typed from git's own
//! messages. These calls block on git: run them off the UI thread.

use crate::model::AgentWorktree;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder of the repository's main checkout that holds agent worktrees.
pub const WORKTREES_DIR: &str = ".worktrees";
/// The prefix of every agent branch.
pub const BRANCH_PREFIX: &str = "agent/";
/// The line that git-ignores [`WORKTREES_DIR`] in `.git/info/exclude`.
const EXCLUDE_LINE: &str = "/.worktrees/";

/// Why a worktree cannot be made or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorktreeError {
    /// git itself could not be run.
    #[error("git could not be run: {0}")]
    NoGit(String),
    /// The folder is not inside a git repository.
    #[error("{} is not a git repository", .0.display())]
    NotARepository(PathBuf),
    /// HEAD is detached: no branch to start from and compare with.
    #[error("HEAD is detached at {commit}: check out the branch the agent should start from, then try again")]
    DetachedHead {
        /// The commit HEAD points at (short).
        commit: String,
    },
    /// The current branch has no commit yet.
    #[error("branch {branch} has no commit yet: commit once, then try again")]
    NoCommits {
        /// The unborn branch.
        branch: String,
    },
    /// The agent branch already exists.
    #[error("branch {0} already exists; nothing was changed")]
    BranchExists(String),
    /// The worktree folder already exists.
    #[error("{} already exists; nothing was changed", .0.display())]
    FolderExists(PathBuf),
    /// Any other git failure, with git's own message.
    #[error("git {args} failed: {message}")]
    Git {
        /// The arguments after `-C <dir>`.
        args: String,
        /// git's first error line.
        message: String,
    },
}

/// The branch checked out in a repository's main checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The top folder of the checkout the project folder is in.
    pub root: PathBuf,
    /// The shared git directory (where `info/exclude` lives).
    pub common_dir: PathBuf,
    /// The branch checked out there.
    pub branch: String,
}

/// A worktree about to be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The repository.
    pub repo: Repo,
    /// The agent's name, unique in the repository (`claude-2`).
    pub name: String,
    /// The new branch (`agent/claude-2`).
    pub branch: String,
    /// The new worktree folder.
    pub dir: PathBuf,
    /// Uncommitted changes of the base checkout (`git status --porcelain`
    /// lines): the worktree starts from the last commit without them.
    pub uncommitted: Vec<String>,
}

impl Plan {
    /// What the node records.
    pub fn worktree(&self) -> AgentWorktree {
        AgentWorktree { repo: self.repo.root.clone(), branch: self.branch.clone(), base: self.repo.branch.clone() }
    }
}

/// Work that exists only in a worktree: what removing it loses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loss {
    /// Uncommitted changes (`git status --porcelain` lines).
    pub uncommitted: Vec<String>,
    /// Commits on neither the base nor any remote (`<short hash> <subject>`).
    pub commits: Vec<String>,
}

impl Loss {
    /// Whether nothing would be lost.
    pub fn is_empty(&self) -> bool {
        self.uncommitted.is_empty() && self.commits.is_empty()
    }
}

/// The first line of git's error output, without its `fatal: `/`error: ` prefix.
fn first_error_line(stderr: &str) -> String {
    let line = stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
    line.trim_start_matches("fatal: ").trim_start_matches("error: ").to_owned()
}

/// The typed error for a failed `git -C dir args…` from its stderr.
pub fn parse_git_error(dir: &Path, args: &[&str], stderr: &str) -> WorktreeError {
    let message = first_error_line(stderr);
    if message.starts_with("not a git repository") {
        return WorktreeError::NotARepository(dir.to_owned());
    }
    if let Some(rest) = message.strip_prefix("a branch named '") {
        if let Some(name) = rest.strip_suffix("' already exists") {
            return WorktreeError::BranchExists(name.to_owned());
        }
    }
    if let Some(rest) = message.strip_prefix('\'') {
        if let Some(path) = rest.strip_suffix("' already exists") {
            return WorktreeError::FolderExists(PathBuf::from(path));
        }
    }
    WorktreeError::Git { args: args.join(" "), message }
}

/// Runs `git -C dir args…`; its stdout, or the typed error.
fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // Never a pager or an editor, and messages in English (they are parsed).
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| WorktreeError::NoGit(e.to_string()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(parse_git_error(dir, args, &String::from_utf8_lossy(&out.stderr)))
    }
}

/// Whether `git -C dir args…` succeeds (a yes/no question to git).
fn git_ok(dir: &Path, args: &[&str]) -> Result<bool, WorktreeError> {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("LC_ALL", "C")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| WorktreeError::NoGit(e.to_string()))?;
    Ok(status.success())
}

fn lines(text: &str) -> Vec<String> {
    text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect()
}

/// Whether `folder` looks like it is in a git repository: it or a folder
/// above it has a `.git` (file stats only, no git run: cheap enough for a menu).
pub fn in_repository(folder: &Path) -> bool {
    folder.ancestors().any(|d| d.join(".git").exists())
}

/// The repository `folder` is in and the branch checked out there; refuses
/// a folder outside git, a detached HEAD and a branch without commits.
pub fn repo_at(folder: &Path) -> Result<Repo, WorktreeError> {
    if !folder.is_dir() {
        return Err(WorktreeError::NotARepository(folder.to_owned()));
    }
    let out = git(folder, &["rev-parse", "--show-toplevel", "--git-common-dir"])?;
    let mut parts = out.lines();
    let (Some(root), Some(common)) = (parts.next(), parts.next()) else {
        return Err(WorktreeError::NotARepository(folder.to_owned()));
    };
    let root = PathBuf::from(root);
    // git prints the common dir relative to the folder it ran in when it can.
    let common_dir = if Path::new(common).is_absolute() { PathBuf::from(common) } else { folder.join(common) };
    let branch = git(&root, &["symbolic-ref", "-q", "--short", "HEAD"]).map(|b| b.trim().to_owned());
    let branch = match branch {
        Ok(b) if !b.is_empty() => b,
        _ => {
            let commit = git(&root, &["rev-parse", "--short", "HEAD"])
                .map_err(|_| WorktreeError::NoCommits { branch: "HEAD".into() })?;
            return Err(WorktreeError::DetachedHead { commit: commit.trim().to_owned() });
        }
    };
    if !git_ok(&root, &["rev-parse", "--verify", "-q", "HEAD"])? {
        return Err(WorktreeError::NoCommits { branch });
    }
    Ok(Repo { root, common_dir, branch })
}

/// The first `<agent>-<n>` (n from 1) whose branch is not in `taken` and
/// whose folder does not exist per `folder_exists`.
pub fn unique_name(agent: &str, taken: &[String], folder_exists: impl Fn(&str) -> bool) -> String {
    (1u32..)
        .map(|n| format!("{agent}-{n}"))
        .find(|name| !taken.iter().any(|b| b == &format!("{BRANCH_PREFIX}{name}")) && !folder_exists(name))
        .unwrap_or_else(|| agent.to_owned())
}

/// Plans a worktree for `agent` in the repository of `folder` (nothing is written).
pub fn plan(folder: &Path, agent: &str) -> Result<Plan, WorktreeError> {
    let repo = repo_at(folder)?;
    let taken = lines(&git(&repo.root, &["for-each-ref", "--format=%(refname:short)", "refs/heads/agent/"])?);
    let parent = repo.root.join(WORKTREES_DIR);
    let name = unique_name(agent, &taken, |n| parent.join(n).exists());
    // The app's own files (worktrees, the autosaved layout) are not work a worktree would miss.
    let uncommitted = lines(&git(&repo.root, &["status", "--porcelain"])?)
        .into_iter()
        .filter(|l| !l.get(3..).is_some_and(|p| p.starts_with(".worktrees/") || p.starts_with(".termsprawl/")))
        .collect();
    Ok(Plan { branch: format!("{BRANCH_PREFIX}{name}"), dir: parent.join(&name), name, repo, uncommitted })
}

/// Makes the planned worktree: `git worktree add -b <branch> <dir> <base>`,
/// then git-ignores `.worktrees/` in `.git/info/exclude` (never the user's
/// `.gitignore`). A branch or folder that appeared meanwhile is refused by git
/// before it changes anything.
pub fn create(plan: &Plan) -> Result<(), WorktreeError> {
    let root = &plan.repo.root;
    if git_ok(root, &["show-ref", "--verify", "-q", &format!("refs/heads/{}", plan.branch)])? {
        return Err(WorktreeError::BranchExists(plan.branch.clone()));
    }
    if plan.dir.exists() {
        return Err(WorktreeError::FolderExists(plan.dir.clone()));
    }
    let dir = plan.dir.display().to_string();
    git(root, &["worktree", "add", "-b", &plan.branch, &dir, &plan.repo.branch])?;
    exclude_worktrees(&plan.repo.common_dir).map_err(|e| WorktreeError::Git {
        args: "info/exclude".into(),
        message: format!("the worktree was made but .worktrees/ is not ignored: {e}"),
    })
}

/// Adds [`EXCLUDE_LINE`] to `<common dir>/info/exclude` unless it is there.
fn exclude_worktrees(common_dir: &Path) -> std::io::Result<()> {
    let info = common_dir.join("info");
    std::fs::create_dir_all(&info)?;
    let file = info.join("exclude");
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if text.lines().any(|l| l.trim() == EXCLUDE_LINE) {
        return Ok(());
    }
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).create(true).open(&file)?;
    write!(f, "{sep}# agent worktrees made by termsprawl\n{EXCLUDE_LINE}\n")
}

/// What removing the worktree in `dir` would lose: its uncommitted changes
/// and the commits of its branch (and HEAD) on neither the base nor a remote.
pub fn loss(wt: &AgentWorktree, dir: &Path) -> Result<Loss, WorktreeError> {
    let uncommitted = if dir.is_dir() { lines(&git(dir, &["status", "--porcelain"])?) } else { vec![] };
    let from = if dir.is_dir() { dir } else { wt.repo.as_path() };
    let mut revs = vec!["log", "--format=%h %s"];
    if dir.is_dir() {
        revs.push("HEAD");
    }
    let has_branch = git_ok(&wt.repo, &["show-ref", "--verify", "-q", &format!("refs/heads/{}", wt.branch)])?;
    if has_branch {
        revs.push(&wt.branch);
    }
    if revs.len() == 2 {
        return Ok(Loss { uncommitted, commits: vec![] });
    }
    revs.extend(["--not", &wt.base, "--remotes"]);
    let commits = lines(&git(from, &revs)?);
    Ok(Loss { uncommitted, commits })
}

/// Removes the worktree folder (with whatever is in it) and deletes its
/// branch. Call only after [`loss`] was shown to the person, or was empty.
pub fn remove(wt: &AgentWorktree, dir: &Path) -> Result<(), WorktreeError> {
    if dir.exists() {
        git(&wt.repo, &["worktree", "remove", "--force", &dir.display().to_string()])?;
    } else {
        git(&wt.repo, &["worktree", "prune"])?;
    }
    if git_ok(&wt.repo, &["show-ref", "--verify", "-q", &format!("refs/heads/{}", wt.branch)])? {
        git(&wt.repo, &["branch", "-D", &wt.branch])?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs git in `dir` with an identity (for commits); its stdout.
    pub(crate) fn run(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A repository on branch `main` with one commit.
    pub(crate) fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir(&root).unwrap();
        run(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        run(&root, &["add", "a.txt"]);
        run(&root, &["commit", "-q", "-m", "first"]);
        (dir, root)
    }

    fn status(root: &Path) -> String {
        run(root, &["status", "--porcelain"])
    }

    #[test]
    fn names_are_the_first_free_number_per_agent() {
        let none = |_: &str| false;
        assert_eq!(unique_name("claude", &[], none), "claude-1");
        let taken = vec!["agent/claude-1".to_owned(), "agent/codex-1".to_owned(), "agent/claude-3".to_owned()];
        assert_eq!(unique_name("claude", &taken, none), "claude-2");
        assert_eq!(unique_name("claude", &taken, |n| n == "claude-2"), "claude-4");
        assert_eq!(unique_name("gemini", &taken, none), "gemini-1");
    }

    #[test]
    fn git_errors_become_typed_errors() {
        let d = Path::new("/tmp/x");
        assert_eq!(
            parse_git_error(
                d,
                &["rev-parse"],
                "fatal: not a git repository (or any of the parent directories): .git\n"
            ),
            WorktreeError::NotARepository(d.to_owned())
        );
        assert_eq!(
            parse_git_error(
                d,
                &["worktree", "add"],
                "Preparing worktree\nfatal: a branch named 'agent/claude-1' already exists\n"
            ),
            WorktreeError::Git { args: "worktree add".into(), message: "Preparing worktree".into() },
            "only the first line is git's message"
        );
        assert_eq!(
            parse_git_error(d, &["worktree", "add"], "fatal: a branch named 'agent/claude-1' already exists\n"),
            WorktreeError::BranchExists("agent/claude-1".into())
        );
        assert_eq!(
            parse_git_error(d, &["worktree", "add"], "fatal: '/r/.worktrees/claude-1' already exists\n"),
            WorktreeError::FolderExists("/r/.worktrees/claude-1".into())
        );
        assert_eq!(
            parse_git_error(d, &["branch", "-D", "x"], "error: branch 'x' not found.\n").to_string(),
            "git branch -D x failed: branch 'x' not found."
        );
    }

    #[test]
    fn a_worktree_is_made_on_a_new_branch_and_git_ignored_without_touching_gitignore() {
        let (_t, root) = repo();
        assert!(in_repository(&root.join("sub/folder")));
        let p = plan(&root, "claude").unwrap();
        assert_eq!(
            (p.name.as_str(), p.branch.as_str(), p.repo.branch.as_str()),
            ("claude-1", "agent/claude-1", "main")
        );
        assert_eq!(p.dir, root.join(".worktrees/claude-1"));
        assert!(p.uncommitted.is_empty());
        create(&p).unwrap();
        assert_eq!(run(&p.dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(), "agent/claude-1");
        assert!(p.dir.join("a.txt").is_file());
        assert_eq!(status(&root), "", "the worktree folder is ignored in the main checkout");
        assert!(!root.join(".gitignore").exists());
        let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
        assert_eq!(exclude.matches(EXCLUDE_LINE).count(), 1);
        // The next one gets the next number; the exclude line is not repeated.
        let p2 = plan(&root, "claude").unwrap();
        assert_eq!(p2.branch, "agent/claude-2");
        create(&p2).unwrap();
        assert_eq!(std::fs::read_to_string(root.join(".git/info/exclude")).unwrap().matches(EXCLUDE_LINE).count(), 1);
        assert_eq!(
            p.worktree(),
            AgentWorktree { repo: root.clone(), branch: "agent/claude-1".into(), base: "main".into() }
        );
    }

    #[test]
    fn refusals_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!in_repository(dir.path()));
        assert_eq!(plan(dir.path(), "claude").unwrap_err(), WorktreeError::NotARepository(dir.path().to_owned()));
        assert!(plan(&dir.path().join("missing"), "claude").is_err());

        let (_t, root) = repo();
        let before_refs = run(&root, &["for-each-ref"]);
        // The branch appeared after planning: refused, nothing made.
        let p = plan(&root, "codex").unwrap();
        run(&root, &["branch", "agent/codex-1"]);
        assert_eq!(create(&p).unwrap_err(), WorktreeError::BranchExists("agent/codex-1".into()));
        assert!(!p.dir.exists());
        let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap_or_default();
        assert!(!exclude.contains(EXCLUDE_LINE), "a refused worktree leaves info/exclude alone");
        run(&root, &["branch", "-D", "agent/codex-1"]);
        assert_eq!(run(&root, &["for-each-ref"]), before_refs);

        // A detached HEAD is refused with its commit named.
        let head = run(&root, &["rev-parse", "--short", "HEAD"]).trim().to_owned();
        run(&root, &["checkout", "-q", "--detach"]);
        assert_eq!(plan(&root, "claude").unwrap_err(), WorktreeError::DetachedHead { commit: head });
        run(&root, &["checkout", "-q", "main"]);

        // Uncommitted work of the base checkout is reported (the worktree starts without it).
        std::fs::write(root.join("a.txt"), "changed\n").unwrap();
        std::fs::write(root.join("new.txt"), "n\n").unwrap();
        std::fs::create_dir(root.join(".termsprawl")).unwrap();
        std::fs::write(root.join(".termsprawl/canvas.json"), "{}").unwrap();
        let p = plan(&root, "claude").unwrap();
        assert_eq!(p.uncommitted, vec![" M a.txt".to_owned(), "?? new.txt".to_owned()]);

        // A repository without commits.
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        run(&empty, &["init", "-q", "-b", "trunk"]);
        assert_eq!(plan(&empty, "claude").unwrap_err(), WorktreeError::NoCommits { branch: "trunk".into() });
    }

    #[test]
    fn removal_names_what_would_be_lost_and_keeps_nothing_after() {
        let (_t, root) = repo();
        let p = plan(&root, "claude").unwrap();
        create(&p).unwrap();
        let wt = p.worktree();
        assert!(loss(&wt, &p.dir).unwrap().is_empty(), "a fresh worktree holds nothing of its own");
        std::fs::write(p.dir.join("b.txt"), "b\n").unwrap();
        run(&p.dir, &["add", "b.txt"]);
        run(&p.dir, &["commit", "-q", "-m", "agent work"]);
        std::fs::write(p.dir.join("a.txt"), "edited\n").unwrap();
        let l = loss(&wt, &p.dir).unwrap();
        assert_eq!(l.uncommitted, vec![" M a.txt".to_owned()]);
        assert_eq!(l.commits.len(), 1);
        assert!(l.commits[0].ends_with(" agent work"), "{:?}", l.commits);
        // Once the base has the commit, only the uncommitted edit is at risk.
        run(&root, &["merge", "-q", "--ff-only", "agent/claude-1"]);
        assert!(loss(&wt, &p.dir).unwrap().commits.is_empty());
        remove(&wt, &p.dir).unwrap();
        assert!(!p.dir.exists());
        assert_eq!(run(&root, &["branch", "--list", "agent/*"]), "");
        assert_eq!(status(&root), "");
        // Removing again (folder and branch gone) is not an error.
        remove(&wt, &p.dir).unwrap();
    }
}
