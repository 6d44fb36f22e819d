//! `termsprawl shot --manifest` and the deterministic-pixel options end to
//! end: the real binary, real CEF (one engine start per manifest), no X server.

mod support;

use canvas_render::RgbaImage;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use support::{closed_port_url, junit, serve_page};
use termsprawl::model::{persist, Camera, Node, NodeKind, Project, ProjectId, Rect};

/// A blue page with a red box at (40, 30) 120×60.
const BOX: &str = r#"<!doctype html><title>box</title>
<style>html,body{margin:0;background:rgb(18,52,86)}#box{position:absolute;left:40px;top:30px;width:120px;height:60px;background:rgb(250,20,30)}</style>
<div id=box></div>"#;

/// White by default, black under prefers-color-scheme: dark.
const SCHEMED: &str = r#"<!doctype html><style>html,body{margin:0;background:#fff}@media (prefers-color-scheme: dark){html,body{background:#000}}</style>"#;

/// An element added 300 ms after load.
const LATE: &str = r#"<!doctype html><style>html,body{margin:0;background:rgb(18,52,86)}</style>
<script>addEventListener('load', () => setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.style.cssText = 'position:absolute;left:0;top:0;width:50px;height:50px;background:rgb(0,200,0)'; document.body.appendChild(d); }, 300));</script>"#;

/// Endless animations (colour, movement, a spinner), a 100 s finite slide and
/// a 100 s colour transition (white to blue, started as the page parses).
const ANIMATED: &str = r#"<!doctype html><style>
html,body{margin:0;background:#fff}
@keyframes hue{from{background:rgb(255,0,0)}to{background:rgb(0,0,255)}}
@keyframes spin{to{transform:rotate(360deg)}}
@keyframes slide{from{left:0}to{left:200px}}
#pulse{position:absolute;left:0;top:0;width:100px;height:100px;animation:hue .4s linear infinite alternate}
#spin{position:absolute;left:120px;top:0;width:80px;height:20px;background:#0a0;animation:spin .7s linear infinite}
#slide{position:absolute;left:0;top:120px;width:40px;height:40px;background:#000;animation:slide 100s linear forwards}
#fade{position:absolute;left:260px;top:120px;width:40px;height:40px;background-color:rgb(255,255,255);transition:background-color 100s linear}
</style><div id=pulse></div><div id=spin></div><div id=slide></div><div id=fade></div>
<script>const f = document.getElementById('fade'); getComputedStyle(f).backgroundColor; f.style.backgroundColor = 'rgb(0,0,255)';</script>"#;

/// The same text in the generic families and their named stand-ins.
const FONTS: &str = r#"<!doctype html><style>html,body{margin:0;background:#fff}p{margin:0;width:300px;height:40px;font-size:24px;color:#000}</style>
<p id=sans style="font-family:sans-serif">Hamburgefonts 0123</p>
<p id=lib style="font-family:'Liberation Sans'">Hamburgefonts 0123</p>
<p id=arial style="font-family:Arial">Hamburgefonts 0123</p>
<p id=dejavu style="font-family:'DejaVu Sans'">Hamburgefonts 0123</p>
<p id=extra style="font-family:'DejaVu Sans Condensed'">Hamburgefonts 0123</p>
<p id=unknown style="font-family:'No Such Family'">Hamburgefonts 0123</p>"#;

/// A focused input whose caret is red.
const INPUT: &str = r#"<!doctype html><style>html,body{margin:0;background:#fff}input{position:absolute;left:10px;top:10px;width:200px;height:40px;font-size:28px;border:0;outline:0;background:#fff;caret-color:rgb(255,0,0)}</style><input id=i autofocus>"#;

fn shot_cmd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_termsprawl")).arg("shot").args(args).output().unwrap()
}

