//! Autosave survives `kill -9`: a child process (this test binary re-run in
//! "child mode") autosaves a growing layout in a loop; the parent kills it
//! with SIGKILL at random moments, several times, and checks each time that
//! canvas.json parses and is exactly one of the states the child wrote —
//! never truncated or mixed.

use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use termsprawl::model::autosave::{Autosaver, DebouncePolicy};
use termsprawl::model::persist::{encode_layout, layout_path, load_project};
use termsprawl::model::{Camera, Node, NodeId, NodeKind, Project, ProjectId, Rect};

/// Set (to the project folder) in the child's environment.
const CHILD_ENV: &str = "TERMSPRAWL_MODEL_AUTOSAVE_CHILD";
/// Printed by the child once its first state is on disk.
const READY: &str = "MODEL-AUTOSAVE-CHILD-READY";
/// Name of the child-mode entry point below.
const CHILD_TEST: &str = "autosave_child";
/// Kills per test run.
const ROUNDS: usize = 20;

/// The layout of generation `gen`: a "meta" sticky holding the generation
/// and 1-40 stickies of about 1 KiB each, so a torn write cannot look whole.
fn state(folder: &Path, gen: u64) -> Project {
    let sticky = |id: String, text: String, i: u64| Node {
        id: NodeId::new(id).unwrap(),
        kind: NodeKind::Sticky { text },
        title: format!("node {i}"),
        rect: Rect::new(i as f64 * 130.0, (gen % 7) as f64 * 90.0, 120.0, 80.0),
        z: i as i64,
        colour: None,
        name: None,
        links: Default::default(),
    };
    let mut nodes = vec![sticky("meta".into(), gen.to_string(), 0)];
    for i in 0..(1 + gen % 40) {
        nodes.push(sticky(format!("s{i:03}"), format!("generation {gen}, node {i}; ").repeat(40), i + 1));
    }
    Project::from_nodes(ProjectId::new("p").unwrap(), "p", folder, Camera::default(), nodes, 0).unwrap().0
}

/// The generation stored in the folder's layout, if there is one. Panics
/// if the layout is unreadable, torn, or not exactly a state we produce.
fn stored_generation(folder: &Path) -> Option<u64> {
    let bytes = match fs::read(layout_path(folder)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("reading the layout: {e}"),
    };
    let loaded = load_project(ProjectId::new("p").unwrap(), "p", folder, Camera::default(), None).unwrap();
    assert!(loaded.recovery.is_none(), "layout was unreadable: {:?}", loaded.recovery);
    let meta = loaded.project.node(&NodeId::new("meta").unwrap()).expect("meta node");
    let NodeKind::Sticky { text } = &meta.kind else { panic!("meta is not a sticky") };
    let gen: u64 = text.parse().expect("generation number");
    assert_eq!(bytes, encode_layout(&state(folder, gen), None).unwrap(), "layout is not exactly generation {gen}");
    Some(gen)
}

fn random_below(n: u64) -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(n);
    h.finish() % n
}

/// Child mode: autosave generation after generation until killed. A no-op
/// unless started by the parent test (hence ignored in ordinary runs).
#[test]
#[ignore = "child process of kill_9_never_leaves_a_torn_layout"]
fn autosave_child() {
    let Some(folder) = std::env::var_os(CHILD_ENV).map(PathBuf::from) else { return };
    let first = stored_generation(&folder).map_or(0, |g| g + 1);
    let saver =
        Autosaver::spawn(DebouncePolicy { quiet: Duration::from_millis(1), max_delay: Duration::from_millis(3) })
            .unwrap();
    saver.submit_layout(&state(&folder, first), None).unwrap();
    assert!(saver.flush().unwrap().is_empty());
    let mut out = std::io::stdout();
    // On a line of its own: libtest has already printed "test ... " without a newline.
    writeln!(out, "\n{READY}").unwrap();
    out.flush().unwrap();
    // Bounded, so an orphaned child (parent gone) stops by itself.
    for gen in first + 1..first + 50_000 {
        saver.submit_layout(&state(&folder, gen), None).unwrap();
        if gen % 8 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn kill_9_never_leaves_a_torn_layout() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path();
    let exe = std::env::current_exe().unwrap();
    let mut last: Option<u64> = None;
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args([CHILD_TEST, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, folder)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let ready = BufReader::new(stdout).lines().map_while(Result::ok).any(|l| l.contains(READY));
        assert!(ready, "round {round}: the child exited before writing its first state");
        std::thread::sleep(Duration::from_millis(random_below(40)));
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(!status.success(), "round {round}: the child finished instead of being killed");

        let gen = stored_generation(folder).expect("a layout after the child's first flush");
        if let Some(prev) = last {
            assert!(gen > prev, "round {round}: generation {gen} after {prev}: an older state came back");
        }
        last = Some(gen);
    }
    let leftovers: Vec<_> = fs::read_dir(folder.join(".termsprawl"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "canvas.json")
        .collect();
    assert!(leftovers.iter().all(|n| !n.contains("corrupt")), "{leftovers:?}");
}
