//! `termsprawl shot --canvas`: a saved project with a live browser node and a
//! sticky note, rendered headless with real CEF and wgpu on lavapipe.

mod support;

use std::process::Command;
use termsprawl::model::{persist, Camera, Node, NodeKind, Project, ProjectId, Rect};

const PAGE: &str =
    "<!doctype html><title>green page</title><style>html,body{margin:0;height:100%;background:rgb(0,200,0)}</style>";

#[test]
fn renders_saved_canvas_with_live_browser_content() {
    let url = support::serve_page(PAGE);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("proj");
    std::fs::create_dir_all(&folder).unwrap();
    let browser = Node::new(NodeKind::browser(&url).unwrap(), "page", Rect { x: 0.0, y: 0.0, w: 400.0, h: 300.0 });
    let sticky = Node::new(
        NodeKind::Sticky { text: "Remember the milk".into() },
        "note",
        Rect { x: 440.0, y: 0.0, w: 240.0, h: 160.0 },
    );
    let (project, repairs) =
        Project::from_nodes(ProjectId::generate(), "proj", &folder, Camera::default(), vec![browser, sticky], 3)
            .unwrap();
    assert!(repairs.is_empty());
    persist::save_layout(&project, None).unwrap();

    let out = std::env::var("CANVAS_SHOT_KEEP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| dir.path().join("canvas.png"));
    let status = Command::new(env!("CARGO_BIN_EXE_termsprawl"))
        .args(["shot", "--canvas", folder.to_str().unwrap(), "-o", out.to_str().unwrap(), "--size", "800x400"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    if std::env::var_os("CANVAS_SHOT_DEBUG").is_some() {
        eprintln!("{}", String::from_utf8_lossy(&status.stderr));
    }
    let img = canvas_render::RgbaImage::load_png(&out).unwrap();
    assert_eq!((img.width, img.height), (800, 400));
    // The live page's green fills the browser node's body somewhere on the left half.
    let green = (0..img.height).flat_map(|y| (0..img.width / 2).map(move |x| (x, y))).filter(|&(x, y)| {
        let p = img.pixel(x, y).unwrap();
        p[0] < 40 && p[1] > 170 && p[2] < 40
    });
    assert!(
        green.count() > 5000,
        "browser content missing from the canvas; stderr: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    // The sticky's yellow body on the right half.
    let yellowish = (0..img.height).flat_map(|y| (img.width / 2..img.width).map(move |x| (x, y))).filter(|&(x, y)| {
        let p = img.pixel(x, y).unwrap();
        p[0] > 150 && p[1] > 120 && p[2] < 140
    });
    assert!(yellowish.count() > 2000, "sticky note missing from the canvas");
}

#[test]
fn refuses_a_missing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.png");
    let o = Command::new(env!("CARGO_BIN_EXE_termsprawl"))
        .args(["shot", "--canvas", "/nonexistent/folder", "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a project folder"));
    assert!(!out.exists());
}
