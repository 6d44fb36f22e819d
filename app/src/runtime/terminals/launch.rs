//! Deciding what a terminal/agent node runs and starting it: the command
//! (the node's own, an artifact viewer, or the resolved agent CLI), the
//! identity environment, the launch hook's say, persistence (tmux or a
//! saved snapshot), then the [`PtySpawner`].
//!
//! [`prepare`] decides it all on the main thread against a [`LaunchSite`]:
//! what the runtime lends a launch (tmux, the hook, the spawner, the
//! callback host), so the same steps run in unit tests without a runtime or
//! a PTY; [`spawn_all`] then starts the PTYs of a whole sync side by side.

use super::agents::resolve_agent;
use super::artifact_views::artifact_command;
use super::hook::{LaunchDecision, PtyLaunch};
use super::nodes::LiveTerminal;
use super::snapshots::snapshot_path;
use super::spawner::{PtySpawner, SpawnSpec, Spawned};
use super::status::NotLaunched;
use crate::model::{AgentKind, ArtifactView, NodeId, ProjectId, Rect};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use terminal::persist;
use terminal::tmux::TmuxSession;
use terminal::{CommandSpec, Persistence, TermSize, TerminalConfig, TerminalHost};

/// What a terminal/agent node wants running.
pub(super) struct Wanted {
    pub(super) id: NodeId,
    pub(super) rect: Rect,
    pub(super) cwd: PathBuf,
    pub(super) command: Option<Vec<String>>,
    pub(super) agent: Option<AgentKind>,
    /// An artifact node's file, view and diff base (its command is chosen at launch).
    pub(super) artifact: Option<(PathBuf, ArtifactView, Option<String>)>,
    pub(super) session: String,
}

/// An environment variable lookup.
pub(super) type VarLookup = Box<dyn Fn(&str) -> Option<String>>;

/// The process environment a launch looks programs up in.
pub(super) struct LaunchEnv {
    /// The data directory (snapshots, agent preferences, the child's data-dir variable).
    pub(super) data_dir: PathBuf,
    /// PATH, where agent CLIs and artifact viewers are probed.
    pub(super) path_var: Option<OsString>,
    /// Variable lookup (an artifact viewer may be named by `$EDITOR` and the like).
    pub(super) var: VarLookup,
}

impl LaunchEnv {
    /// The app's own environment.
    pub(super) fn of_process(data_dir: PathBuf) -> Self {
        Self { data_dir, path_var: std::env::var_os("PATH"), var: Box::new(|v| std::env::var(v).ok()) }
    }
}

/// What the runtime lends a launch.
pub(super) trait LaunchSite {
    /// The tmux session node `id` runs in as session `name` (`None`: a plain PTY).
    fn tmux_session(&mut self, id: &NodeId, name: &str) -> Option<TmuxSession>;
    /// Whether `session` is already running (a launch re-attaches to it).
    fn session_running(&mut self, session: &TmuxSession) -> bool;
    /// The launch hook's decision (launch as is when none is installed).
    fn decide(&mut self, launch: &mut PtyLaunch) -> LaunchDecision;
    /// Where node `id`'s terminal reports.
    fn host(&self, id: &NodeId) -> Arc<dyn TerminalHost>;
}

/// How a launch ended.
pub(super) enum Started {
    /// Running.
    Live(Box<LiveTerminal>),
    /// The hook postponed it.
    Deferred,
    /// Not started, for a reason the node shows (and a notice says).
    NotLaunched {
        /// The notice.
        notice: String,
        /// The reason.
        why: NotLaunched,
    },
    /// The PTY did not start (the notice).
    Failed(String),
}

/// A program and its arguments (`None` for an empty command line).
fn command_spec(argv: &[String]) -> Option<CommandSpec> {
    argv.split_first().map(|(program, args)| CommandSpec { program: program.clone(), args: args.to_vec() })
}

