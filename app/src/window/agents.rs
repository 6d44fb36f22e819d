//! The window's agent flows: "New agent" (in the project folder or in a new
//! git worktree), closing an agent that has a worktree (keep it, or remove
//! it — with a second confirmation naming any work that would be lost), and
//! a worktree's diff view. git runs on a worker thread; its answer comes
//! back to the window's thread as a job that works on the runtime. What only
//! the window can do (ask the person, give a node the keyboard) comes back
//! as a [`Step`].

use super::confirm::{Choice, Confirm};
use super::placement::Placement;
use crate::model::{AgentKind, AgentWorktree, ArtifactView, Command, NodeId, NodeKind, Point, Rect};
use crate::runtime::agent_nodes::{resolve_cli, NewAgent, AGENT_SIZE};
use crate::runtime::Runtime;
use crate::worktree::{self, Loss, Plan};
use std::path::PathBuf;

/// Lines of a list shown in a dialog before "…and N more".
const LIST_LINES: usize = 6;

/// An agent node with a worktree that is being closed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Closing {
    /// Its worktree.
    worktree: AgentWorktree,
    /// The worktree's folder.
    dir: PathBuf,
}

/// A worktree about to be made from a dirty base.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pending {
    kind: AgentKind,
    at: (f64, f64),
    plan: Plan,
}

/// What a dialog's answer does.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
    /// Make the worktree from the last commit, leaving uncommitted work in the main checkout.
    CreateAnyway(Box<Pending>),
    /// Close the nodes; worktrees and branches stay.
    Keep(Vec<NodeId>),
    /// Close the nodes and remove their worktrees (asks again if work would be lost).
    Remove(Vec<NodeId>, Vec<Closing>),
    /// Close the nodes and remove their worktrees, losing the work named.
    RemoveLosing(Vec<NodeId>, Vec<Closing>),
}

/// `items` as dialog lines, at most [`LIST_LINES`], each indented.
fn listed(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().take(LIST_LINES).map(|i| format!("    {i}")).collect();
    if items.len() > LIST_LINES {
        out.push(format!("    …and {} more", items.len() - LIST_LINES));
    }
    out
}

/// The question asked before a worktree is made from a base with uncommitted changes.
fn dirty_base_question(p: Pending) -> Confirm<Answer> {
    let mut lines = vec![format!("{} has uncommitted changes in {}:", p.plan.repo.branch, p.plan.repo.root.display())];
    lines.extend(listed(&p.plan.uncommitted));
    lines.push(format!(
        "The worktree starts from {}'s last commit, without them (they stay where they are).",
        p.plan.repo.branch
    ));
    Confirm::new(
        format!("New {} worktree on {}", p.kind, p.plan.branch),
        lines,
        vec![
            Choice { label: "Create it from the last commit".into(), answer: Some(Answer::CreateAnyway(Box::new(p))) },
            Choice { label: "Cancel".into(), answer: None },
        ],
    )
}

/// The first question when closing agents that have worktrees.
fn close_question(ids: Vec<NodeId>, closing: Vec<Closing>) -> Confirm<Answer> {
    let mut lines = vec![if closing.len() == 1 {
        "This agent works in its own git worktree:".to_owned()
    } else {
        format!("These {} agents work in their own git worktrees:", closing.len())
    }];
    lines.extend(listed(
        &closing
            .iter()
            .map(|c| format!("branch {} (from {}) in {}", c.worktree.branch, c.worktree.base, c.dir.display()))
            .collect::<Vec<_>>(),
    ));
    lines.push("Keep leaves the branch and the folder; Remove deletes both.".into());
    Confirm::new(
        "Close — keep the worktree?",
        lines,
        vec![
            Choice { label: "Keep worktree".into(), answer: Some(Answer::Keep(ids.clone())) },
            Choice { label: "Remove worktree".into(), answer: Some(Answer::Remove(ids, closing)) },
            Choice { label: "Cancel".into(), answer: None },
        ],
    )
}

/// The second question: what removal would lose, named.
fn loss_question(ids: Vec<NodeId>, closing: Vec<Closing>, losses: &[(String, Loss)]) -> Confirm<Answer> {
    let mut lines = vec!["Removing deletes work that exists nowhere else:".to_owned()];
    for (branch, loss) in losses.iter().filter(|(_, l)| !l.is_empty()) {
        if !loss.uncommitted.is_empty() {
            lines.push(format!("{branch}: {} uncommitted change(s)", loss.uncommitted.len()));
            lines.extend(listed(&loss.uncommitted));
        }
        if !loss.commits.is_empty() {
            lines.push(format!("{branch}: {} commit(s) on neither its base nor a remote", loss.commits.len()));
            lines.extend(listed(&loss.commits));
        }
    }
    Confirm::new(
        "Remove the worktree and lose this work?",
        lines,
        vec![
            Choice { label: "Keep worktree".into(), answer: Some(Answer::Keep(ids.clone())) },
            Choice { label: "Lose it, remove".into(), answer: Some(Answer::RemoveLosing(ids, closing)) },
            Choice { label: "Cancel".into(), answer: None },
        ],
    )
    .warning()
}

