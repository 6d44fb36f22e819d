//! The workspace: the open projects (tabs), the active one, and each
//! project's undo history. All mutations go through [`Workspace::apply`].

use std::collections::BTreeMap;

use super::command::{execute, Command, CommandScope};
use super::error::ModelError;
use super::history::{Change, History, HistoryEffect, Txn};
use super::ids::{NodeId, ProjectId};
use super::project::Project;

/// What applying a command (or an undo/redo) did, for the renderer, the
/// tool runtime and the autosaver.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Applied {
    /// The project it acted on.
    pub project: Option<ProjectId>,
    /// Nodes that now exist and did not before, in creation order.
    pub created: Vec<NodeId>,
    /// Nodes that no longer exist.
    pub removed: Vec<NodeId>,
    /// Nodes that still exist and changed.
    pub changed: Vec<NodeId>,
    /// For `Duplicate`: (original, copy) pairs.
    pub copies: Vec<(NodeId, NodeId)>,
    /// What happened to the undo history.
    pub history: HistoryEffect,
    /// Whether the project's layout file needs saving.
    pub layout_dirty: bool,
    /// Whether workspace.json (project list, active tab, cameras) needs saving.
    pub workspace_dirty: bool,
}

/// The open projects, in tab order, and which one is active.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    projects: Vec<Project>,
    active: Option<ProjectId>,
    histories: BTreeMap<ProjectId, History>,
}

impl Workspace {
    /// An empty workspace (no project open).
    pub fn new() -> Self {
        Self::default()
    }

    /// A workspace of already loaded projects. Fails on a repeated project
    /// id or folder; an `active` id that is not among them falls back to the
    /// first project.
    pub fn from_projects(projects: Vec<Project>, active: Option<ProjectId>) -> Result<Self, ModelError> {
        let mut ws = Self::new();
        for p in projects {
            ws.apply(Command::AddProject { project: Box::new(p), activate: false })?;
        }
        ws.active = active.filter(|a| ws.project(a).is_some()).or_else(|| ws.projects.first().map(|p| p.id.clone()));
        Ok(ws)
    }

    /// The open projects in tab order.
    pub fn projects(&self) -> &[Project] {
        &self.projects
    }

    /// The open project with this id.
    pub fn project(&self, id: &ProjectId) -> Option<&Project> {
        self.projects.iter().find(|p| &p.id == id)
    }

    /// The active project's id.
    pub fn active_id(&self) -> Option<&ProjectId> {
        self.active.as_ref()
    }

    /// The active project.
    pub fn active(&self) -> Option<&Project> {
        self.active.as_ref().and_then(|id| self.project(id))
    }

    /// A project's undo history.
    pub fn history(&self, id: &ProjectId) -> Option<&History> {
        self.histories.get(id)
    }

    /// Applies a command; canvas commands act on the active project.
    pub fn apply(&mut self, cmd: Command) -> Result<Applied, ModelError> {
        match cmd.scope() {
            CommandScope::Workspace => self.apply_workspace(cmd),
            _ => {
                let id = self.active.clone().ok_or(ModelError::NoActiveProject)?;
                self.apply_canvas(&id, cmd)
            }
        }
    }

    /// Applies a command; canvas commands act on `project` (the agent tool
    /// runtime names its project explicitly).
    pub fn apply_in(&mut self, project: &ProjectId, cmd: Command) -> Result<Applied, ModelError> {
        match cmd.scope() {
            CommandScope::Workspace => self.apply_workspace(cmd),
            _ => self.apply_canvas(project, cmd),
        }
    }

    /// Undoes the active project's newest step; `None` if there is none.
    pub fn undo(&mut self) -> Result<Option<Applied>, ModelError> {
        let id = self.active.clone().ok_or(ModelError::NoActiveProject)?;
        self.undo_in(&id)
    }

    /// Redoes the active project's newest undone step; `None` if there is none.
    pub fn redo(&mut self) -> Result<Option<Applied>, ModelError> {
        let id = self.active.clone().ok_or(ModelError::NoActiveProject)?;
        self.redo_in(&id)
    }

    /// Undoes `project`'s newest step.
    pub fn undo_in(&mut self, project: &ProjectId) -> Result<Option<Applied>, ModelError> {
        self.step(project, true)
    }

    /// Redoes `project`'s newest undone step.
    pub fn redo_in(&mut self, project: &ProjectId) -> Result<Option<Applied>, ModelError> {
        self.step(project, false)
    }

    /// Ends the current gesture in every project (mouse up, focus change):
    /// the next command starts a new undo step.
    pub fn end_coalescing(&mut self) {
        for h in self.histories.values_mut() {
            h.end_coalescing();
        }
    }

