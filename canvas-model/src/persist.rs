//! Files: each project's layout in `<folder>/.termsprawl/canvas.json`
//! (git-shareable: stable order, relative paths, no secrets) and the list of
//! open projects in `<data>/workspace.json` (per user: tabs, active tab and
//! each canvas's camera, kept out of the shared file so panning does not
//! churn a repository).
//!
//! Writes are atomic (temp file, fsync, rename, fsync of the directory), so
//! a crash leaves the old or the new file, never a torn one. A layout that
//! cannot be read is moved aside as `<file>.corrupt-<unix time>` and the
//! project opens empty; a file from a newer version is refused untouched.

use std::fs;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use local_guard::FileError;
use serde::{Deserialize, Serialize};

use super::error::PersistError;
use super::geometry::Camera;
use super::ids::ProjectId;
use super::node::{Node, NodeKind};
use super::project::Project;
use super::workspace::Workspace;

/// Format version of canvas.json written by this build.
pub const LAYOUT_VERSION: u64 = 1;
/// Format version of workspace.json written by this build.
pub const WORKSPACE_VERSION: u64 = 1;
/// The directory inside a project folder that holds termsprawl's files.
pub const LAYOUT_DIR: &str = ".termsprawl";
/// The layout file's name inside [`LAYOUT_DIR`].
pub const LAYOUT_FILE: &str = "canvas.json";
/// The workspace file's name inside the data directory.
pub const WORKSPACE_FILE: &str = "workspace.json";
/// Mode of canvas.json: an ordinary, shareable project file.
pub const LAYOUT_MODE: u32 = 0o644;
/// Mode of workspace.json: private to the user, like the rest of the data dir.
pub const WORKSPACE_MODE: u32 = 0o600;

/// A file that could not be read, moved aside so the app could start.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    /// What was wrong, for the user.
    pub message: String,
    /// Where the bad file now is (never deleted).
    pub kept_as: PathBuf,
}

/// A project as loaded from its folder.
#[derive(Debug)]
pub struct LoadedProject {
    /// The project (empty when its layout was missing or recovered).
    pub project: Project,
    /// Set when the layout file was unreadable and moved aside.
    pub recovery: Option<Recovery>,
    /// Small inconsistencies that were repaired (dangling group members...).
    pub repairs: Vec<String>,
}

/// A project listed in workspace.json that could not be opened.
#[derive(Debug)]
pub struct FailedProject {
    /// Its id.
    pub id: ProjectId,
    /// Its folder.
    pub folder: PathBuf,
    /// Why it could not be opened (its files are untouched).
    pub error: PersistError,
}

/// The workspace as loaded from the data directory.
#[derive(Debug)]
pub struct LoadedWorkspace {
    /// The open projects.
    pub workspace: Workspace,
    /// Files that were moved aside (workspace.json or layouts).
    pub recoveries: Vec<Recovery>,
    /// Projects that could not be opened.
    pub failed: Vec<FailedProject>,
    /// Repairs made while loading layouts.
    pub repairs: Vec<String>,
}

/// `<folder>/.termsprawl/canvas.json`.
pub fn layout_path(folder: &Path) -> PathBuf {
    folder.join(LAYOUT_DIR).join(LAYOUT_FILE)
}

/// `<data>/workspace.json`.
pub fn workspace_path(data_dir: &Path) -> PathBuf {
    data_dir.join(WORKSPACE_FILE)
}

/// The user's home directory (`$HOME`), if set and absolute.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|p| p.is_absolute())
}

/// How a path is written to disk: `.`-relative to `folder` when inside it,
/// `~/...` when inside `home`, otherwise absolute.
pub fn store_path(path: &Path, folder: Option<&Path>, home: Option<&Path>) -> Result<String, PersistError> {
    let utf8 = |p: &Path| p.to_str().map(str::to_owned).ok_or_else(|| PersistError::NonUtf8Path(p.to_path_buf()));
    if let Some(folder) = folder {
        if let Ok(rel) = path.strip_prefix(folder) {
            return if rel.as_os_str().is_empty() { Ok(".".to_owned()) } else { utf8(rel) };
        }
    }
    if let Some(home) = home {
        if let Ok(rel) = path.strip_prefix(home) {
            return if rel.as_os_str().is_empty() { Ok("~".to_owned()) } else { Ok(format!("~/{}", utf8(rel)?)) };
        }
    }
    utf8(path)
}

/// The inverse of [`store_path`].
pub fn resolve_path(stored: &str, folder: Option<&Path>, home: Option<&Path>) -> PathBuf {
    if let Some(home) = home {
        if stored == "~" {
            return home.to_path_buf();
        }
        if let Some(rest) = stored.strip_prefix("~/") {
            return home.join(rest);
        }
    }
    let p = Path::new(stored);
    match folder {
        Some(folder) if p.is_relative() => {
            if stored == "." {
                folder.to_path_buf()
            } else {
                folder.join(p)
            }
        }
        _ => p.to_path_buf(),
    }
}