/// A launch decided on the main thread, its PTY not started yet: what
/// [`Ready::spawn`] needs, on any thread.
pub(super) struct Ready {
    spec: SpawnSpec,
    host: Arc<dyn TerminalHost>,
    project: ProjectId,
    agent: Option<AgentKind>,
    agent_executable: Option<PathBuf>,
    warm: bool,
}

/// Where a launch stands after [`prepare`].
pub(super) enum Prepared {
    /// Everything decided; the PTY is to be started.
    Ready(Box<Ready>),
    /// Ended without a PTY (deferred, or not launched and why).
    Done(Started),
}

/// Starts every ready launch through [`PtySpawner::spawn_many`] (the real
/// spawner makes a restore's tmux sessions together and starts the PTYs side
/// by side) and answers each one's outcome with its node, in order.
/// Restoring a canvas of a hundred terminals one after another kept the
/// main thread in `tmux new-session` for seconds.
pub(super) fn spawn_all(ready: Vec<Ready>, spawner: &dyn PtySpawner) -> Vec<(NodeId, Started)> {
    let (batch, launched): (Vec<_>, Vec<_>) = ready.into_iter().map(Ready::split).unzip();
    launched.into_iter().zip(spawner.spawn_many(batch)).map(|(l, spawned)| l.outcome(spawned)).collect()
}

/// What a launch keeps while its PTY starts, to make a [`Started`] of the outcome.
struct Launched {
    node: NodeId,
    session: String,
    project: ProjectId,
    agent: Option<AgentKind>,
    agent_executable: Option<PathBuf>,
    warm: bool,
}

impl Launched {
    /// The node and how its start ended.
    fn outcome(self, spawned: Spawned) -> (NodeId, Started) {
        let Self { node, session, project, agent, agent_executable, warm } = self;
        let started = match spawned {
            Ok(term) => {
                tracing::debug!(node = %node, session = %session, warm, "terminal started");
                let mut live = LiveTerminal::started(term, project, session, agent, warm);
                live.agent_executable = agent_executable;
                Started::Live(Box::new(live))
            }
            Err(e) => Started::Failed(format!("terminal {node} did not start: {e}")),
        };
        (node, started)
    }
}

impl Ready {
    /// The node it is for.
    pub(super) fn node(&self) -> &NodeId {
        &self.spec.node
    }

    /// What the spawner starts, and what the launch keeps meanwhile.
    fn split(self) -> ((SpawnSpec, Arc<dyn TerminalHost>), Launched) {
        let Self { spec, host, project, agent, agent_executable, warm } = self;
        let launched =
            Launched { node: spec.node.clone(), session: spec.session.clone(), project, agent, agent_executable, warm };
        ((spec, host), launched)
    }
}