fn write_manifest(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("shots.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

fn run_manifest(manifest: &Path, extra: &[&str]) -> (Output, Value) {
    let report = manifest.with_file_name("report.json");
    let mut args = vec!["--manifest", manifest.to_str().unwrap(), "--report", report.to_str().unwrap()];
    args.extend(extra);
    let out = shot_cmd(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("no report ({e}); stderr: {stderr}"));
    (out, serde_json::from_str(&json).unwrap())
}

/// Any change counts (threshold 0, anti-aliasing counted).
fn exact() -> pixel_diff::Options {
    pixel_diff::Options { threshold: 0.0, ignore_antialiasing: false, diff_image: false }
}

/// The rectangle holding every pixel that differs between two same-sized images (`WxH+X+Y`).
fn changed(a: &pixel_diff::Image, b: &pixel_diff::Image) -> Option<String> {
    pixel_diff::compare(a, b, &exact()).unwrap().changed_area.map(|area| area.to_string())
}

/// [`changed`] between two PNGs in `dir`.
fn changed_files(dir: &Path, a: &str, b: &str) -> Option<String> {
    let open = |n: &str| pixel_diff::Image::open(&dir.join(n)).unwrap_or_else(|e| panic!("{n}: {e}"));
    changed(&open(a), &open(b))
}

fn load(dir: &Path, name: &str) -> RgbaImage {
    RgbaImage::load_png(&dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn rgb(img: &RgbaImage, x: u32, y: u32) -> [u8; 3] {
    let p = img.pixel(x, y).unwrap_or_else(|| panic!("({x}, {y}) outside {}x{}", img.width, img.height));
    [p[0], p[1], p[2]]
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 3)
}

fn bytes(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn saved_canvas(dir: &Path, url: &str) -> std::path::PathBuf {
    let folder = dir.join("proj");
    std::fs::create_dir_all(&folder).unwrap();
    let browser = Node::new(NodeKind::browser(url).unwrap(), "page", Rect { x: 0.0, y: 0.0, w: 400.0, h: 300.0 });
    let (project, _) =
        Project::from_nodes(ProjectId::generate(), "proj", &folder, Camera::default(), vec![browser], 3).unwrap();
    persist::save_layout(&project, None).unwrap();
    folder
}

#[test]
fn a_batch_of_good_and_bad_entries_reports_every_entry_and_fails() {
    let boxed = serve_page(BOX);
    let green = serve_page("<!doctype html><style>html,body{margin:0;height:100%;background:rgb(0,200,0)}</style>");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    saved_canvas(d, &green);
    let manifest = write_manifest(
        d,
        &format!(
            "defaults:\n  size: 320x240\nshots:\n{}",
            [
                format!("- url: {boxed}\n  output: out/view.png"),
                format!("- url: {closed}\n  output: out/refused.png", closed = closed_port_url()),
                format!("- url: {boxed}\n  output: out/el.png\n  selector: '#box'"),
                format!("- url: {boxed}\n  output: out/missing.png\n  selector: '#nothing'"),
                format!("- url: {boxed}\n  output: out/threw.png\n  js: \"throw new Error('no such widget')\""),
                "- canvas: proj\n  output: out/canvas.png\n  size: 800x400".to_string(),
                format!("- url: {boxed}\n  output: out/small.png\n  size: 200x100\n  timeout: 20"),
            ]
            .join("\n")
        ),
    );
    let junit_xml = d.join("junit.xml");
    let (out, report) = run_manifest(&manifest, &["--jobs", "3", "--junit", junit_xml.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a failed entry fails the run; stderr {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("4 of 7 ok, 3 failed"), "summary line: {stdout:?}");
    assert_eq!(
        (report["total"].as_u64(), report["passed"].as_u64(), report["ok"].as_bool()),
        (Some(7), Some(4), Some(false))
    );
    let entries = report["entries"].as_array().unwrap();
    // (file, size when written, error when not)
    type Want<'a> = (&'a str, Option<(u64, u64)>, Option<&'a str>);
    let want: [Want; 7] = [
        ("view.png", Some((320, 240)), None),
        ("refused.png", None, Some("ERR_CONNECTION_REFUSED")),
        ("el.png", Some((120, 60)), None),
        ("missing.png", None, Some("matched no visible element")),
        ("threw.png", None, Some("no such widget")),
        ("canvas.png", Some((800, 400)), None),
        ("small.png", Some((200, 100)), None),
    ];
    for (i, (e, (file, size, error))) in entries.iter().zip(want).enumerate() {
        assert_eq!(e["index"].as_u64(), Some(i as u64));
        assert!(e["file"].as_str().unwrap().ends_with(&format!("out/{file}")), "{e}");
        assert!(e["timeMs"].is_u64(), "{e}");
        let path = d.join("out").join(file);
        match error {
            None => {
                assert_eq!(e["ok"], true, "{e}");
                let s = &e["size"];
                assert_eq!((s["width"].as_u64(), s["height"].as_u64()), (Some(size.unwrap().0), Some(size.unwrap().1)));
                assert!(path.exists(), "{file} not written");
            }
            Some(reason) => {
                assert_eq!(e["ok"], false, "{e}");
                assert!(e["error"].as_str().unwrap().contains(reason), "{file}: {e}");
                assert!(e["size"].is_null());
                assert!(!path.exists(), "a failed entry wrote {file}");
                assert!(stderr.contains(&format!("shots[{i}]")), "stderr names the failed entry: {stderr}");
            }
        }
    }
    assert!(close(rgb(&load(d, "out/view.png"), 100, 60), [250, 20, 30]));
    // CI's view: seven cases, the three failed shots as errors, named by their output.
    let suite = junit::parse(&std::fs::read_to_string(&junit_xml).unwrap());
    assert_eq!(
        (suite.suites, suite.tests.as_str(), suite.errors.as_str(), suite.failures.as_str()),
        (1, "7", "3", "0")
    );
    let refused = &suite.cases[1];
    assert!(refused.name.ends_with("out/refused.png"), "{refused:?}");
    assert_eq!(refused.classname, "termsprawl.shot");
    assert_eq!(refused.verdict.as_deref(), Some("error"));
    assert!(refused.message.as_deref().unwrap_or_default().contains("ERR_CONNECTION_REFUSED"), "{refused:?}");
    assert_eq!(suite.cases[0].verdict, None);
    let canvas = load(d, "out/canvas.png");
    let greens = (0..canvas.height)
        .flat_map(|y| (0..canvas.width / 2).map(move |x| (x, y)))
        .filter(|&(x, y)| canvas.pixel(x, y).is_some_and(|p| p[0] < 40 && p[1] > 170 && p[2] < 40))
        .count();
    assert!(greens > 5000, "the canvas entry lacks its live browser content ({greens} green pixels)");
}

#[test]
fn a_bad_manifest_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("shots:\n  - url: http://127.0.0.1:9/\n    output: a.png\n  - url: http://127.0.0.1:9/\n    output: b.png\n    colorScheme: sepia\n", "shots[1] (output b.png): field 'colorScheme'"),
        ("shots:\n  - url: http://127.0.0.1:9/\n    output: a.png\n    fullpage: true\n", "shots[0] (output a.png): field 'fullpage'"),
        ("shots:\n  - url: 'file:///etc/passwd'\n    output: a.png\n", "shots[0] (output a.png): field 'url'"),
        ("shots: [\n", "shots.yaml"),
    ];
    for (text, want) in cases {
        let manifest = write_manifest(d, text);
        let out = shot_cmd(&["--manifest", manifest.to_str().unwrap(), "--report", d.join("r.json").to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        assert!(stderr.contains(want), "{text}: stderr {stderr:?} lacks {want:?}");
        assert!(!d.join("a.png").exists() && !d.join("r.json").exists(), "{text}: something was written");
    }
    let out = shot_cmd(&["--manifest", d.join("none.yaml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let out = shot_cmd(&["--manifest", write_manifest(d, "shots: []\n").to_str().unwrap(), "--scale", "2"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scale applies to one shot"));
    let out = shot_cmd(&["--manifest", d.join("shots.yaml").to_str().unwrap(), "--timeout", "5"]);
    assert_eq!(out.status.code(), Some(2), "--timeout is per entry in a manifest, not silently ignored");
}

#[test]
fn each_determinism_option_changes_exactly_what_it_names() {
    let (boxed, schemed, late, input) = (serve_page(BOX), serve_page(SCHEMED), serve_page(LATE), serve_page(INPUT));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let manifest = write_manifest(
        d,
        &format!(
            "defaults:\n  size: 320x200\nshots:\n\
  - {{url: '{schemed}', output: s-light.png, colorScheme: light}}\n\
  - {{url: '{schemed}', output: s-dark.png, colorScheme: dark}}\n\
  - {{url: '{boxed}', output: b-light.png, colorScheme: light}}\n\
  - {{url: '{boxed}', output: b-dark.png, colorScheme: dark}}\n\
  - {{url: '{boxed}', output: b-1.png}}\n\
  - {{url: '{boxed}', output: b-2.png, scale: 2}}\n\
  - {{url: '{boxed}', output: b-still.png, animations: disabled, caret: hide}}\n\
  - {{url: '{boxed}', output: b-hide.png, hide: '#box'}}\n\
  - {{url: '{boxed}', output: b-mask.png, mask: ['#box']}}\n\
  - {{url: '{boxed}', output: b-mask-green.png, mask: '#box', maskColor: 'rgb(0, 255, 0)'}}\n\
  - {{url: '{boxed}', output: b-js.png, js: \"document.documentElement.style.background = 'rgb(255, 255, 0)'\"}}\n\
  - {{url: '{late}', output: late-load.png}}\n\
  - {{url: '{late}', output: late-waitfor.png, waitFor: '#late'}}\n\
  - {{url: '{input}', output: caret-on.png, js: \"document.getElementById('i').focus()\"}}\n\
  - {{url: '{input}', output: caret-hidden.png, caret: hide, js: \"document.getElementById('i').focus()\"}}\n"
        ),
    );
    let (out, report) = run_manifest(&manifest, &[]);
    assert!(out.status.success(), "{report:#}\n{}", String::from_utf8_lossy(&out.stderr));

    // Colour scheme: a page that asks for it changes, one that does not stays the same bytes.
    assert!(close(rgb(&load(d, "s-light.png"), 10, 10), [255, 255, 255]));
    assert!(close(rgb(&load(d, "s-dark.png"), 10, 10), [0, 0, 0]));
    assert_eq!(bytes(d, "b-light.png"), bytes(d, "b-dark.png"), "a page without prefers-color-scheme changed");
    assert_eq!(bytes(d, "b-light.png"), bytes(d, "b-1.png"));
    assert!(bytes(d, "b-still.png") == bytes(d, "b-1.png"), "a page with no animation and no caret changed");

    // Scale 2: twice the pixels each way, the same picture (each 2×2 block one pixel of scale 1).
    let two = pixel_diff::Image::open(&d.join("b-2.png")).unwrap();
    assert_eq!(two.dimensions(), (640, 400));
    let halved: Vec<pixel_diff::Rgba> = (0..200)
        .flat_map(|y| (0..320).map(move |x| (x, y)))
        .map(|(x, y)| {
            let px = |dx: u32, dy: u32| two.pixel(2 * x + dx, 2 * y + dy).unwrap();
            let [a, b, c, e] = [px(0, 0), px(1, 0), px(0, 1), px(1, 1)];
            std::array::from_fn(|i| ((u16::from(a[i]) + u16::from(b[i]) + u16::from(c[i]) + u16::from(e[i])) / 4) as u8)
        })
        .collect();
    let halved = pixel_diff::Image::from_rgba(320, 200, halved).unwrap();
    assert_eq!(
        changed(&pixel_diff::Image::open(&d.join("b-1.png")).unwrap(), &halved),
        None,
        "scale 2 drew another picture"
    );

    // Each option changes its own pixels and nothing else: hide and mask exactly
    // the box's rectangle, --js the background around the box, --wait-for the
    // late element, --caret hide only inside the input.
    let box_area = Some("120x60+40+30".to_owned());
    assert_eq!(changed_files(d, "b-1.png", "b-hide.png"), box_area, "hide");
    assert_eq!(changed_files(d, "b-1.png", "b-mask.png"), box_area, "mask");
    assert_eq!(changed_files(d, "b-1.png", "b-mask-green.png"), box_area, "mask colour");
    assert_eq!(changed_files(d, "b-mask.png", "b-mask-green.png"), box_area, "mask colour");
    let (hidden, masked, green) = (load(d, "b-hide.png"), load(d, "b-mask.png"), load(d, "b-mask-green.png"));
    for (x, y) in [(41, 31), (100, 60), (158, 88)] {
        assert!(close(rgb(&hidden, x, y), [18, 52, 86]), "hidden box still drawn at ({x}, {y})");
        assert!(close(rgb(&masked, x, y), [255, 0, 255]), "mask missing at ({x}, {y}): {:?}", rgb(&masked, x, y));
        assert!(close(rgb(&green, x, y), [0, 255, 0]), "mask colour ignored at ({x}, {y})");
    }
    assert_eq!(changed_files(d, "b-1.png", "b-js.png"), Some("320x200+0+0".to_owned()), "--js");
    assert!(close(rgb(&load(d, "b-js.png"), 300, 150), [255, 255, 0]));
    assert!(close(rgb(&load(d, "b-js.png"), 100, 60), [250, 20, 30]), "--js changed the box too");
    assert!(close(rgb(&load(d, "late-load.png"), 25, 25), [18, 52, 86]), "the late element is there at load");
    assert_eq!(changed_files(d, "late-load.png", "late-waitfor.png"), Some("50x50+0+0".to_owned()), "--wait-for");
    assert!(close(rgb(&load(d, "late-waitfor.png"), 25, 25), [0, 200, 0]), "--wait-for did not wait");

    // The caret: red pixels in the input unless hidden, and nothing else differs.
    let reds = |img: &RgbaImage| {
        (10..210)
            .flat_map(|x| (10..50).map(move |y| (x, y)))
            .filter(|&(x, y)| {
                let p = rgb(img, x, y);
                p[0] > 200 && p[1] < 80 && p[2] < 80
            })
            .count()
    };
    assert!(reds(&load(d, "caret-on.png")) > 0, "the focused input shows no caret to hide");
    assert_eq!(reds(&load(d, "caret-hidden.png")), 0, "--caret hide left the caret");
    let caret = pixel_diff::compare(
        &pixel_diff::Image::open(&d.join("caret-on.png")).unwrap(),
        &pixel_diff::Image::open(&d.join("caret-hidden.png")).unwrap(),
        &exact(),
    )
    .unwrap()
    .changed_area
    .expect("hiding the caret changed nothing");
    assert!(
        caret.left >= 10 && caret.top >= 10 && caret.right < 210 && caret.bottom < 50,
        "--caret hide changed pixels outside the input: {caret}"
    );

    // The same options on the command line of a single shot.
    let single = d.join("single.png");
    let out = shot_cmd(&[
        &schemed,
        "-o",
        single.to_str().unwrap(),
        "--size",
        "100x50",
        "--color-scheme",
        "dark",
        "--scale",
        "2",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let img = RgbaImage::load_png(&single).unwrap();
    assert_eq!((img.width, img.height), (200, 100));
    assert!(close(rgb(&img, 50, 50), [0, 0, 0]));
    let out = shot_cmd(&[&boxed, "-o", single.to_str().unwrap(), "--js", "throw new Error('broken page')"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken page"));
}

#[test]
fn an_endlessly_animated_page_shot_ten_times_with_animations_disabled_is_byte_identical() {
    let animated = serve_page(ANIMATED);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("defaults:\n  size: 320x200\nshots:\n");
    for i in 0..10 {
        text.push_str(&format!("  - {{url: '{animated}', output: frozen-{i}.png, animations: disabled}}\n"));
    }
    for i in 0..3 {
        text.push_str(&format!("  - {{url: '{animated}', output: running-{i}.png, wait: {}}}\n", 100 + 130 * i));
    }
    let (out, report) = run_manifest(&write_manifest(d, &text), &["--jobs", "4"]);
    assert!(out.status.success(), "{report:#}");
    let first = bytes(d, "frozen-0.png");
    for i in 1..10 {
        assert!(bytes(d, &format!("frozen-{i}.png")) == first, "frozen-{i}.png differs from frozen-0.png");
    }
    // And in another engine start, alone.
    let again = format!(
        "defaults:\n  size: 320x200\nshots:\n  - {{url: '{animated}', output: again.png, animations: disabled}}\n"
    );
    let (out, report) = run_manifest(&write_manifest(d, &again), &[]);
    assert!(out.status.success(), "{report:#}");
    assert!(bytes(d, "again.png") == first, "a second engine run shot other bytes");
    let frozen = load(d, "frozen-0.png");
    // Infinite animations are back at their initial state: no animated colour, an unrotated bar.
    assert!(close(rgb(&frozen, 50, 50), [255, 255, 255]), "pulse not cancelled: {:?}", rgb(&frozen, 50, 50));
    assert!(close(rgb(&frozen, 160, 10), [0, 170, 0]), "spinner not at rest");
    // The finite 100 s slide is at its end.
    assert!(close(rgb(&frozen, 220, 140), [0, 0, 0]), "finite animation not fast-forwarded");
    assert!(close(rgb(&frozen, 20, 140), [255, 255, 255]));
    // The 100 s transition is finished too.
    assert!(close(rgb(&frozen, 280, 140), [0, 0, 255]), "transition not finished: {:?}", rgb(&frozen, 280, 140));
    let running: Vec<Vec<u8>> = (0..3).map(|i| bytes(d, &format!("running-{i}.png"))).collect();
    assert!(
        running.iter().any(|r| r != &running[0]),
        "without the option the page did not animate: the test shows nothing"
    );
}

#[test]
fn pages_get_the_fixed_font_set() {
    let fonts = serve_page(FONTS);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::from("defaults:\n  size: 400x200\nshots:\n");
    // A font another package put beside the fixed set's files (fonts-dejavu-extra,
    // which ./dev setup installs for this) is not there for a page.
    let extra = std::path::Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed.ttf");
    let ids: &[&str] = if extra.exists() {
        &["sans", "lib", "arial", "dejavu", "extra", "unknown"]
    } else {
        assert!(
            std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(),
            "{} missing: ./dev setup installs it",
            extra.display()
        );
        println!("{} missing: the font outside the fixed set is not tried", extra.display());
        &["sans", "lib", "arial", "dejavu"]
    };
    for id in ids {
        text.push_str(&format!("  - {{url: '{fonts}', output: {id}.png, selector: '#{id}'}}\n"));
    }
    let (out, report) = run_manifest(&write_manifest(d, &text), &[]);
    assert!(out.status.success(), "{report:#}");
    assert!(bytes(d, "sans.png") == bytes(d, "lib.png"), "sans-serif is not Liberation Sans");
    assert!(bytes(d, "arial.png") == bytes(d, "lib.png"), "Arial is not Liberation Sans");
    assert!(
        bytes(d, "dejavu.png") != bytes(d, "lib.png"),
        "DejaVu Sans drew like Liberation Sans: the test shows nothing"
    );
    if ids.contains(&"extra") {
        // It draws as a family no machine has: the page's fallback.
        assert!(
            bytes(d, "extra.png") == bytes(d, "unknown.png"),
            "DejaVu Sans Condensed, outside the fixed set, was used"
        );
    }
}

#[test]
fn baselines_are_created_compared_and_updated() {
    let boxed = serve_page(BOX);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let entries = |js: &str, extra: &str| {
        format!(
            "defaults:\n  size: 320x200\nshots:\n  - {{url: '{boxed}', output: out/a.png, compare: base/a.png, js: \"{js}\"{extra}}}\n  - {{url: '{boxed}', output: out/b.png, compare: base/b.png}}\n"
        )
    };
    let same = "1";
    // A 20x20 change inside the box.
    let moved = "const e = document.createElement('div'); e.style.cssText = 'position:absolute;left:60px;top:40px;width:20px;height:20px;background:rgb(0,255,0)'; document.body.appendChild(e)";

    let (out, report) = run_manifest(&write_manifest(d, &entries(same, "")), &[]);
    assert_eq!(out.status.code(), Some(2), "a missing baseline is an error unless updating");
    let e = &report["entries"][0];
    assert_eq!(e["compare"]["status"], "error", "{e}");
    assert!(e["error"].as_str().unwrap().contains("--update-baselines"), "{e}");

    let (out, report) = run_manifest(&write_manifest(d, &entries(same, "")), &["--update-baselines"]);
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["entries"][0]["compare"]["status"], "updated");
    assert_eq!(bytes(d, "base/a.png"), bytes(d, "out/a.png"));

    let (out, report) = run_manifest(&write_manifest(d, &entries(same, "")), &[]);
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["entries"][0]["compare"]["status"], "passed");
    assert_eq!(report["entries"][0]["compare"]["diffPixels"], 0);

    let junit_xml = d.join("junit.xml");
    let (out, report) =
        run_manifest(&write_manifest(d, &entries(moved, "")), &["--junit", junit_xml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let suite = junit::parse(&std::fs::read_to_string(&junit_xml).unwrap());
    assert_eq!((suite.tests.as_str(), suite.failures.as_str(), suite.errors.as_str()), ("2", "1", "0"));
    assert_eq!(suite.cases[0].verdict.as_deref(), Some("failure"));
    assert!(suite.cases[0].message.as_deref().unwrap_or_default().contains("400 pixels"), "{:?}", suite.cases[0]);
    assert_eq!(suite.cases[1].verdict, None);
    let (a, b) = (&report["entries"][0], &report["entries"][1]);
    assert_eq!((a["ok"].as_bool(), b["ok"].as_bool()), (Some(false), Some(true)), "only the changed entry fails");
    let c = &a["compare"];
    assert_eq!(c["status"], "failed", "{c}");
    assert_eq!(c["diffPixels"], 400, "{c}");
    assert_eq!(c["changedArea"], "20x20+60+40", "{c}");
    let diff = d.join("out/a.diff.png");
    assert_eq!(c["diffImage"].as_str().map(std::path::PathBuf::from), Some(diff.clone()));
    let diff_img = pixel_diff::Image::open(&diff).unwrap();
    assert_eq!(diff_img.dimensions(), (320, 200));
    assert!(bytes(d, "base/a.png") != bytes(d, "out/a.png"), "a comparison never rewrites the baseline");

    // Within the entry's own limit it passes, and the stale diff image goes.
    let (out, report) = run_manifest(&write_manifest(d, &entries(moved, ", maxDiffPixels: 400")), &[]);
    assert!(out.status.success(), "{report:#}");
    assert!(!diff.exists(), "a passing comparison leaves a stale diff image");
    // The command line's limit applies to entries without their own.
    let (out, _) = run_manifest(&write_manifest(d, &entries(moved, "")), &["--max-diff-ratio", "0.01"]);
    assert!(out.status.success(), "400 of 64000 pixels is under 1 %");

    // A single shot: --compare passes, fails with a diff image, or updates.
    let single = d.join("single.png");
    let args = |base: &str, more: &[&str]| {
        let mut v: Vec<String> =
            [boxed.as_str(), "-o", single.to_str().unwrap(), "--size", "320x200", "--compare", base]
                .iter()
                .map(|s| s.to_string())
                .collect();
        v.extend(more.iter().map(|s| s.to_string()));
        v
    };
    let run = |v: Vec<String>| shot_cmd(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let b_png = d.join("base/b.png");
    assert!(run(args(b_png.to_str().unwrap(), &[])).status.success());
    let o = run(args(b_png.to_str().unwrap(), &["--js", moved]));
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("400 pixels") && stderr.contains("single.diff.png"), "{stderr}");
    let fresh = d.join("base/new.png");
    let single_junit = d.join("single.xml");
    let o = run(args(fresh.to_str().unwrap(), &["--junit", single_junit.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2), "missing baseline");
    let suite = junit::parse(&std::fs::read_to_string(&single_junit).unwrap());
    assert_eq!((suite.tests.as_str(), suite.errors.as_str()), ("1", "1"));
    assert!(suite.cases[0].message.as_deref().unwrap_or_default().contains("--update-baselines"));
    // A baseline of another size, or one that is no PNG, is no comparison either.
    let wider =
        [boxed.as_str(), "-o", single.to_str().unwrap(), "--size", "321x200", "--compare", b_png.to_str().unwrap()];
    let o = shot_cmd(&wider);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("differ in size") && stderr.contains("321x200"), "{stderr}");
    let corrupt = d.join("base/corrupt.png");
    std::fs::write(&corrupt, b"\x89PNG\r\n\x1a\n but cut short").unwrap();
    let o = run(args(corrupt.to_str().unwrap(), &[]));
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(run(args(fresh.to_str().unwrap(), &["--update-baselines"])).status.success());
    assert_eq!(std::fs::read(&fresh).unwrap(), std::fs::read(&single).unwrap());
}

#[test]
fn the_progress_line_is_drawn_only_on_a_terminal() {
    let boxed = serve_page(BOX);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let manifest = write_manifest(
        d,
        &format!("defaults:\n  size: 100x50\nshots:\n  - {{url: '{boxed}', output: a.png}}\n  - {{url: '{boxed}', output: b.png}}\n"),
    );
    let piped = shot_cmd(&["--manifest", manifest.to_str().unwrap()]);
    assert!(piped.status.success());
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("shot 1/2"), "progress drawn into a pipe");
    // util-linux `script` gives the command a terminal and copies what it drew.
    let cmd = format!("'{}' shot --manifest '{}'", env!("CARGO_BIN_EXE_termsprawl"), manifest.display());
    let tty = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
    let seen = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{seen}");
    assert!(
        seen.contains("\r\x1b[2Kshot 1/2 done, 0 failed\r\x1b[2Kshot 2/2 done, 0 failed"),
        "one line, redrawn: {seen:?}"
    );
    assert!(seen.contains("2 of 2 ok"), "{seen:?}");
}
