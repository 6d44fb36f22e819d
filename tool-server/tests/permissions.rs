//! File modes under a wide-open umask. The umask is process-wide, so this
//! test lives alone in its own test binary.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::{mode, FakeHost};
use rustix::fs::Mode;
use tool_server::{IntegrationState, IntegrationStatus, ToolIdentity, ToolServer};

#[test]
fn private_state_stays_private_under_umask_000() {
    let previous = rustix::process::umask(Mode::empty());
    let dir = tempfile::tempdir().unwrap();
    // A pre-existing, too-open agent-tools directory is tightened too.
    let tools = dir.path().join("agent-tools");
    fs::create_dir(&tools).unwrap();
    fs::set_permissions(&tools, fs::Permissions::from_mode(0o777)).unwrap();

    let mut server = ToolServer::start(dir.path(), FakeHost::new()).unwrap();
    server
        .provision(ToolIdentity::new("agent-1", "p"), IntegrationStatus::new(IntegrationState::Ready), false)
        .unwrap();
    let checks = [
        (tools.clone(), 0o700),
        (tools.join("sessions"), 0o700),
        (tools.join("sessions/agent-1.json"), 0o600),
        (tools.join("endpoint.json"), 0o600),
        (tools.join("server.lock"), 0o600),
    ];
    for (path, expected) in &checks {
        assert_eq!(mode(path), *expected, "{}", path.display());
    }
    // Rewrites keep the mode too.
    server
        .set_status("agent-1", IntegrationStatus::with_detail(IntegrationState::NeedsSetup, "install the CLI"))
        .unwrap();
    assert_eq!(mode(&tools.join("sessions/agent-1.json")), 0o600);
    server.close().unwrap();
    rustix::process::umask(previous);
}