/// The worktrees of the agents among `ids` that closing them could remove: a
/// worktree another node still works in (a duplicate) is kept without asking.
fn closings(p: &crate::model::Project, ids: &[NodeId]) -> Vec<Closing> {
    let same = |a: &AgentWorktree, b: &AgentWorktree| a.repo == b.repo && a.branch == b.branch;
    let still_used = |wt: &AgentWorktree| {
        p.nodes().any(|n| {
            !ids.contains(&n.id) && matches!(&n.kind, NodeKind::Agent { worktree: Some(w), .. } if same(w, wt))
        })
    };
    let mut out: Vec<Closing> = vec![];
    for n in ids.iter().filter_map(|id| p.node(id)) {
        if let NodeKind::Agent { cwd, worktree: Some(wt), .. } = &n.kind {
            // Several nodes in one worktree (duplicates closed together): asked about once.
            if !still_used(wt) && !out.iter().any(|c| same(&c.worktree, wt)) {
                out.push(Closing { worktree: wt.clone(), dir: cwd.clone() });
            }
        }
    }
    out
}

/// What an agent flow asks of the window, which it cannot do itself.
#[derive(Debug)]
pub(super) enum Step {
    /// Ask the person; the answer goes to [`AgentFlows::answer`].
    Ask(Confirm<Answer>),
    /// Give this node (just opened and selected) the keyboard.
    Focus(NodeId),
}

/// What a worker thread hands the window's thread: git's answer, carried out there.
type Job = Box<dyn FnOnce(&AgentFlows, &mut Runtime) -> Vec<Step> + Send>;

/// The agent flows' worker threads and the answers they send back.
pub(super) struct AgentFlows {
    jobs_tx: crossbeam_channel::Sender<Job>,
    jobs_rx: crossbeam_channel::Receiver<Job>,
}

impl AgentFlows {
    /// No work under way.
    pub(super) fn new() -> Self {
        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded();
        Self { jobs_tx, jobs_rx }
    }

    /// Runs `work` on a worker thread; the job it returns runs on the window's thread after.
    fn in_background(&self, rt: &mut Runtime, work: impl FnOnce() -> Job + Send + 'static) {
        let tx = self.jobs_tx.clone();
        let waker = rt.handle().waker().clone();
        let spawned = std::thread::Builder::new().name("worktree".into()).spawn(move || {
            // The window may be gone; then nobody wants the answer.
            let _ = tx.send(work());
            waker.wake();
        });
        if let Err(e) = spawned {
            rt.notify(format!("git not run: {e}"), true);
        }
    }

    /// Runs the next job a worker thread sent; `None` when none waits.
    pub(super) fn run_next_job(&self, rt: &mut Runtime) -> Option<Vec<Step>> {
        let job = self.jobs_rx.try_recv().ok()?;
        Some(job(self, rt))
    }

    /// "New agent": refuses a CLI that is not installed (saying how to install
    /// it), else opens the node here or, with `in_worktree`, plans a worktree
    /// on a worker thread first.
    pub(super) fn new_agent(
        &self,
        rt: &mut Runtime,
        place: &Placement,
        kind: AgentKind,
        in_worktree: bool,
        at: Option<Point>,
    ) -> Vec<Step> {
        let spot = place.spot(Some(rt), at, AGENT_SIZE);
        let Some(folder) = rt.project().map(|p| p.folder().to_path_buf()) else { return vec![] };
        if let Err(e) = resolve_cli(kind, &crate::paths::agent_tools(rt.data_dir())) {
            rt.notify(format!("{e}, then choose it again"), true);
            return vec![];
        }
        if !in_worktree {
            let new =
                NewAgent { kind, title: kind.as_str().into(), at: spot, cwd: folder, worktree: None, prompt: None };
            return open_new_agent(rt, new);
        }
        self.in_background(rt, move || {
            let planned = worktree::plan(&folder, kind.as_str());
            Box::new(move |flows: &AgentFlows, rt: &mut Runtime| match planned {
                Err(e) => {
                    rt.notify(format!("no worktree for {kind}: {e}"), true);
                    vec![]
                }
                Ok(plan) if !plan.uncommitted.is_empty() => {
                    vec![Step::Ask(dirty_base_question(Pending { kind, at: spot, plan }))]
                }
                Ok(plan) => {
                    flows.create_worktree(rt, Pending { kind, at: spot, plan });
                    vec![]
                }
            })
        });
        vec![]
    }