/// A command argument as written to disk: an argument that is a path in
/// the home directory becomes `~/...` (so no user name leaks into a shared
/// repository). On load `~/` expands back, as a shell would expand it.
fn store_arg(arg: &str, home: Option<&str>) -> String {
    match home {
        Some(h) if arg == h => "~".to_owned(),
        Some(h) => match arg.strip_prefix(h).and_then(|r| r.strip_prefix('/')) {
            Some(rest) => format!("~/{rest}"),
            None => arg.to_owned(),
        },
        None => arg.to_owned(),
    }
}

fn resolve_arg(arg: &str, home: Option<&str>) -> String {
    match home {
        Some(h) if arg == "~" => h.to_owned(),
        Some(h) => match arg.strip_prefix("~/") {
            Some(rest) => format!("{h}/{rest}"),
            None => arg.to_owned(),
        },
        None => arg.to_owned(),
    }
}

/// Drops user name and password from a URL: credentials never go into a
/// shared file. URLs without credentials are kept byte for byte.
fn strip_credentials(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            // Both setters only fail for URLs that cannot have credentials,
            // which then have none to strip.
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        _ => url.to_owned(),
    }
}

/// Path fields of a node, converted for storage (`to_disk`) or back.
fn convert_node(node: &mut Node, folder: &Path, home: Option<&Path>, to_disk: bool) -> Result<(), PersistError> {
    let home_str = home.and_then(Path::to_str).map(|h| h.trim_end_matches('/')).filter(|h| !h.is_empty());
    let conv = |p: &mut PathBuf| -> Result<(), PersistError> {
        *p = if to_disk {
            PathBuf::from(store_path(p, Some(folder), home)?)
        } else {
            let s = p.to_str().ok_or_else(|| PersistError::NonUtf8Path(p.clone()))?;
            resolve_path(s, Some(folder), home)
        };
        Ok(())
    };
    match &mut node.kind {
        NodeKind::Terminal { cwd, command, .. } => {
            conv(cwd)?;
            for arg in command.iter_mut().flatten() {
                *arg = if to_disk { store_arg(arg, home_str) } else { resolve_arg(arg, home_str) };
            }
        }
        NodeKind::Agent { cwd, .. } => conv(cwd)?,
        NodeKind::Artifact { path, .. } => conv(path)?,
        NodeKind::Browser { tabs, .. } if to_disk => {
            for t in tabs {
                t.url = strip_credentials(&t.url);
            }
        }
        _ => {}
    }
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct LayoutFile {
    version: u64,
    #[serde(default)]
    next_z: i64,
    nodes: Vec<Node>,
}

#[derive(Serialize, Deserialize)]
struct WorkspaceFile {
    version: u64,
    #[serde(default)]
    active: Option<ProjectId>,
    projects: Vec<StoredProject>,
}

#[derive(Serialize, Deserialize)]
struct StoredProject {
    id: ProjectId,
    name: String,
    folder: String,
    camera: Camera,
}

/// Pretty JSON with a trailing newline; struct fields in declaration order
/// and nodes sorted by id, so the same model always gives the same bytes.
fn to_pretty<T: Serialize>(value: &T, what: &'static str) -> Result<Vec<u8>, PersistError> {
    let mut out = serde_json::to_vec_pretty(value).map_err(|source| PersistError::Encode { what, source })?;
    out.push(b'\n');
    Ok(out)
}

/// The bytes of a project's canvas.json.
pub fn encode_layout(project: &Project, home: Option<&Path>) -> Result<Vec<u8>, PersistError> {
    let mut nodes = Vec::with_capacity(project.len());
    // A page of an isolated browser context lives as long as its context, which
    // a restart ends: never written (group members and links to it are dropped
    // on load, as for any missing node).
    for n in project.nodes().filter(|n| !matches!(n.kind, NodeKind::Browser { context: Some(_), .. })) {
        let mut n = n.clone();
        convert_node(&mut n, project.folder(), home, true)?;
        nodes.push(n);
    }
    to_pretty(&LayoutFile { version: LAYOUT_VERSION, next_z: project.next_z(), nodes }, "layout")
}

/// Why a file's bytes were not accepted.
enum Rejected {
    /// Written by a newer version.
    Newer(u64),
    /// Not a valid file of this kind.
    Corrupt(String),
}

/// Parses JSON and checks the version field before anything else, so a
/// newer file is refused rather than called corrupt.
fn parse_versioned(bytes: &[u8], supported: u64) -> Result<serde_json::Value, Rejected> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| Rejected::Corrupt(format!("not valid JSON: {e}")))?;
    let version = value
        .get("version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| Rejected::Corrupt("missing or invalid \"version\" field".to_owned()))?;
    if version > supported {
        return Err(Rejected::Newer(version));
    }
    if version == 0 {
        return Err(Rejected::Corrupt("version 0 is not a valid format version".to_owned()));
    }
    Ok(value)
}

