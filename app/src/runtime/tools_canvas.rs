//! Canvas, sticky and artifact operations of the agent tool runtime: each
//! becomes a model [`Command`] applied on the main thread.

use super::tools::{arg, beside, caller_project, target_node, OpContext};
use crate::model::{ArtifactView, Command, Node, NodeId, NodeKind, Rect};
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use tool_server::ToolRequest;

/// Size of a new sticky note.
const STICKY_SIZE: (f64, f64) = (260.0, 200.0);
/// Size of a new artifact viewer.
const ARTIFACT_SIZE: (f64, f64) = (720.0, 560.0);
/// How much of a file is scanned for NUL bytes to tell text from binary.
const SNIFF_BYTES: u64 = 64 * 1024;
/// Longest sticky text echoed back by canvas_list.
const LIST_TEXT_CHARS: usize = 200;

/// Image formats: shown as images in the editor view, refused as diffs.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "tif", "tiff", "avif", "svg"];
/// Formats that are binary whatever their first bytes say.
const BINARY_EXTENSIONS: &[&str] = &[
    "exe", "dll", "so", "dylib", "o", "a", "lib", "bin", "class", "jar", "war", "zip", "gz", "tgz", "xz", "bz2", "zst",
    "7z", "rar", "tar", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "mp3", "mp4", "m4a", "mov", "avi",
    "mkv", "webm", "wav", "flac", "ogg", "woff", "woff2", "ttf", "otf", "eot", "sqlite", "sqlite3", "db", "pyc",
    "wasm", "iso", "dmg", "deb", "rpm", "psd",
];

/// A node as agents see it: compact JSON.
pub(crate) fn node_json(n: &Node, group: Option<&NodeId>) -> Value {
    let mut v = json!({
        "id": n.id, "kind": n.kind.name(), "title": n.title,
        "x": n.rect.x, "y": n.rect.y, "width": n.rect.w, "height": n.rect.h, "z": n.z,
    });
    match &n.kind {
        NodeKind::Browser { tabs, active_tab } => {
            if let Some(t) = tabs.iter().find(|t| &t.id == active_tab) {
                v["url"] = json!(t.url);
            }
        }
        NodeKind::Agent { agent, .. } => v["agent"] = json!(agent.as_str()),
        NodeKind::Sticky { text } => v["text"] = json!(text.chars().take(LIST_TEXT_CHARS).collect::<String>()),
        NodeKind::Group { members } => v["members"] = json!(members),
        NodeKind::Artifact { path, view } => {
            v["path"] = json!(path.display().to_string());
            v["view"] = json!(view);
        }
        NodeKind::Terminal { .. } => {}
    }
    if let Some(g) = group {
        v["group"] = json!(g);
    }
    if !n.links.is_empty() {
        v["links"] = json!(n.links);
    }
    v
}

fn bounds(r: &Rect) -> Value {
    json!({"x": r.x, "y": r.y, "width": r.w, "height": r.h})
}

/// `canvas_list`: every node of the caller's canvas, bottom to top.
pub(crate) fn list(ctx: &OpContext) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        Ok(Value::Array(p.nodes_by_z().into_iter().map(|n| node_json(n, p.group_of(&n.id))).collect()))
    })
}

fn node_ids(p: &crate::model::Project, req: &ToolRequest) -> Result<Vec<NodeId>, String> {
    let ids = req.strings_arg("nodeIds").ok_or("missing argument nodeIds")?;
    ids.into_iter().map(|id| target_node(p, id).map(|n| n.id.clone())).collect()
}

/// `canvas_select`: replaces the selection.
pub(crate) fn select(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let req = req.clone();
    ctx.on_main(move |rt| {
        let ids = node_ids(caller_project(rt, &identity)?, &req)?;
        rt.selection.clear();
        for id in &ids {
            rt.selection.shift_click(id.clone());
        }
        rt.request_redraw();
        Ok(json!({"selected": rt.selection.to_vec()}))
    })
}

/// `canvas_move`: puts a node's top-left corner at (x, y) (a group brings its members).
pub(crate) fn move_node(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let id = arg(req, "nodeId")?.to_owned();
    let (x, y) = (req.number_arg("x").ok_or("missing argument x")?, req.number_arg("y").ok_or("missing argument y")?);
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &id)?;
        let (nid, r) = (n.id.clone(), n.rect);
        rt.apply(Command::MoveNodes { ids: vec![nid.clone()], dx: x - r.x, dy: y - r.y }).map_err(|e| e.to_string())?;
        let r = rt.project().and_then(|p| p.node(&nid)).map(|n| n.rect).ok_or("the node vanished")?;
        Ok(json!({"nodeId": nid, "bounds": bounds(&r)}))
    })
}

/// `canvas_resize`: sets a node's size, keeping its top-left corner.
pub(crate) fn resize(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let id = arg(req, "nodeId")?.to_owned();
    let (w, h) = (
        req.number_arg("width").ok_or("missing argument width")?,
        req.number_arg("height").ok_or("missing argument height")?,
    );
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &id)?;
        let (nid, r) = (n.id.clone(), n.rect);
        rt.apply(Command::SetRect { id: nid.clone(), rect: Rect::new(r.x, r.y, w, h) }).map_err(|e| e.to_string())?;
        let r = rt.project().and_then(|p| p.node(&nid)).map(|n| n.rect).ok_or("the node vanished")?;
        Ok(json!({"nodeId": nid, "bounds": bounds(&r)}))
    })
}