    /// Makes the planned worktree on a worker thread, then opens the agent in it.
    fn create_worktree(&self, rt: &mut Runtime, p: Pending) {
        self.in_background(rt, move || {
            let made = worktree::create(&p.plan);
            Box::new(move |_: &AgentFlows, rt: &mut Runtime| match made {
                Err(e) => {
                    rt.notify(format!("no worktree for {}: {e}", p.kind), true);
                    vec![]
                }
                Ok(()) => {
                    let wt = p.plan.worktree();
                    let title = format!("{} — {}", p.kind, wt.branch);
                    let cwd = p.plan.dir.clone();
                    open_new_agent(
                        rt,
                        NewAgent { kind: p.kind, title, at: p.at, cwd, worktree: Some(wt), prompt: None },
                    )
                }
            })
        });
    }

    /// Carries out the person's answer to one of the flows' questions.
    pub(super) fn answer(&self, rt: &mut Runtime, answer: Answer) -> Vec<Step> {
        match answer {
            Answer::CreateAnyway(p) => self.create_worktree(rt, *p),
            Answer::Keep(ids) => {
                remove_nodes(rt, ids);
            }
            Answer::Remove(ids, closing) => {
                let jobs = closing.clone();
                self.in_background(rt, move || {
                    let losses: Result<Vec<(String, Loss)>, _> = jobs
                        .iter()
                        .map(|c| worktree::loss(&c.worktree, &c.dir).map(|l| (c.worktree.branch.clone(), l)))
                        .collect();
                    Box::new(move |flows: &AgentFlows, rt: &mut Runtime| match losses {
                        Err(e) => {
                            rt.notify(format!("worktree kept: what it holds is unknown ({e})"), true);
                            vec![]
                        }
                        Ok(l) if l.iter().all(|(_, l)| l.is_empty()) => {
                            flows.remove_worktrees(rt, ids, closing);
                            vec![]
                        }
                        Ok(l) => vec![Step::Ask(loss_question(ids, closing, &l))],
                    })
                });
            }
            Answer::RemoveLosing(ids, closing) => self.remove_worktrees(rt, ids, closing),
        }
        vec![]
    }

    /// Closes the nodes (their agents end), then removes their worktrees and branches.
    fn remove_worktrees(&self, rt: &mut Runtime, ids: Vec<NodeId>, closing: Vec<Closing>) {
        if !remove_nodes(rt, ids) {
            return;
        }
        self.in_background(rt, move || {
            let results: Vec<String> = closing
                .iter()
                .map(|c| match worktree::remove(&c.worktree, &c.dir) {
                    Ok(()) => format!("removed worktree {} and branch {}", c.dir.display(), c.worktree.branch),
                    Err(e) => format!("worktree {} not removed: {e}", c.dir.display()),
                })
                .collect();
            Box::new(move |_: &AgentFlows, rt: &mut Runtime| {
                for r in results {
                    let warning = r.contains("not removed");
                    rt.notify(r, warning);
                }
                vec![]
            })
        });
    }
}

/// Opens the agent node, selects it and asks for it to get the keyboard. Its
/// spot is checked again: a worktree's git work or a question took a while,
/// and a node may have been put there meanwhile.
fn open_new_agent(rt: &mut Runtime, mut new: NewAgent) -> Vec<Step> {
    new.at = rt.free_spot(AGENT_SIZE, Some(Point::new(new.at.0, new.at.1)));
    match rt.open_agent(new) {
        Ok(id) => {
            rt.selection_mut().click(id.clone());
            vec![Step::Focus(id)]
        }
        Err(e) => {
            rt.notify(format!("agent not opened: {e}"), true);
            vec![]
        }
    }
}

fn remove_nodes(rt: &mut Runtime, ids: Vec<NodeId>) -> bool {
    let removed = rt.apply(Command::RemoveNodes { ids });
    rt.prune_selection();
    rt.request_redraw();
    match removed {
        Ok(_) => true,
        Err(e) => {
            rt.notify(e.to_string(), true);
            false
        }
    }
}

/// The question to ask before `ids` (about to be removed from the window)
/// close, when they include agents with worktrees; its answer does the removal.
pub(super) fn ask_before_closing(rt: &Runtime, ids: &[NodeId]) -> Option<Confirm<Answer>> {
    let p = rt.project()?;
    let closing = closings(p, ids);
    (!closing.is_empty()).then(|| close_question(ids.to_vec(), closing))
}