    fn index_of(&self, id: &ProjectId) -> Result<usize, ModelError> {
        self.projects.iter().position(|p| &p.id == id).ok_or_else(|| ModelError::UnknownProject(id.clone()))
    }

    fn step(&mut self, id: &ProjectId, undo: bool) -> Result<Option<Applied>, ModelError> {
        let idx = self.index_of(id)?;
        let history = self.histories.entry(id.clone()).or_default();
        let change = if undo { history.pop_undo() } else { history.pop_redo() };
        let Some(change) = change else { return Ok(None) };
        let (states, other) = if undo { (change.before(), change.after()) } else { (change.after(), change.before()) };
        let project = &mut self.projects[idx];
        let c = Change::classify(states, &project.nodes);
        super::history::restore(&mut project.nodes, states, other);
        // Restored nodes may carry a z at or above the counter (redo of a
        // raise); keep "next" above every node.
        let top = project.nodes.values().map(|n| n.z + 1).max().unwrap_or(0);
        project.next_z = project.next_z.max(top);
        Ok(Some(Applied {
            project: Some(id.clone()),
            created: c.created,
            removed: c.removed,
            changed: c.changed,
            copies: Vec::new(),
            history: HistoryEffect::None,
            layout_dirty: true,
            workspace_dirty: false,
        }))
    }

    fn apply_canvas(&mut self, id: &ProjectId, cmd: Command) -> Result<Applied, ModelError> {
        let idx = self.index_of(id)?;
        let scope = cmd.scope();
        let project = &mut self.projects[idx];
        if let Command::SetCamera { camera } = cmd {
            let camera = camera.checked()?;
            let moved = project.camera != camera;
            project.camera = camera;
            return Ok(Applied { project: Some(id.clone()), workspace_dirty: moved, ..Applied::default() });
        }
        let key = cmd.coalesce_key();
        let Project { folder, nodes, next_z, .. } = project;
        let saved_z = *next_z;
        let mut txn = Txn::new(nodes);
        let produced = match execute(cmd, folder, next_z, &mut txn) {
            Ok(p) => p,
            Err(e) => {
                drop(txn);
                *next_z = saved_z;
                return Err(e);
            }
        };
        let change = txn.commit();
        let mut applied = Applied { project: Some(id.clone()), copies: produced.copies, ..Applied::default() };
        applied.created = produced.created;
        for cid in change.ids() {
            let (before, after) = (change.before().get(cid), change.after().get(cid));
            match (before, after) {
                (Some(None), _) => {
                    if !applied.created.contains(cid) {
                        applied.created.push(cid.clone());
                    }
                }
                (_, Some(None)) => applied.removed.push(cid.clone()),
                _ => applied.changed.push(cid.clone()),
            }
        }
        applied.layout_dirty = !change.is_empty();
        if scope == CommandScope::Canvas {
            applied.history = self.histories.entry(id.clone()).or_default().record(change, key);
        }
        Ok(applied)
    }

    fn apply_workspace(&mut self, cmd: Command) -> Result<Applied, ModelError> {
        let mut applied = Applied { workspace_dirty: true, ..Applied::default() };
        match cmd {
            Command::AddProject { project, activate } => {
                if self.project(&project.id).is_some() {
                    return Err(ModelError::DuplicateProject(project.id.clone()));
                }
                if self.projects.iter().any(|p| p.folder == project.folder) {
                    return Err(ModelError::DuplicateFolder(project.folder.clone()));
                }
                let id = project.id.clone();
                self.histories.insert(id.clone(), History::default());
                self.projects.push(*project);
                if activate || self.active.is_none() {
                    self.active = Some(id.clone());
                }
                applied.project = Some(id);
            }
            Command::CloseProject { id } => {
                let idx = self.index_of(&id)?;
                self.projects.remove(idx);
                self.histories.remove(&id);
                if self.active.as_ref() == Some(&id) {
                    let next = idx.min(self.projects.len().saturating_sub(1));
                    self.active = self.projects.get(next).map(|p| p.id.clone());
                }
                applied.project = Some(id);
            }
            Command::ActivateProject { id } => {
                self.index_of(&id)?;
                applied.workspace_dirty = self.active.as_ref() != Some(&id);
                self.active = Some(id.clone());
                applied.project = Some(id);
            }
            Command::RenameProject { id, name } => {
                let idx = self.index_of(&id)?;
                self.projects[idx].name = name;
                applied.project = Some(id);
            }
            _ => return Err(ModelError::Misrouted("canvas")),
        }
        Ok(applied)
    }
}