/// `canvas_group`: a new group frame around the nodes.
pub(crate) fn group(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let req = req.clone();
    ctx.on_main(move |rt| {
        let ids = node_ids(caller_project(rt, &identity)?, &req)?;
        let title = req.str_arg("title").map(str::to_owned);
        let applied = rt.apply(Command::GroupNodes { ids, title }).map_err(|e| e.to_string())?;
        let group = applied.created.first().ok_or("no group was created")?;
        Ok(json!({"nodeId": group}))
    })
}

/// `sticky_open`: a note beside the caller's node.
pub(crate) fn sticky_open(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let text = arg(req, "text")?.to_owned();
    ctx.on_main(move |rt| {
        let at = beside(caller_project(rt, &identity)?, &identity.node_id, STICKY_SIZE);
        let id = rt.add_node(NodeKind::Sticky { text }, "Note", STICKY_SIZE, Some(at)).map_err(|e| e.to_string())?;
        Ok(json!({"nodeId": id}))
    })
}

/// Why a file cannot be shown as an artifact, if it cannot.
pub(crate) fn check_artifact(path: &Path, view: ArtifactView) -> Result<(), String> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let image = IMAGE_EXTENSIONS.contains(&ext.as_str());
    if image && view == ArtifactView::Diff {
        return Err(format!(
            "{} is an image; image diffs are not supported (open it with view editor)",
            path.display()
        ));
    }
    if BINARY_EXTENSIONS.contains(&ext.as_str()) {
        return Err(format!("{} is a binary file (.{ext}) and cannot be opened", path.display()));
    }
    if image {
        return Ok(());
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut head))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if head.contains(&0) {
        return Err(format!("{} is a binary file and cannot be opened", path.display()));
    }
    Ok(())
}

/// Resolves `raw` (absolute) and checks it is a file inside `folder` (both through realpath).
pub(crate) fn resolve_inside(folder: &Path, raw: &str) -> Result<PathBuf, String> {
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(format!("path must be absolute: {raw}"));
    }
    let real = std::fs::canonicalize(path).map_err(|e| format!("cannot resolve {raw}: {e}"))?;
    let root = std::fs::canonicalize(folder)
        .map_err(|e| format!("cannot resolve the project folder {}: {e}", folder.display()))?;
    if !real.starts_with(&root) {
        return Err(format!("{raw} resolves outside the project folder {}", root.display()));
    }
    if !real.is_file() {
        return Err(format!("{raw} is not a regular file"));
    }
    Ok(real)
}

/// `artifact_open`: a project file in an editor or diff node.
pub(crate) fn artifact_open(ctx: &OpContext, req: &ToolRequest) -> Result<Value, String> {
    let identity = ctx.identity.clone();
    let raw = arg(req, "path")?.to_owned();
    let view = match req.str_arg("view") {
        Some("diff") => ArtifactView::Diff,
        _ => ArtifactView::Editor,
    };
    let id2 = identity.clone();
    let folder = ctx.on_main(move |rt| Ok(caller_project(rt, &id2)?.folder().to_path_buf()))?;
    // File checks happen off the main thread: a slow disk must not stall the canvas.
    let real = resolve_inside(&folder, &raw)?;
    check_artifact(&real, view)?;
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        if p.folder() != folder {
            return Err("the project changed while the file was checked".into());
        }
        let at = beside(p, &identity.node_id, ARTIFACT_SIZE);
        let title = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "artifact".into());
        let kind = NodeKind::Artifact { path: real.clone(), view };
        let id = rt.add_node(kind, &title, ARTIFACT_SIZE, Some(at)).map_err(|e| e.to_string())?;
        Ok(json!({"nodeId": id, "path": real.display().to_string(), "view": view}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_must_resolve_inside_the_project_and_be_text() {
        let dir = tempfile::tempdir().unwrap();
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(proj.join("src")).unwrap();
        std::fs::write(proj.join("src/a.rs"), "fn main() {}\n").unwrap();
        std::fs::write(proj.join("blob.dat"), b"abc\0def").unwrap();
        std::fs::write(proj.join("pic.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
        std::fs::write(proj.join("lib.so"), b"text really").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), proj.join("link.txt")).unwrap();
        let p = |s: &str| proj.join(s).display().to_string();

        let real = resolve_inside(&proj, &p("src/../src/a.rs")).unwrap();
        assert!(real.ends_with("src/a.rs"));
        assert!(check_artifact(&real, ArtifactView::Editor).is_ok());
        assert!(check_artifact(&real, ArtifactView::Diff).is_ok());
        assert!(resolve_inside(&proj, "src/a.rs").unwrap_err().contains("absolute"));
        assert!(resolve_inside(&proj, &p("link.txt")).unwrap_err().contains("outside"));
        assert!(resolve_inside(&proj, &p("../secret.txt")).unwrap_err().contains("outside"));
        assert!(resolve_inside(&proj, &p("src")).unwrap_err().contains("not a regular file"));
        assert!(resolve_inside(&proj, &p("missing")).is_err());
        let blob = resolve_inside(&proj, &p("blob.dat")).unwrap();
        assert!(check_artifact(&blob, ArtifactView::Editor).unwrap_err().contains("binary"));
        let so = resolve_inside(&proj, &p("lib.so")).unwrap();
        assert!(check_artifact(&so, ArtifactView::Editor).unwrap_err().contains("binary"));
        let png = resolve_inside(&proj, &p("pic.png")).unwrap();
        assert!(check_artifact(&png, ArtifactView::Editor).is_ok());
        assert!(check_artifact(&png, ArtifactView::Diff).unwrap_err().contains("image diffs"));
    }
}