/// The one selected node's worktree, folder and frame, when it is an agent in one.
pub(super) fn selected_worktree(rt: &Runtime) -> Option<(AgentWorktree, PathBuf, Rect)> {
    let ids = rt.selection().to_vec();
    let [id] = ids.as_slice() else { return None };
    let node = rt.project()?.node(id)?;
    match &node.kind {
        NodeKind::Agent { cwd, worktree: Some(wt), .. } => Some((wt.clone(), cwd.clone(), node.rect)),
        _ => None,
    }
}

/// Opens the diff view of the selected worktree agent: its branch against its base.
pub(super) fn show_worktree_diff(rt: &mut Runtime, place: &Placement, at: Option<Point>) -> Vec<Step> {
    let Some((wt, dir, beside)) = selected_worktree(rt) else { return vec![] };
    let size = (760.0, 480.0);
    // Beside its agent, unless a context menu chose the spot; never over another node.
    let near = at.unwrap_or(Point::new(beside.x + beside.w + 40.0, beside.y));
    let spot = place.spot(Some(rt), Some(near), size);
    let kind = NodeKind::Artifact { path: dir, view: ArtifactView::Diff, base: Some(wt.base.clone()) };
    let title = format!("diff {} against {}", wt.branch, wt.base);
    match rt.add_node(kind, &title, size, Some(spot)) {
        Ok(id) => {
            rt.selection_mut().click(id.clone());
            vec![Step::Focus(id)]
        }
        Err(e) => {
            rt.notify(e.to_string(), true);
            vec![]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::confirm::{ConfirmKey, ConfirmOutcome};
    use super::*;

    fn closing(branch: &str) -> Closing {
        Closing {
            worktree: AgentWorktree { repo: "/r".into(), branch: branch.into(), base: "main".into() },
            dir: format!("/r/.worktrees/{}", branch.trim_start_matches("agent/")).into(),
        }
    }

    #[test]
    fn the_close_question_names_the_worktree_and_keep_is_the_default() {
        let ids = vec![NodeId::new("a1").unwrap()];
        let mut q = close_question(ids.clone(), vec![closing("agent/claude-1")]);
        assert_eq!(q.lines[1], "    branch agent/claude-1 (from main) in /r/.worktrees/claude-1");
        assert_eq!(q.key(ConfirmKey::Enter), ConfirmOutcome::Chose(Answer::Keep(ids.clone())));
        assert!(matches!(q.key(ConfirmKey::Char('r')), ConfirmOutcome::Chose(Answer::Remove(..))));
        assert_eq!(q.key(ConfirmKey::Escape), ConfirmOutcome::Cancelled);
    }

    #[test]
    fn closing_asks_about_worktrees_no_other_node_works_in() {
        use crate::model::{Camera, Node, Project, ProjectId, Rect};
        let wt = closing("agent/claude-1");
        let agent = |id: &str, worktree: Option<AgentWorktree>| {
            let kind = NodeKind::Agent { agent: AgentKind::Claude, cwd: wt.dir.clone(), worktree };
            let mut n = Node::new(kind, id, Rect::new(0.0, 0.0, 10.0, 10.0));
            n.id = NodeId::new(id).unwrap();
            n
        };
        let nodes =
            vec![agent("a", Some(wt.worktree.clone())), agent("dup", Some(wt.worktree.clone())), agent("plain", None)];
        let (p, _) = Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/r", Camera::default(), nodes, 0).unwrap();
        let id = |s: &str| NodeId::new(s).unwrap();
        assert_eq!(closings(&p, &[id("a")]), vec![], "its duplicate still works there");
        assert_eq!(closings(&p, &[id("a"), id("dup")]), vec![wt.clone()], "closing both asks once");
        assert_eq!(closings(&p, &[id("plain")]), vec![]);
    }

    #[test]
    fn the_loss_question_names_what_would_be_lost_and_never_defaults_to_losing_it() {
        let ids = vec![NodeId::new("a1").unwrap()];
        let loss = Loss {
            uncommitted: (0..8).map(|i| format!(" M f{i}.rs")).collect(),
            commits: vec!["abc1234 agent work".into()],
        };
        let mut q = loss_question(ids.clone(), vec![closing("agent/claude-1")], &[("agent/claude-1".into(), loss)]);
        assert!(q.warning);
        let text = q.lines.join("\n");
        for want in ["agent/claude-1: 8 uncommitted change(s)", "    M f0.rs", "…and 2 more", "abc1234 agent work"] {
            assert!(text.contains(want), "{want} in {text}");
        }
        assert_eq!(q.key(ConfirmKey::Enter), ConfirmOutcome::Chose(Answer::Keep(ids)), "Enter keeps");
        assert!(matches!(q.key(ConfirmKey::Char('l')), ConfirmOutcome::Chose(Answer::RemoveLosing(..))));
    }
}