/// Decides everything about what `w` wants in a `size` terminal (command,
/// environment, the hook's say, persistence) without starting it.
pub(super) fn prepare(
    site: &mut dyn LaunchSite,
    w: Wanted,
    size: TermSize,
    project: &ProjectId,
    folder: &Path,
    env: &LaunchEnv,
) -> Prepared {
    let done = Prepared::Done;
    let data = &env.data_dir;
    let mut agent_executable = None;
    let mut command = w.command.as_deref().and_then(command_spec);
    if let Some((path, view, base)) = &w.artifact {
        match artifact_command(path, *view, base.as_deref(), &env.var, env.path_var.as_deref()) {
            Ok(argv) => command = command_spec(&argv),
            Err(why) => {
                return done(Started::NotLaunched {
                    notice: format!("artifact {}: {}", path.display(), why.message()),
                    why,
                })
            }
        }
    }
    // A missing login still asks the launch hook, which reports the agent's
    // integration status as needs-setup with how to log in; nothing is started.
    let mut needs_login = None;
    if let Some(kind) = w.agent {
        let prefs = crate::paths::agent_tools(data).join("preferences.json");
        match resolve_agent(kind, &prefs, env.path_var.as_deref(), &*env.var) {
            Ok((spec, exe)) => {
                command = Some(CommandSpec { program: exe.display().to_string(), args: spec.launch_args(None) });
                agent_executable = Some(exe);
            }
            Err(why @ NotLaunched::NeedsLogin { .. }) => needs_login = Some((kind, why)),
            Err(why) => {
                return done(Started::NotLaunched {
                    notice: format!("agent node {} ({kind}): {}", w.id, why.message()),
                    why,
                })
            }
        }
    }
    let tmux_session = site.tmux_session(&w.id, &w.session);
    let warm = tmux_session.as_ref().is_some_and(|s| site.session_running(s));
    let mut launch = PtyLaunch {
        node: w.id.clone(),
        project: project.clone(),
        project_folder: folder.to_path_buf(),
        agent: w.agent,
        agent_executable,
        command,
        env: vec![
            ("TERMSPRAWL_NODE_ID".into(), w.id.to_string()),
            ("TERMSPRAWL_PROJECT_ID".into(), project.to_string()),
            (crate::paths::DATA_DIR_ENV.into(), data.display().to_string()),
        ],
        warm,
    };
    // Tool-runtime integration point: credentials and first instructions for agent PTYs.
    match site.decide(&mut launch) {
        LaunchDecision::Launch => {}
        LaunchDecision::Defer => return done(Started::Deferred),
        LaunchDecision::Refuse(why) => {
            return done(Started::NotLaunched {
                notice: format!("node {} not launched: {why}", w.id),
                why: NotLaunched::Refused(why),
            })
        }
    }
    if let Some((kind, why)) = needs_login {
        return done(Started::NotLaunched { notice: format!("agent node {} ({kind}): {}", w.id, why.message()), why });
    }
    let mut config = TerminalConfig::new(w.cwd, size);
    config.command = launch.command;
    config.env = launch.env;
    config.persistence = match tmux_session {
        Some(s) => Persistence::Tmux(s.known_running(warm)),
        None => match persist::load_snapshot(&snapshot_path(data, &w.session)) {
            Ok(Some(bytes)) if !bytes.is_empty() => Persistence::Restore(bytes),
            Ok(_) => Persistence::None,
            Err(e) => {
                tracing::warn!(node = %w.id, "terminal snapshot not restored: {e}");
                Persistence::None
            }
        },
    };
    let host = site.host(&w.id);
    Prepared::Ready(Box::new(Ready {
        spec: SpawnSpec { node: w.id, session: w.session, config },
        host,
        project: project.clone(),
        agent: w.agent,
        agent_executable: launch.agent_executable,
        warm,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::agents::fake_executable;
    use super::super::spawner::RecordingSpawner;
    use super::*;
    use terminal::ExitStatus;

    struct Quiet;
    impl TerminalHost for Quiet {
        fn wakeup(&self) {}
        fn title_changed(&self, _: Option<String>) {}
        fn bell(&self) {}
        fn clipboard_store(&self, _: String) {}
        fn exited(&self, _: ExitStatus) {}
    }

    type Hook = Box<dyn FnMut(&mut PtyLaunch) -> LaunchDecision>;

    /// A site without tmux whose spawner records what would start.
    struct TestSite {
        spawner: Arc<RecordingSpawner>,
        hook: Option<Hook>,
        asked: Vec<PtyLaunch>,
    }

    impl TestSite {
        fn new(hook: Option<Hook>) -> Self {
            Self { spawner: Arc::default(), hook, asked: vec![] }
        }
        fn specs(&self) -> Vec<SpawnSpec> {
            self.spawner.specs.lock().unwrap().clone()
        }
    }

    impl LaunchSite for TestSite {
        fn tmux_session(&mut self, _: &NodeId, _: &str) -> Option<TmuxSession> {
            None
        }
        fn session_running(&mut self, _: &TmuxSession) -> bool {
            false
        }
        fn decide(&mut self, launch: &mut PtyLaunch) -> LaunchDecision {
            let decision = self.hook.as_mut().map_or(LaunchDecision::Launch, |hook| hook(launch));
            self.asked.push(launch.clone());
            decision
        }
        fn host(&self, _: &NodeId) -> Arc<dyn TerminalHost> {
            Arc::new(Quiet)
        }
    }

    /// [`prepare`], then [`spawn_all`] on the site's spawner: one launch start to end.
    fn start(
        site: &mut TestSite,
        w: Wanted,
        size: TermSize,
        project: &ProjectId,
        folder: &Path,
        env: &LaunchEnv,
    ) -> Started {
        let spawner = site.spawner.clone();
        match prepare(site, w, size, project, folder, env) {
            Prepared::Ready(ready) => match spawn_all(vec![*ready], &*spawner).pop() {
                Some((_, started)) => started,
                None => panic!("spawn_all answered nothing"),
            },
            Prepared::Done(started) => started,
        }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        folder: PathBuf,
        bin: PathBuf,
        env: LaunchEnv,
        project: ProjectId,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("project");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let env = LaunchEnv {
            data_dir: dir.path().join("data"),
            path_var: Some(bin.clone().into_os_string()),
            var: Box::new(|_| None),
        };
        Fixture { _dir: dir, folder, bin, env, project: ProjectId::new("proj-1").unwrap() }
    }

    fn wanted(f: &Fixture, id: &str, command: Option<&[&str]>, agent: Option<AgentKind>) -> Wanted {
        let id = NodeId::new(id).unwrap();
        Wanted {
            session: super::super::naming::session_name(&f.folder, &id),
            id,
            rect: Rect::new(0.0, 0.0, 400.0, 300.0),
            cwd: f.folder.clone(),
            command: command.map(|c| c.iter().map(|s| s.to_string()).collect()),
            agent,
            artifact: None,
        }
    }

    const SIZE: TermSize = TermSize { cols: 80, rows: 24, cell_width: 8, cell_height: 17 };

    fn identity(f: &Fixture, node: &str) -> Vec<(String, String)> {
        vec![
            ("TERMSPRAWL_NODE_ID".into(), node.into()),
            ("TERMSPRAWL_PROJECT_ID".into(), "proj-1".into()),
            (crate::paths::DATA_DIR_ENV.into(), f.env.data_dir.display().to_string()),
        ]
    }

    #[test]
    fn a_terminal_node_spawns_its_command_with_its_identity_and_snapshot() {
        let f = fixture();
        let mut site = TestSite::new(None);
        let w = wanted(&f, "term-1", Some(&["bash", "-c", "echo hi"]), None);
        let session = w.session.clone();
        let started = start(&mut site, w, SIZE, &f.project, &f.folder, &f.env);
        assert!(matches!(&started, Started::Failed(msg) if msg.starts_with("terminal term-1 did not start: ")));
        let specs = site.specs();
        let [spec] = specs.as_slice() else { panic!("{specs:?}") };
        assert_eq!((spec.node.as_str(), spec.session.as_str()), ("term-1", session.as_str()));
        let c = &spec.config;
        assert_eq!(c.command, Some(CommandSpec { program: "bash".into(), args: vec!["-c".into(), "echo hi".into()] }));
        assert_eq!((c.cwd.as_path(), c.size), (f.folder.as_path(), SIZE));
        assert_eq!(c.env, identity(&f, "term-1"));
        assert!(matches!(c.persistence, Persistence::None), "no snapshot yet");
        assert_eq!(site.asked.len(), 1, "the hook sees plain terminals too");
        assert_eq!((site.asked[0].agent, &site.asked[0].agent_executable, site.asked[0].warm), (None, &None, false));

        // An empty command line runs the user's shell; a saved snapshot is replayed.
        let w = wanted(&f, "term-2", Some(&[]), None);
        let snapshot = snapshot_path(&f.env.data_dir, &w.session);
        std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        std::fs::write(&snapshot, b"old screen\r\n").unwrap();
        start(&mut site, w, SIZE, &f.project, &f.folder, &f.env);
        let spec = site.specs().pop().unwrap();
        assert_eq!(spec.config.command, None);
        assert!(matches!(&spec.config.persistence, Persistence::Restore(b) if b == b"old screen\r\n"));
    }

    /// Starts fakes, recording each batch it was handed; refuses node `t-3`.
    #[derive(Default)]
    struct Batching {
        inner: RecordingSpawner,
        batches: std::sync::Mutex<Vec<usize>>,
    }

    impl PtySpawner for Batching {
        fn spawn(
            &self,
            spec: SpawnSpec,
            host: Arc<dyn TerminalHost>,
        ) -> Result<Box<dyn terminal::RunningTerminal>, terminal::TerminalError> {
            if spec.node.as_str() == "t-3" {
                return Err(terminal::TerminalError::OpenPty("no PTY for t-3".into()));
            }
            self.inner.spawn(spec, host)
        }

        fn spawn_many(&self, batch: Vec<(SpawnSpec, Arc<dyn TerminalHost>)>) -> Vec<Spawned> {
            self.batches.lock().unwrap().push(batch.len());
            // Answered in order, as the trait asks: reversed starts must still match up.
            let mut out: Vec<Spawned> = batch.into_iter().rev().map(|(spec, host)| self.spawn(spec, host)).collect();
            out.reverse();
            out
        }
    }

    #[test]
    fn a_sync_pass_hands_its_terminals_to_the_spawner_as_one_batch_each_matched_to_its_node() {
        let f = fixture();
        let mut site = TestSite::new(None);
        let spawner = Batching { inner: RecordingSpawner::starting(), ..Default::default() };
        let ready: Vec<Ready> = (0..20)
            .map(|i| {
                match prepare(&mut site, wanted(&f, &format!("t-{i}"), None, None), SIZE, &f.project, &f.folder, &f.env)
                {
                    Prepared::Ready(r) => *r,
                    Prepared::Done(_) => panic!("t-{i} not ready"),
                }
            })
            .collect();
        assert!(site.specs().is_empty(), "prepare starts nothing");
        let started = spawn_all(ready, &spawner);
        assert_eq!(*spawner.batches.lock().unwrap(), vec![20], "one batch");
        let nodes: Vec<String> = started.iter().map(|(id, _)| id.to_string()).collect();
        assert_eq!(nodes, (0..20).map(|i| format!("t-{i}")).collect::<Vec<_>>());
        for (id, s) in &started {
            match (id.as_str(), s) {
                ("t-3", Started::Failed(notice)) => assert!(notice.contains("no PTY for t-3"), "{notice}"),
                ("t-3", _) => panic!("t-3 should have failed"),
                (_, Started::Live(live)) => {
                    assert_eq!(live.session, super::super::naming::session_name(&f.folder, id))
                }
                (id, _) => panic!("{id} did not start"),
            }
        }
        assert_eq!(spawner.inner.specs().len(), 19, "each started once");
        assert!(spawn_all(vec![], &spawner).is_empty());
    }

    #[test]
    fn an_agent_node_runs_its_resolved_cli_as_the_launch_hook_prepared_it() {
        let f = fixture();
        let exe = fake_executable(&f.bin, "codex");
        let want_exe = exe.clone();
        let hook: Hook = Box::new(move |launch| {
            assert_eq!(launch.agent, Some(AgentKind::Codex));
            assert_eq!(launch.agent_executable.as_deref(), Some(want_exe.as_path()));
            assert_eq!(launch.command.as_ref().map(|c| c.program.clone()), Some(want_exe.display().to_string()));
            launch.env.push(("TERMSPRAWL_TOOL_URL".into(), "http://127.0.0.1:1/mcp".into()));
            if let Some(c) = launch.command.as_mut() {
                c.args.push("first instruction".into());
            }
            LaunchDecision::Launch
        });
        let mut site = TestSite::new(Some(hook));
        let w = wanted(&f, "agent-1", None, Some(AgentKind::Codex));
        start(&mut site, w, SIZE, &f.project, &f.folder, &f.env);
        let spec = site.specs().pop().expect("spawned");
        assert_eq!(
            spec.config.command,
            Some(CommandSpec { program: exe.display().to_string(), args: vec!["first instruction".into()] })
        );
        let mut env = identity(&f, "agent-1");
        env.push(("TERMSPRAWL_TOOL_URL".into(), "http://127.0.0.1:1/mcp".into()));
        assert_eq!(spec.config.env, env);
    }

    #[test]
    fn a_refused_or_deferred_launch_starts_nothing() {
        let f = fixture();
        fake_executable(&f.bin, "codex");
        let mut site = TestSite::new(Some(Box::new(|_| LaunchDecision::Refuse("tool server is off".into()))));
        let w = wanted(&f, "agent-1", None, Some(AgentKind::Codex));
        match start(&mut site, w, SIZE, &f.project, &f.folder, &f.env) {
            Started::NotLaunched { notice, why } => {
                assert_eq!(notice, "node agent-1 not launched: tool server is off");
                assert_eq!(why, NotLaunched::Refused("tool server is off".into()));
            }
            _ => panic!("not refused"),
        }
        let mut deferring = TestSite::new(Some(Box::new(|_| LaunchDecision::Defer)));
        let w = wanted(&f, "agent-2", None, Some(AgentKind::Codex));
        assert!(matches!(start(&mut deferring, w, SIZE, &f.project, &f.folder, &f.env), Started::Deferred));
        assert!(site.specs().is_empty() && deferring.specs().is_empty());
    }

    #[test]
    fn a_missing_agent_cli_is_not_launched_before_the_hook_is_asked() {
        let f = fixture();
        let mut site = TestSite::new(None);
        let w = wanted(&f, "agent-1", None, Some(AgentKind::Gemini));
        match start(&mut site, w, SIZE, &f.project, &f.folder, &f.env) {
            Started::NotLaunched { notice, why: NotLaunched::NeedsSetup { looked_for } } => {
                assert_eq!(looked_for, "gemini");
                assert!(notice.starts_with("agent node agent-1 (gemini): needs setup"), "{notice}");
            }
            _ => panic!("launched without its CLI"),
        }
        assert!(site.asked.is_empty() && site.specs().is_empty());
    }

    #[test]
    fn an_agent_cli_without_its_login_is_not_launched_and_says_how_to_log_in() {
        let mut f = fixture();
        fake_executable(&f.bin, "claude");
        let home = f.folder.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let home_var = home.display().to_string();
        f.env.var = Box::new(move |v| (v == "HOME").then(|| home_var.clone()));
        let mut site = TestSite::new(None);
        let w = wanted(&f, "agent-1", None, Some(AgentKind::Claude));
        match start(&mut site, w, SIZE, &f.project, &f.folder, &f.env) {
            Started::NotLaunched { notice, why: why @ NotLaunched::NeedsLogin { .. } } => {
                assert!(
                    notice.starts_with("agent node agent-1 (claude): needs setup: claude is not logged in"),
                    "{notice}"
                );
                assert!(why.message().contains("`claude /login`"), "{}", why.message());
            }
            _ => panic!("launched without a login"),
        }
        assert_eq!(site.asked.len(), 1, "the hook is asked, to report the integration status");
        assert!(site.specs().is_empty());
        // `claude /login` leaves its credentials file: then it starts.
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(home.join(".claude/.credentials.json"), "{}").unwrap();
        let w = wanted(&f, "agent-1", None, Some(AgentKind::Claude));
        start(&mut site, w, SIZE, &f.project, &f.folder, &f.env);
        assert_eq!(site.specs().len(), 1, "spawned once logged in");
    }
}