/// A project from canvas.json bytes. Errors are messages for the user.
fn decode_layout(
    bytes: &[u8],
    id: ProjectId,
    name: &str,
    folder: &Path,
    camera: Camera,
    home: Option<&Path>,
) -> Result<(Project, Vec<String>), Rejected> {
    let value = parse_versioned(bytes, LAYOUT_VERSION)?;
    let file: LayoutFile =
        serde_json::from_value(value).map_err(|e| Rejected::Corrupt(format!("not a valid layout: {e}")))?;
    let mut nodes = file.nodes;
    for n in &mut nodes {
        convert_node(n, folder, home, false).map_err(|e| Rejected::Corrupt(e.to_string()))?;
    }
    // A bad camera in workspace.json must not cost the layout.
    let camera = camera.checked().unwrap_or_default();
    Project::from_nodes(id, name, folder, camera, nodes, file.next_z).map_err(|e| Rejected::Corrupt(e.to_string()))
}

/// Writes `bytes` to `path` atomically with permissions `mode`
/// ([`local_guard::files::write_atomic`]: temp file, fsync, rename, fsync of
/// the directory, so the rename itself survives a power cut).
pub fn atomic_write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), PersistError> {
    local_guard::files::write_atomic(path, bytes, mode).map_err(|e| match e {
        FileError::Io { action, path, source } => PersistError::Io { action, path, source },
        other => PersistError::io("write", path, other.into_io()),
    })
}

/// Removes temp files a killed writer left next to `path`. Only called
/// while loading, before this instance writes anything there.
fn remove_stale_temps(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return };
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if local_guard::files::is_temp_of(name, &entry.file_name()) {
            match fs::remove_file(entry.path()) {
                Ok(()) => tracing::debug!(path = %entry.path().display(), "removed stale temp file"),
                Err(e) => {
                    tracing::warn!(path = %entry.path().display(), error = %e, "could not remove stale temp file")
                }
            }
        }
    }
}

/// Moves a bad file to `<file>.corrupt-<unix time>` (with `-N` appended if
/// that exists) and describes it.
fn quarantine(path: &Path, reason: String) -> Result<Recovery, PersistError> {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let base = format!("{}.corrupt-{secs}", path.display());
    let mut target = PathBuf::from(&base);
    let mut n = 1;
    while target.exists() {
        n += 1;
        target = PathBuf::from(format!("{base}-{n}"));
    }
    match fs::rename(path, &target) {
        Ok(()) => {
            tracing::warn!(file = %path.display(), kept_as = %target.display(), %reason, "unreadable file moved aside");
            Ok(Recovery {
                message: format!(
                    "{} could not be read ({reason}); it was kept as {}",
                    path.display(),
                    target.display()
                ),
                kept_as: target,
            })
        }
        Err(source) => Err(PersistError::Quarantine { path: path.to_path_buf(), reason, source }),
    }
}

/// Saves a project's layout into its folder (creating `.termsprawl/`, but
/// never the project folder itself).
pub fn save_layout(project: &Project, home: Option<&Path>) -> Result<PathBuf, PersistError> {
    let bytes = encode_layout(project, home)?;
    let path = layout_path(project.folder());
    ensure_layout_dir(project.folder())?;
    atomic_write(&path, &bytes, LAYOUT_MODE)?;
    Ok(path)
}

/// Creates `<folder>/.termsprawl` if needed; the folder must exist.
pub fn ensure_layout_dir(folder: &Path) -> Result<(), PersistError> {
    if !folder.is_dir() {
        return Err(PersistError::MissingFolder(folder.to_path_buf()));
    }
    let dir = folder.join(LAYOUT_DIR);
    match fs::create_dir(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(PersistError::io("create", dir, e)),
    }
}

/// Opens the project in `folder`. A missing layout gives an empty project;
/// an unreadable or corrupt one is moved aside and the project opens empty
/// with a [`Recovery`]; a layout from a newer version is an error and the
/// file is left untouched.
pub fn load_project(
    id: ProjectId,
    name: &str,
    folder: &Path,
    camera: Camera,
    home: Option<&Path>,
) -> Result<LoadedProject, PersistError> {
    if !folder.is_dir() {
        return Err(PersistError::MissingFolder(folder.to_path_buf()));
    }
    let path = layout_path(folder);
    remove_stale_temps(&path);
    let empty = |id| {
        let mut p = Project::new(id, name, folder);
        p.camera = camera.checked().unwrap_or_default();
        p
    };
    let reason = match fs::read(&path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Ok(LoadedProject { project: empty(id), recovery: None, repairs: Vec::new() })
        }
        Err(e) => format!("unreadable: {e}"),
        Ok(bytes) => match decode_layout(&bytes, id.clone(), name, folder, camera, home) {
            Ok((project, repairs)) => {
                for r in &repairs {
                    tracing::warn!(file = %path.display(), "{r}");
                }
                return Ok(LoadedProject { project, recovery: None, repairs });
            }
            Err(Rejected::Newer(found)) => {
                return Err(PersistError::UnsupportedVersion { path, found, supported: LAYOUT_VERSION })
            }
            Err(Rejected::Corrupt(reason)) => reason,
        },
    };
    let recovery = quarantine(&path, reason)?;
    Ok(LoadedProject { project: empty(id), recovery: Some(recovery), repairs: Vec::new() })
}

