//! What a node's title bar reads: the person's name for it, else what its
//! program says (OSC 0/2), else a title made from what it runs and where.

use std::path::Path;

use super::node::{Node, NodeKind};

/// The title a terminal node gets when nothing more telling was given; it
/// is never shown: the shell and folder read better.
pub const DEFAULT_TERMINAL_TITLE: &str = "Terminal";

/// The most characters a name given by the person may have.
pub const MAX_NAME_CHARS: usize = 200;

/// The title bar's text for `node`. `program` is the title its program set
/// (terminal, agent and artifact nodes), `folder` the project folder (for a
/// terminal without its own cwd), `home` the user's home (shown as `~`) and
/// `shell` the program a terminal without a command runs.
pub fn shown_title(node: &Node, program: Option<&str>, folder: &Path, home: Option<&Path>, shell: &str) -> String {
    if let Some(name) = &node.name {
        return name.clone();
    }
    let program = program.map(str::trim).filter(|t| !t.is_empty());
    match &node.kind {
        NodeKind::Terminal { cwd, command, .. } => {
            if let Some(t) = program {
                return t.to_owned();
            }
            if !node.title.is_empty() && node.title != DEFAULT_TERMINAL_TITLE {
                return node.title.clone();
            }
            let runs = command.as_ref().and_then(|c| c.first()).map_or(shell, String::as_str);
            let runs = Path::new(runs).file_name().and_then(|n| n.to_str()).unwrap_or(runs);
            let cwd = if cwd.as_os_str().is_empty() { folder } else { cwd.as_path() };
            format!("{runs} — {}", tilde(cwd, home))
        }
        // An agent in a worktree always names its branch: the program retitles the node.
        NodeKind::Agent { worktree: Some(wt), .. } => {
            let title = program.unwrap_or(&node.title);
            if title.contains(&wt.branch) {
                title.to_owned()
            } else {
                format!("{title} · {}", wt.branch)
            }
        }
        NodeKind::Agent { .. } | NodeKind::Artifact { .. } => program.unwrap_or(&node.title).to_owned(),
        _ => node.title.clone(),
    }
}

/// `path` with the home folder written `~`.
pub fn tilde(path: &Path, home: Option<&Path>) -> String {
    match home.filter(|h| !h.as_os_str().is_empty()).and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// A name as the person typed it, cleaned: surrounding space trimmed, control
/// characters dropped, at most [`MAX_NAME_CHARS`]; `None` when nothing is left
/// (the node goes back to its program's title).
pub fn clean_name(typed: &str) -> Option<String> {
    let name: String = typed.chars().filter(|c| !c.is_control()).take(MAX_NAME_CHARS).collect();
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Rect;
    use crate::node::AgentKind;

    fn terminal(title: &str, cwd: &str, command: Option<&[&str]>) -> Node {
        let command = command.map(|c| c.iter().map(|s| s.to_string()).collect());
        Node::new(NodeKind::Terminal { cwd: cwd.into(), command, tmux_session: None }, title, Rect::new(0., 0., 9., 9.))
    }

    fn shown(node: &Node, program: Option<&str>) -> String {
        shown_title(node, program, Path::new("/home/ann/proj"), Some(Path::new("/home/ann")), "bash")
    }

    #[test]
    fn a_terminal_reads_its_shell_and_folder_until_its_program_names_it() {
        let t = terminal(DEFAULT_TERMINAL_TITLE, "/home/ann/proj/web", None);
        assert_eq!(shown(&t, None), "bash — ~/proj/web");
        assert_eq!(shown(&t, Some("  ")), "bash — ~/proj/web", "a blank title is no title");
        assert_eq!(shown(&t, Some("vim notes.md")), "vim notes.md");
        assert_eq!(shown(&terminal("", "", None), None), "bash — ~/proj", "no cwd: the project folder");
        assert_eq!(shown(&terminal("Terminal", "/srv", Some(&["/usr/bin/htop"])), None), "htop — /srv");
        assert_eq!(shown(&terminal("Terminal", "/home/ann", None), None), "bash — ~");
        assert_eq!(shown(&terminal("Build", "/srv", None), None), "Build", "a title its creator chose");
        assert_eq!(shown(&terminal("Build", "/srv", None), Some("make")), "make", "the program's wins");
    }

    #[test]
    fn a_worktree_agent_shows_its_branch_whatever_its_program_calls_it() {
        use crate::AgentWorktree;
        let wt = AgentWorktree { repo: "/r".into(), branch: "agent/claude-1".into(), base: "main".into() };
        let kind =
            NodeKind::Agent { agent: AgentKind::Claude, cwd: "/r/.worktrees/claude-1".into(), worktree: Some(wt) };
        let n = Node::new(kind, "claude — agent/claude-1", Rect::new(0.0, 0.0, 100.0, 100.0));
        assert_eq!(shown(&n, None), "claude — agent/claude-1");
        assert_eq!(shown(&n, Some("✳ Fixing the parser")), "✳ Fixing the parser · agent/claude-1");
        let plain = Node::new(NodeKind::Sticky { text: String::new() }, "note", Rect::new(0.0, 0.0, 1.0, 1.0));
        assert_eq!(shown(&plain, None), "note");
    }

    #[test]
    fn the_persons_name_wins_over_everything() {
        let mut t = terminal(DEFAULT_TERMINAL_TITLE, "/srv", None);
        t.name = Some("logs".into());
        assert_eq!(shown(&t, Some("vim")), "logs");
        let mut agent = Node::new(
            NodeKind::Agent { agent: AgentKind::Claude, cwd: "/srv".into(), worktree: None },
            "claude",
            t.rect,
        );
        assert_eq!(shown(&agent, None), "claude");
        assert_eq!(shown(&agent, Some("✳ Fixing the parser")), "✳ Fixing the parser");
        agent.name = Some("reviewer".into());
        assert_eq!(shown(&agent, Some("✳ Fixing the parser")), "reviewer");
        let sticky = Node::new(NodeKind::Sticky { text: String::new() }, "Note", t.rect);
        assert_eq!(shown(&sticky, Some("ignored")), "Note");
    }

    #[test]
    fn names_are_cleaned() {
        assert_eq!(clean_name("  logs \n"), Some("logs".into()));
        assert_eq!(clean_name("a\x1b[31mb"), Some("a[31mb".into()));
        assert_eq!(clean_name("   "), None);
        assert_eq!(clean_name(&"x".repeat(500)).map(|n| n.len()), Some(MAX_NAME_CHARS));
        assert_eq!(tilde(Path::new("/home/annex"), Some(Path::new("/home/ann"))), "/home/annex");
    }
}
