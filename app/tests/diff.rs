//! `termsprawl diff` end to end (the front, and the engine's same command):
//! the real binaries on
//! PNG files, their exit codes, stdout/stderr lines, the diff image and the
//! JUnit report. No browser and no display are involved (DISPLAY is removed).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::junit;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn exec(cmd: &mut Command) -> Run {
    let out = cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").output().expect("run the binary");
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `termsprawl diff ARGS` (run by the front), checked to give the same exit
/// code and output as the engine's own `diff`.
fn diff(args: &[&Path]) -> Run {
    let run = exec(Command::new(env!("CARGO_BIN_EXE_termsprawl")).arg("diff").args(args));
    let engine = exec(Command::new(env!("CARGO_BIN_EXE_termsprawl-engine")).arg("diff").args(args));
    assert_eq!((run.code, &run.stdout), (engine.code, &engine.stdout), "front vs engine diff {args:?}");
    if run.stderr.starts_with("termsprawl diff: ") {
        assert_eq!(run.stderr, engine.stderr);
    }
    run
}

/// The shared objects the dynamic loader maps for `bin` (it lists them and
/// exits without running the program).
fn loaded_objects(bin: &str) -> String {
    let out = Command::new(bin).env("LD_TRACE_LOADED_OBJECTS", "1").output().expect("run the loader");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_front_loads_no_browser_engine_and_hands_the_rest_to_the_engine() {
    // Why the front exists: `diff` must not pay for mapping libcef.so.
    assert!(!loaded_objects(env!("CARGO_BIN_EXE_termsprawl")).contains("libcef"));
    assert!(loaded_objects(env!("CARGO_BIN_EXE_termsprawl-engine")).contains("libcef.so"));
    // Everything but a leading `diff` is the engine's: same output, same exit code.
    for args in [&["--version"][..], &["--no-such-option"], &["shot", "--help"]] {
        let front = exec(Command::new(env!("CARGO_BIN_EXE_termsprawl")).args(args));
        let engine = exec(Command::new(env!("CARGO_BIN_EXE_termsprawl-engine")).args(args));
        assert_eq!(
            (front.code, &front.stdout, &front.stderr),
            (engine.code, &engine.stdout, &engine.stderr),
            "{args:?}"
        );
    }
    let help = exec(Command::new(env!("CARGO_BIN_EXE_termsprawl")).arg("--help"));
    assert!(help.stdout.contains("Render a page"), "{}", help.stdout);
}

/// A dark-grey `w × h` RGB PNG at `path`, with the pixels in `dots` set to their colours.
fn png(path: &Path, w: u32, h: u32, dots: &[(u32, u32, [u8; 3])]) -> PathBuf {
    let mut data = vec![60u8; (w * h * 3) as usize];
    for &(x, y, c) in dots {
        let i = ((y * w + x) * 3) as usize;
        data[i..i + 3].copy_from_slice(&c);
    }
    let mut enc = png::Encoder::new(std::fs::File::create(path).unwrap(), w, h);
    enc.set_color(png::ColorType::Rgb);
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(&data).unwrap();
    writer.finish().unwrap();
    path.to_path_buf()
}

fn rgba_at(path: &Path, x: u32, y: u32) -> [u8; 4] {
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let i = ((y * info.width + x) * 4) as usize;
    [buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

#[test]
fn exit_codes_summary_and_diff_image() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = png(&d.join("a.png"), 64, 48, &[]);
    let same = png(&d.join("same.png"), 64, 48, &[]);
    let dot = png(&d.join("dot.png"), 64, 48, &[(10, 20, [250, 250, 250]), (11, 20, [250, 250, 250])]);

    let r = diff(&[&a, &same]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "equal within limits: 0 of 3072 pixels (0.0000%); limit 0 pixels\n");

    let out = d.join("diff.png");
    let r = diff(&[&a, &dot, p("-o"), &out]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1);
    assert!(r.stdout.starts_with("different: 2 of 3072 pixels (0.0651%) in 2x1+10+20"), "{}", r.stdout);
    assert_eq!(rgba_at(&out, 10, 20), [255, 0, 0, 255], "changed pixel red");
    // An unchanged pixel (dark grey 60) shows faded: grey, nearly white.
    let faded = rgba_at(&out, 40, 40);
    assert!(faded[0] == faded[1] && faded[1] == faded[2] && faded[0] >= 230 && faded[0] < 255, "{faded:?}");

    // Limits: two changed pixels pass a limit of 2 and a ratio of 0.001, not 1 or 0.0005.
    assert_eq!(diff(&[&a, &dot, p("--max-diff-pixels"), p("2")]).code, 0);
    assert_eq!(diff(&[&a, &dot, p("--max-diff-pixels"), p("1")]).code, 1);
    assert_eq!(diff(&[&a, &dot, p("--max-diff-ratio"), p("0.001")]).code, 0);
    assert_eq!(diff(&[&a, &dot, p("--max-diff-ratio"), p("0.0005")]).code, 1);
    // The threshold: 60 against 250 is far apart, but not at the top of the scale.
    assert_eq!(diff(&[&a, &dot, p("--threshold"), p("1")]).code, 0);

    // A global option before `diff` goes to the engine, through CEF's process check; same result.
    let late =
        exec(Command::new(env!("CARGO_BIN_EXE_termsprawl")).arg("--data-dir").arg(d).arg("diff").arg(&a).arg(&dot));
    assert_eq!(late.code, 1, "{}", late.stderr);
    assert!(late.stdout.starts_with("different: 2 of 3072 pixels"), "{}", late.stdout);
}

#[test]
fn errors_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = png(&d.join("a.png"), 64, 48, &[]);
    let small = png(&d.join("small.png"), 32, 48, &[]);
    let text = d.join("page.html");
    std::fs::write(&text, "<html></html>").unwrap();
    let cut = d.join("cut.png");
    let bytes = std::fs::read(&a).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 20]).unwrap();

    let cases: [(&[&Path], &str); 4] = [
        (&[&a, &d.join("missing.png")], "missing.png: no such file"),
        (&[&a, &small], "the images differ in size: the first is 64x48, the second 32x48"),
        (&[&a, &text], "page.html: not a PNG file"),
        (&[&cut, &a], "cut.png: corrupt or truncated PNG"),
    ];
    for (args, want) in cases {
        let r = diff(args);
        assert_eq!(r.code, 2, "{want}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.starts_with("termsprawl diff: ") && r.stderr.contains(want), "{}", r.stderr);
        assert_eq!(r.stdout, "");
    }

    // The two limits exclude each other, and a threshold is 0..1: usage errors, also exit 2.
    let r = diff(&[&a, &a, p("--max-diff-pixels"), p("3"), p("--max-diff-ratio"), p("0.1")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot be used with"), "{}", r.stderr);
    let r = diff(&[&a, &a, p("--threshold"), p("1.5")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("expected a number from 0 to 1, not '1.5'"), "{}", r.stderr);
}

#[test]
fn junit_report_parses_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = png(&d.join("a.png"), 16, 16, &[]);
    let b = png(&d.join("b.png"), 16, 16, &[(1, 1, [0, 200, 0])]);
    let report = d.join("junit.xml");

    let r = diff(&[&a, &b, p("--junit"), &report]);
    assert_eq!(r.code, 1);
    let suite = junit::parse(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(
        (suite.suites, suite.tests.as_str(), suite.failures.as_str(), suite.errors.as_str()),
        (1, "1", "1", "0")
    );
    let case = &suite.cases[0];
    assert_eq!(case.name, format!("{} vs {}", a.display(), b.display()));
    assert_eq!(case.classname, "termsprawl.diff");
    assert_eq!(case.verdict.as_deref(), Some("failure"));
    assert_eq!(case.message.as_deref(), Some(r.stdout.trim_end()));

    let r = diff(&[&a, &a, p("--junit"), &report]);
    assert_eq!(r.code, 0);
    let suite = junit::parse(&std::fs::read_to_string(&report).unwrap());
    assert_eq!((suite.failures.as_str(), suite.errors.as_str()), ("0", "0"));
    assert_eq!(suite.cases[0].verdict, None);

    let r = diff(&[&a, &d.join("gone.png"), p("--junit"), &report]);
    assert_eq!(r.code, 2);
    let suite = junit::parse(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(suite.errors, "1");
    assert_eq!(suite.cases[0].verdict.as_deref(), Some("error"));
    assert!(suite.cases[0].message.as_deref().unwrap_or_default().ends_with("gone.png: no such file"));
}

#[test]
fn ignore_antialiasing_leaves_out_edge_pixels() {
    // A white band on dark grey with a one-pixel grey column on each side (its
    // anti-aliased edges); the second image changes the edges' shade: only
    // anti-aliasing changes.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let band = |shade: u8| -> Vec<(u32, u32, [u8; 3])> {
        let mut px = Vec::new();
        for y in 0..32 {
            for x in 8..24 {
                px.push((x, y, if x == 8 || x == 23 { [shade; 3] } else { [255; 3] }));
            }
        }
        px
    };
    let a = png(&d.join("a.png"), 32, 32, &band(120));
    let b = png(&d.join("b.png"), 32, 32, &band(190));
    let counted = diff(&[&a, &b]);
    assert_eq!(counted.code, 1);
    assert!(counted.stdout.starts_with("different: 64 of 1024 pixels"), "{}", counted.stdout);
    let out = d.join("aa.png");
    let ignored = diff(&[&a, &b, p("--ignore-antialiasing"), p("-o"), &out]);
    assert_eq!(ignored.code, 0, "{}", ignored.stdout);
    assert!(ignored.stdout.contains("64 anti-aliasing pixels ignored"), "{}", ignored.stdout);
    assert_eq!(rgba_at(&out, 8, 12), [255, 255, 0, 255], "anti-aliasing pixel yellow");
}
