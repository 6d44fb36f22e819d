//! Artifact operations of the agent tool runtime: `artifact_open` shows a
//! project file (text, or an image in the editor view) in an editor or diff
//! node, after checking off the main thread that it resolves inside the
//! project folder and is not binary.

use super::context::{beside, caller_project, model_error, OpContext};
use crate::model::{ArtifactView, NodeKind};
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use tool_server::{ArtifactArgs, ArtifactChoice, ToolError};

/// Size of a new artifact viewer.
const ARTIFACT_SIZE: (f64, f64) = (720.0, 560.0);
/// How much of a file is scanned for NUL bytes to tell text from binary.
const SNIFF_BYTES: u64 = 64 * 1024;

/// Image formats: shown as images in the editor view, refused as diffs.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "tif", "tiff", "avif", "svg"];
/// Formats that are binary whatever their first bytes say.
const BINARY_EXTENSIONS: &[&str] = &[
    "exe", "dll", "so", "dylib", "o", "a", "lib", "bin", "class", "jar", "war", "zip", "gz", "tgz", "xz", "bz2", "zst",
    "7z", "rar", "tar", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "mp3", "mp4", "m4a", "mov", "avi",
    "mkv", "webm", "wav", "flac", "ogg", "woff", "woff2", "ttf", "otf", "eot", "sqlite", "sqlite3", "db", "pyc",
    "wasm", "iso", "dmg", "deb", "rpm", "psd",
];

/// Why a file cannot be shown as an artifact, if it cannot.
pub(crate) fn check_artifact(path: &Path, view: ArtifactView) -> Result<(), ToolError> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let image = IMAGE_EXTENSIONS.contains(&ext.as_str());
    if image && view == ArtifactView::Diff {
        return Err(ToolError::unsupported(format!(
            "{} is an image; image diffs are not supported (open it with view editor)",
            path.display()
        )));
    }
    if BINARY_EXTENSIONS.contains(&ext.as_str()) {
        return Err(ToolError::unsupported(format!(
            "{} is a binary file (.{ext}) and cannot be opened",
            path.display()
        )));
    }
    if image {
        return Ok(());
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut head))
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
    if head.contains(&0) {
        return Err(ToolError::unsupported(format!("{} is a binary file and cannot be opened", path.display())));
    }
    Ok(())
}

/// Resolves `raw` (absolute) and checks it is a file inside `folder` (both through realpath).
pub(crate) fn resolve_inside(folder: &Path, raw: &str) -> Result<PathBuf, ToolError> {
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(ToolError::invalid_argument(format!("path must be absolute: {raw}")));
    }
    let real = std::fs::canonicalize(path).map_err(|e| ToolError::not_found(format!("cannot resolve {raw}: {e}")))?;
    let root = std::fs::canonicalize(folder)
        .map_err(|e| ToolError::failed(format!("cannot resolve the project folder {}: {e}", folder.display())))?;
    if !real.starts_with(&root) {
        return Err(ToolError::refused(format!("{raw} resolves outside the project folder {}", root.display())));
    }
    if !real.is_file() {
        return Err(ToolError::invalid_argument(format!("{raw} is not a regular file")));
    }
    Ok(real)
}

/// `artifact_open`: a project file in an editor or diff node.
pub(crate) fn artifact_open(ctx: &OpContext, args: ArtifactArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let raw = args.path;
    let view = match args.view {
        Some(ArtifactChoice::Diff) => ArtifactView::Diff,
        Some(ArtifactChoice::Editor) | None => ArtifactView::Editor,
    };
    let id2 = identity.clone();
    let folder = ctx.on_main(move |rt| Ok(caller_project(rt, &id2)?.folder().to_path_buf()))?;
    // File checks happen off the main thread: a slow disk must not stall the canvas.
    let real = resolve_inside(&folder, &raw)?;
    check_artifact(&real, view)?;
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        if p.folder() != folder {
            return Err(ToolError::refused("the project changed while the file was checked"));
        }
        let at = beside(p, &identity.node_id, ARTIFACT_SIZE);
        let title = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "artifact".into());
        let kind = NodeKind::Artifact { path: real.clone(), view, base: None };
        let id = rt.add_node(kind, &title, ARTIFACT_SIZE, Some(at)).map_err(model_error)?;
        Ok(json!({"nodeId": id, "path": real.display().to_string(), "view": view}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_open_shows_a_project_file_beside_the_caller() {
        use crate::model::Rect;
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let file = ctx.folder().join("notes.md");
        std::fs::write(&file, "# notes\n").unwrap();
        let real = std::fs::canonicalize(&file).unwrap();
        let v = ctx.run("artifact_open", json!({"path": file.display().to_string()})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(v, json!({"nodeId": id, "path": real.display().to_string(), "view": "editor"}));
        let n = ctx.node(&id).unwrap();
        assert_eq!(n.kind, NodeKind::Artifact { path: real, view: ArtifactView::Editor, base: None });
        assert_eq!(n.title, "notes.md");
        assert_eq!(n.rect, Rect::new(640.0, 0.0, 720.0, 560.0));
        let v = ctx.run("artifact_open", json!({"path": file.display().to_string(), "view": "diff"})).unwrap();
        assert_eq!(v["view"], "diff");
    }

    #[test]
    fn artifact_open_refuses_a_path_outside_the_project() {
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let outside = ctx.root().join("secret.txt");
        std::fs::write(&outside, "s").unwrap();
        let raw = outside.display().to_string();
        let before = ctx.rt.project().unwrap().nodes().count();
        let e = ctx.run("artifact_open", json!({"path": raw})).unwrap_err();
        let root = std::fs::canonicalize(ctx.folder()).unwrap();
        assert_eq!(e.code, tool_server::ErrorCode::Refused);
        assert_eq!(e.message(), format!("{raw} resolves outside the project folder {}", root.display()));
        assert_eq!(ctx.rt.project().unwrap().nodes().count(), before, "no node was added");
        let e = ctx.run("artifact_open", json!({"path": "notes.md"})).unwrap_err();
        assert_eq!((e.code, e.message()), (tool_server::ErrorCode::InvalidArgument, "path must be absolute: notes.md"));
    }

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
        assert!(resolve_inside(&proj, "src/a.rs").unwrap_err().message().contains("absolute"));
        assert!(resolve_inside(&proj, &p("link.txt")).unwrap_err().message().contains("outside"));
        assert!(resolve_inside(&proj, &p("../secret.txt")).unwrap_err().message().contains("outside"));
        assert!(resolve_inside(&proj, &p("src")).unwrap_err().message().contains("not a regular file"));
        assert!(resolve_inside(&proj, &p("missing")).is_err());
        let blob = resolve_inside(&proj, &p("blob.dat")).unwrap();
        assert!(check_artifact(&blob, ArtifactView::Editor).unwrap_err().message().contains("binary"));
        let so = resolve_inside(&proj, &p("lib.so")).unwrap();
        assert!(check_artifact(&so, ArtifactView::Editor).unwrap_err().message().contains("binary"));
        let png = resolve_inside(&proj, &p("pic.png")).unwrap();
        assert!(check_artifact(&png, ArtifactView::Editor).is_ok());
        assert!(check_artifact(&png, ArtifactView::Diff).unwrap_err().message().contains("image diffs"));
    }
}