/// The bytes of workspace.json.
pub fn encode_workspace(workspace: &Workspace, home: Option<&Path>) -> Result<Vec<u8>, PersistError> {
    let mut projects = Vec::with_capacity(workspace.projects().len());
    for p in workspace.projects() {
        projects.push(StoredProject {
            id: p.id().clone(),
            name: p.name().to_owned(),
            folder: store_path(p.folder(), None, home)?,
            camera: p.camera(),
        });
    }
    to_pretty(
        &WorkspaceFile { version: WORKSPACE_VERSION, active: workspace.active_id().cloned(), projects },
        "workspace",
    )
}

/// Saves workspace.json into the data directory (created if missing).
pub fn save_workspace(data_dir: &Path, workspace: &Workspace, home: Option<&Path>) -> Result<PathBuf, PersistError> {
    let bytes = encode_workspace(workspace, home)?;
    fs::create_dir_all(data_dir).map_err(|e| PersistError::io("create", data_dir, e))?;
    let path = workspace_path(data_dir);
    atomic_write(&path, &bytes, WORKSPACE_MODE)?;
    Ok(path)
}

/// Loads workspace.json and every project it lists. The app always gets a
/// workspace: a missing file gives an empty one, a corrupt one is moved
/// aside (a [`Recovery`]), and projects that cannot open are listed in
/// `failed` with their files untouched. Only a workspace.json from a newer
/// version is an error.
pub fn load_workspace(data_dir: &Path, home: Option<&Path>) -> Result<LoadedWorkspace, PersistError> {
    let path = workspace_path(data_dir);
    remove_stale_temps(&path);
    let mut loaded = LoadedWorkspace {
        workspace: Workspace::new(),
        recoveries: Vec::new(),
        failed: Vec::new(),
        repairs: Vec::new(),
    };
    let file = match fs::read(&path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(loaded),
        Err(e) => Err(format!("unreadable: {e}")),
        Ok(bytes) => match parse_versioned(&bytes, WORKSPACE_VERSION) {
            Err(Rejected::Newer(found)) => {
                return Err(PersistError::UnsupportedVersion { path, found, supported: WORKSPACE_VERSION })
            }
            Err(Rejected::Corrupt(reason)) => Err(reason),
            Ok(value) => {
                serde_json::from_value::<WorkspaceFile>(value).map_err(|e| format!("not a valid workspace: {e}"))
            }
        },
    };
    let file = match file {
        Ok(f) => f,
        Err(reason) => {
            loaded.recoveries.push(quarantine(&path, reason)?);
            return Ok(loaded);
        }
    };
    let mut projects = Vec::new();
    for entry in file.projects {
        let folder = resolve_path(&entry.folder, None, home);
        if !folder.is_absolute() {
            let error = PersistError::Invalid(format!("project folder {:?} is not absolute", entry.folder));
            loaded.failed.push(FailedProject { id: entry.id, folder, error });
            continue;
        }
        let folder = normalise(&folder);
        if projects.iter().any(|p: &Project| p.id() == &entry.id || p.folder() == folder) {
            let error = PersistError::Invalid(format!("project {} or its folder is listed twice", entry.id));
            loaded.failed.push(FailedProject { id: entry.id, folder, error });
            continue;
        }
        match load_project(entry.id.clone(), &entry.name, &folder, entry.camera, home) {
            Ok(lp) => {
                loaded.recoveries.extend(lp.recovery);
                loaded.repairs.extend(lp.repairs);
                projects.push(lp.project);
            }
            Err(error) => {
                tracing::warn!(project = %entry.id, folder = %folder.display(), %error, "project not opened");
                loaded.failed.push(FailedProject { id: entry.id, folder, error });
            }
        }
    }
    // Ids and folders were deduplicated above, so this cannot fail; the
    // error is still passed on rather than assumed away.
    loaded.workspace = Workspace::from_projects(projects, file.active)
        .map_err(|e| PersistError::Invalid(format!("workspace: {e}")))?;
    Ok(loaded)
}

/// Removes `.` components and trailing slashes (lexically), so the same
/// folder is always spelled the same way.
pub fn normalise(path: &Path) -> PathBuf {
    path.components().filter(|c| !matches!(c, Component::CurDir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Command;
    use crate::geometry::Rect;
    use crate::ids::{NodeId, TabId};
    use crate::node::{AgentKind, ArtifactView, BrowserTab, Colour};

    const HOME: &str = "/home/someone";

    fn id(s: &str) -> NodeId {
        NodeId::new(s).unwrap()
    }

    /// A project in `folder` with one node of every kind, built through commands.
    fn sample(folder: &Path) -> Project {
        let mut ws = Workspace::new();
        ws.apply(Command::AddProject {
            project: Box::new(Project::new(ProjectId::new("p1").unwrap(), "sample", folder)),
            activate: true,
        })
        .unwrap();
        let r = |x: f64| Rect::new(x, 10.5, 320.0, 240.0);
        let node = |name: &str, kind: NodeKind, x: f64| Node {
            id: id(name),
            kind,
            title: format!("{name} ✓"),
            rect: r(x),
            z: 0,
            colour: None,
            name: None,
            links: Default::default(),
        };
        let tab = |t: &str, url: &str| BrowserTab {
            id: TabId::new(t).unwrap(),
            url: url.into(),
            title: format!("title {t}"),
        };
        let nodes = vec![
            node("zeta", NodeKind::Sticky { text: "line 1\nline \"2\"".into() }, 0.0),
            node(
                "web",
                NodeKind::Browser {
                    tabs: vec![tab("t1", "https://example.com/a?b=c"), tab("t2", "about:blank")],
                    active_tab: TabId::new("t2").unwrap(),
                    context: None,
                },
                400.0,
            ),
            node(
                "term",
                NodeKind::Terminal {
                    cwd: folder.join("src"),
                    command: Some(vec!["cargo".into(), "test".into(), format!("{HOME}/notes.txt")]),
                    tmux_session: Some("ts-1".into()),
                },
                800.0,
            ),
            node(
                "shell",
                NodeKind::Terminal { cwd: PathBuf::from(HOME).join("elsewhere"), command: None, tmux_session: None },
                1200.0,
            ),
            node(
                "agent",
                NodeKind::Agent { agent: AgentKind::Codex, cwd: folder.to_path_buf(), worktree: None },
                1600.0,
            ),
            node(
                "art",
                NodeKind::Artifact { path: folder.join("README.md"), view: ArtifactView::Diff, base: None },
                2000.0,
            ),
            node(
                "abs",
                NodeKind::Artifact { path: "/etc/hosts".into(), view: ArtifactView::Editor, base: None },
                2400.0,
            ),
        ];
        for n in nodes {
            ws.apply(Command::AddNode { node: n }).unwrap();
        }
        ws.apply(Command::SetColour { id: id("zeta"), colour: Some(Colour::new("#A0B0C0").unwrap()) }).unwrap();
        ws.apply(Command::GroupNodes { ids: vec![id("zeta"), id("term")], title: Some("grp".into()) }).unwrap();
        ws.apply(Command::SetCamera { camera: Camera { x: -3.25, y: 7.0, zoom: 1.5 } }).unwrap();
        ws.active().unwrap().clone()
    }

    #[test]
    fn layout_round_trips_byte_stably() {
        let dir = tempfile::tempdir().unwrap();
        let project = sample(dir.path());
        let home = Some(Path::new(HOME));
        let path = save_layout(&project, home).unwrap();
        assert_eq!(path, dir.path().join(".termsprawl/canvas.json"));
        let bytes = fs::read(&path).unwrap();
        assert_eq!(bytes, encode_layout(&project, home).unwrap(), "same model, same bytes");
        assert!(bytes.ends_with(b"}\n"));

        let loaded = load_project(project.id().clone(), project.name(), dir.path(), project.camera(), home).unwrap();
        assert!(loaded.recovery.is_none());
        assert!(loaded.repairs.is_empty());
        assert_eq!(loaded.project, project);
        assert_eq!(encode_layout(&loaded.project, home).unwrap(), bytes);

        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("{\n  \"version\": 1,"), "{text}");
        let ids: Vec<&str> = text
            .match_indices("\"id\": \"")
            .map(|(i, _)| &text[i + 7..i + 7 + text[i + 7..].find('"').unwrap()])
            .collect();
        let node_ids: Vec<&str> = ids.iter().copied().filter(|s| !s.starts_with('t')).collect::<Vec<_>>();
        let mut sorted = node_ids.clone();
        sorted.sort();
        assert_eq!(node_ids, sorted, "nodes sorted by id");
        assert!(!text.contains(dir.path().to_str().unwrap()), "no absolute project paths");
        assert!(!text.contains(HOME), "no home paths");
        assert!(text.contains("\"cwd\": \"src\""));
        assert!(text.contains("\"cwd\": \".\""));
        assert!(text.contains("\"cwd\": \"~/elsewhere\""));
        assert!(text.contains("\"~/notes.txt\""));
        assert!(text.contains("\"path\": \"/etc/hosts\""));
        assert!(!text.contains("zoom"), "the camera lives in workspace.json");
    }

    #[test]
    fn paths_are_stored_relative_to_the_folder_or_home() {
        let folder = Some(Path::new("/home/someone/proj"));
        let home = Some(Path::new(HOME));
        for (path, stored) in [
            ("/home/someone/proj", "."),
            ("/home/someone/proj/a/b", "a/b"),
            ("/home/someone", "~"),
            ("/home/someone/other", "~/other"),
            ("/home/someonelse/x", "/home/someonelse/x"),
            ("/tmp/x", "/tmp/x"),
        ] {
            assert_eq!(store_path(Path::new(path), folder, home).unwrap(), stored, "{path}");
            assert_eq!(resolve_path(stored, folder, home), PathBuf::from(path), "{stored}");
        }
        assert_eq!(store_path(Path::new("/tmp/x"), folder, None).unwrap(), "/tmp/x");
        assert_eq!(store_arg("/home/someone/f", Some(HOME)), "~/f");
        assert_eq!(store_arg("/home/someonelse", Some(HOME)), "/home/someonelse");
        assert_eq!(resolve_arg("~/f", Some(HOME)), "/home/someone/f");
        assert_eq!(resolve_arg("~user/f", Some(HOME)), "~user/f");
        use std::os::unix::ffi::OsStrExt;
        let bad = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
        assert!(matches!(store_path(bad, folder, home), Err(PersistError::NonUtf8Path(_))));
    }

    #[test]
    fn credentials_in_urls_are_not_saved() {
        assert_eq!(strip_credentials("https://user:secret@example.com/x"), "https://example.com/x");
        assert_eq!(strip_credentials("https://example.com/x?token=1"), "https://example.com/x?token=1");
        assert_eq!(strip_credentials("about:blank"), "about:blank");
    }

    #[test]
    fn a_corrupt_layout_is_kept_aside_and_the_project_opens_empty() {
        for garbage in
            [&b"{\"version\": 1, \"nodes\": [tr"[..], b"", b"[]", b"{\"nodes\": []}", b"{\"version\": 1, \"nodes\": 5}"]
        {
            let dir = tempfile::tempdir().unwrap();
            let path = layout_path(dir.path());
            fs::create_dir(path.parent().unwrap()).unwrap();
            fs::write(&path, garbage).unwrap();
            let loaded = load_project(ProjectId::new("p").unwrap(), "p", dir.path(), Camera::default(), None).unwrap();
            assert!(loaded.project.is_empty());
            let rec = loaded.recovery.expect("a recovery");
            assert!(!path.exists());
            assert_eq!(fs::read(&rec.kept_as).unwrap(), garbage, "the bad file is kept byte for byte");
            let name = rec.kept_as.file_name().unwrap().to_str().unwrap().to_owned();
            assert!(name.starts_with("canvas.json.corrupt-"), "{name}");
            assert!(rec.message.contains(rec.kept_as.to_str().unwrap()));
        }
    }

    #[test]
    fn an_invalid_layout_is_corrupt_too_and_names_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let path = layout_path(dir.path());
        fs::create_dir(path.parent().unwrap()).unwrap();
        let dup = r#"{"version":1,"nodes":[
            {"id":"a","kind":{"type":"sticky","text":""},"title":"","rect":{"x":0,"y":0,"w":100,"h":100},"z":0},
            {"id":"a","kind":{"type":"sticky","text":""},"title":"","rect":{"x":0,"y":0,"w":100,"h":100},"z":1}]}"#;
        let mut kept = Vec::new();
        for _ in 0..3 {
            fs::write(&path, dup).unwrap();
            let loaded = load_project(ProjectId::new("p").unwrap(), "p", dir.path(), Camera::default(), None).unwrap();
            let rec = loaded.recovery.unwrap();
            assert!(rec.message.contains("already exists"), "{}", rec.message);
            kept.push(rec.kept_as);
        }
        kept.sort();
        kept.dedup();
        assert_eq!(kept.len(), 3, "each bad file kept separately");
    }

    #[test]
    fn a_newer_layout_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = layout_path(dir.path());
        fs::create_dir(path.parent().unwrap()).unwrap();
        let future = b"{\"version\": 7, \"nodes\": \"a shape we do not know\"}\n";
        fs::write(&path, future).unwrap();
        let err = load_project(ProjectId::new("p").unwrap(), "p", dir.path(), Camera::default(), None).unwrap_err();
        assert!(matches!(err, PersistError::UnsupportedVersion { found: 7, supported: 1, .. }), "{err}");
        assert!(err.to_string().contains("untouched"));
        assert_eq!(fs::read(&path).unwrap(), future);
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1, "nothing renamed or added");
    }

    #[test]
    fn missing_layouts_and_folders() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load_project(ProjectId::new("p").unwrap(), "p", dir.path(), Camera::default(), None).unwrap();
        assert!(loaded.project.is_empty() && loaded.recovery.is_none());
        let gone = dir.path().join("gone");
        assert!(matches!(
            load_project(ProjectId::new("p").unwrap(), "p", &gone, Camera::default(), None),
            Err(PersistError::MissingFolder(_))
        ));
        let p = Project::new(ProjectId::new("p").unwrap(), "p", &gone);
        assert!(matches!(save_layout(&p, None), Err(PersistError::MissingFolder(_))));
        assert!(!gone.exists(), "saving never recreates a vanished project folder");
    }

    #[test]
    fn stale_temp_files_are_cleaned_on_load_and_writes_are_atomic_with_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let project = sample(dir.path());
        let path = save_layout(&project, None).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, LAYOUT_MODE);
        let stale = path.parent().unwrap().join(".canvas.json.tmpAbC123");
        fs::write(&stale, b"half").unwrap();
        let other = path.parent().unwrap().join("notes.txt");
        fs::write(&other, b"mine").unwrap();
        load_project(project.id().clone(), "x", dir.path(), Camera::default(), None).unwrap();
        assert!(!stale.exists());
        assert!(other.exists(), "only our temp files are removed");
    }

    #[test]
    fn workspace_round_trips_with_cameras_and_tilde_folders() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join("data");
        let f1 = home.path().join("one");
        let f2 = home.path().join("two");
        fs::create_dir(&f1).unwrap();
        fs::create_dir(&f2).unwrap();
        let p1 = sample(&f1);
        save_layout(&p1, Some(home.path())).unwrap();
        let mut ws = Workspace::from_projects(vec![p1.clone()], None).unwrap();
        ws.apply(Command::AddProject {
            project: Box::new(Project::new(ProjectId::new("p2").unwrap(), "two", &f2)),
            activate: true,
        })
        .unwrap();
        ws.apply(Command::SetCamera { camera: Camera { x: 1.0, y: 2.0, zoom: 0.5 } }).unwrap();
        let path = save_workspace(&data, &ws, Some(home.path())).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"folder\": \"~/one\""), "{text}");
        assert!(!text.contains(home.path().to_str().unwrap()));

        let loaded = load_workspace(&data, Some(home.path())).unwrap();
        assert!(loaded.recoveries.is_empty() && loaded.failed.is_empty());
        assert_eq!(loaded.workspace.projects(), ws.projects());
        assert_eq!(loaded.workspace.active_id(), ws.active_id());
        assert_eq!(encode_workspace(&loaded.workspace, Some(home.path())).unwrap(), text.as_bytes());
    }

    #[test]
    fn workspace_problems_never_stop_the_start() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join("data");
        fs::create_dir(&data).unwrap();
        // Missing file: empty workspace.
        let l = load_workspace(&data, None).unwrap();
        assert!(l.workspace.projects().is_empty() && l.recoveries.is_empty());
        // A project whose folder vanished and one whose layout is too new: listed as failed.
        let newer = home.path().join("newer");
        fs::create_dir_all(newer.join(LAYOUT_DIR)).unwrap();
        fs::write(layout_path(&newer), b"{\"version\": 2, \"nodes\": []}").unwrap();
        let ok = home.path().join("ok");
        fs::create_dir(&ok).unwrap();
        let file = format!(
            r#"{{"version":1,"active":"p9","projects":[
              {{"id":"p1","name":"gone","folder":"{gone}","camera":{{"x":0,"y":0,"zoom":1}}}},
              {{"id":"p2","name":"newer","folder":"{newer}","camera":{{"x":0,"y":0,"zoom":1}}}},
              {{"id":"p3","name":"ok","folder":"{ok}","camera":{{"x":0,"y":0,"zoom":-4}}}},
              {{"id":"p3","name":"twice","folder":"{ok}","camera":{{"x":0,"y":0,"zoom":1}}}}]}}"#,
            gone = home.path().join("gone").display(),
            newer = newer.display(),
            ok = ok.display(),
        );
        fs::write(workspace_path(&data), &file).unwrap();
        let l = load_workspace(&data, None).unwrap();
        assert_eq!(l.failed.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(), ["p1", "p2", "p3"]);
        assert!(matches!(l.failed[0].error, PersistError::MissingFolder(_)));
        assert!(matches!(l.failed[1].error, PersistError::UnsupportedVersion { .. }));
        assert_eq!(l.workspace.projects().len(), 1);
        assert_eq!(
            l.workspace.active_id().map(ProjectId::as_str),
            Some("p3"),
            "unknown active falls back to the first"
        );
        assert_eq!(l.workspace.projects()[0].camera(), Camera::default(), "a bad camera costs only the camera");
        // A corrupt workspace.json is kept aside.
        fs::write(workspace_path(&data), b"\x00\x01").unwrap();
        let l = load_workspace(&data, None).unwrap();
        assert!(l.workspace.projects().is_empty());
        assert_eq!(fs::read(&l.recoveries[0].kept_as).unwrap(), b"\x00\x01");
        // A newer one is refused untouched.
        fs::write(workspace_path(&data), b"{\"version\": 3}").unwrap();
        assert!(matches!(load_workspace(&data, None), Err(PersistError::UnsupportedVersion { .. })));
        assert_eq!(fs::read(workspace_path(&data)).unwrap(), b"{\"version\": 3}");
    }

    /// The layout loader under hostile bytes (issue 7): it never panics, and
    /// whatever it accepts is a valid model that saves and loads back as
    /// itself. A bounded run is part of `cargo test`; `PROPTEST_CASES=100000`
    /// (see fuzz/run) runs it longer.
    mod fuzz {
        use super::*;
        use proptest::prelude::*;
        use proptest::sample::Index;
        use serde_json::Value;

        const FOLDER: &str = "/w/proj";

        fn decode(bytes: &[u8]) -> Result<(Project, Vec<String>), Rejected> {
            decode_layout(
                bytes,
                ProjectId::new("p1").unwrap(),
                "fuzz",
                Path::new(FOLDER),
                Camera::default(),
                Some(Path::new(HOME)),
            )
        }

        /// What must hold for any input.
        fn check(bytes: &[u8]) {
            match decode(bytes) {
                Ok((project, _repairs)) => {
                    let saved = encode_layout(&project, Some(Path::new(HOME))).expect("an accepted layout saves");
                    match decode(&saved) {
                        Ok((again, repairs)) => {
                            assert_eq!(again, project, "a saved layout loads back as itself");
                            assert!(repairs.is_empty(), "a saved layout needs no repairs: {repairs:?}");
                        }
                        Err(Rejected::Corrupt(e)) => {
                            panic!("a saved layout is refused: {e}\n{}", String::from_utf8_lossy(&saved))
                        }
                        Err(Rejected::Newer(v)) => panic!("a saved layout claims version {v}"),
                    }
                }
                Err(Rejected::Corrupt(reason)) => assert!(!reason.is_empty()),
                Err(Rejected::Newer(v)) => assert!(v > LAYOUT_VERSION),
            }
        }

        fn sample_bytes() -> Vec<u8> {
            encode_layout(&sample(Path::new(FOLDER)), Some(Path::new(HOME))).unwrap()
        }

        /// JSON pointers of every value in `v`.
        fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
            match v {
                Value::Object(m) => m
                    .iter()
                    .for_each(|(k, c)| pointers(c, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out)),
                Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
                _ => {}
            }
            out.push(at);
        }

        fn hostile_value() -> impl Strategy<Value = Value> {
            let deep = (1usize..300).prop_map(|d| (0..d).fold(Value::Null, |v, _| Value::Array(vec![v])));
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                Just(serde_json::json!(1e308)),
                Just(serde_json::json!(-0.0)),
                ".{0,40}".prop_map(Value::from),
                Just(Value::from("../../../etc/passwd")),
                Just(Value::from("~/x")),
                Just(Value::from("x".repeat(100_000))),
                Just(serde_json::json!([])),
                Just(serde_json::json!({})),
                Just(serde_json::json!({"type": "group", "members": ["zeta", "zeta", "grp", "nope"]})),
                deep,
            ]
        }

        /// Found by `value_edits_of_a_valid_layout`: without serde_json's
        /// `float_roundtrip` a saved x of 4.109391223379316e18 loaded back one ulp off.
        #[test]
        fn a_large_coordinate_loads_back_exactly() {
            let mut doc: Value = serde_json::from_slice(&sample_bytes()).unwrap();
            let x = doc.pointer_mut("/nodes/0/rect/x").expect("a node rect");
            *x = serde_json::json!(4.109391223379316e18);
            let bytes = serde_json::to_vec(&doc).unwrap();
            let (project, _) = decode(&bytes).ok().expect("loads");
            assert!(project.nodes().any(|n| n.rect.x == 4.109391223379316e18));
            check(&bytes);
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
                check(&bytes);
            }

            #[test]
            fn byte_edits_of_a_valid_layout(edits in proptest::collection::vec((any::<Index>(), any::<u8>(), 0u8..4), 1..8)) {
                let mut bytes = sample_bytes();
                for (at, byte, kind) in edits {
                    if bytes.is_empty() {
                        break;
                    }
                    let i = at.index(bytes.len());
                    match kind {
                        0 => bytes[i] = byte,
                        1 => { bytes.remove(i); }
                        2 => bytes.insert(i, byte),
                        _ => bytes.truncate(i),
                    }
                }
                check(&bytes);
            }

            #[test]
            fn value_edits_of_a_valid_layout(edits in proptest::collection::vec((any::<Index>(), hostile_value(), any::<bool>()), 1..6)) {
                let mut doc: Value = serde_json::from_slice(&sample_bytes()).unwrap();
                for (at, value, copy_from_elsewhere) in edits {
                    let mut all = Vec::new();
                    pointers(&doc, String::new(), &mut all);
                    let target = all[at.index(all.len())].clone();
                    // Either a hostile value, or another part of the file (duplicate ids, nodes in odd places).
                    let replacement = if copy_from_elsewhere { doc.pointer(&all[(at.index(all.len()) * 7 + 3) % all.len()]).cloned().unwrap_or(Value::Null) } else { value };
                    match doc.pointer_mut(&target) {
                        Some(slot) if !target.is_empty() => *slot = replacement,
                        _ => doc = replacement,
                    }
                }
                check(serde_json::to_string(&doc).unwrap().as_bytes());
            }
        }
    }
}
