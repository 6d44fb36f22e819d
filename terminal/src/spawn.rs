//! Starting the tmux processes of a terminal without copying the app's
//! address space.
//!
//! `std::process::Command` forks whenever a `pre_exec` hook is set, and both
//! tmux launches need one: the command that may start the tmux server must
//! close every inherited descriptor (the server is a daemon that outlives the
//! app), and the client on the PTY must lead a new session with the PTY as its
//! controlling terminal (or it never gets SIGWINCH). Forking an app with CEF
//! loaded copies some two thousand mappings and their page tables, and the
//! child unmaps them all again at exec: measured with `perf record -a` over a
//! restore of 100 terminals, that was a quarter of all CPU time. glibc's
//! `posix_spawn` shares the address space until exec (`CLONE_VM|CLONE_VFORK`)
//! and does all of it itself: `POSIX_SPAWN_SETSID`, then the file actions in
//! order (opening the PTY after `setsid` makes it the controlling terminal),
//! `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34) for the rest.
//! Written here by hand because no crate wraps `addclosefrom_np`
//! (nix's spawn module has no close-from, and std's has no hook at all).

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use portable_pty::{Child, ChildKiller};

/// The environment of a child: this process's, less `remove`, with `set`
/// applied in order (a later pair wins).
pub(crate) fn child_env(remove: &[&str], set: &[(String, String)]) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> =
        std::env::vars_os().filter(|(k, _)| !remove.iter().any(|r| OsStr::new(r) == k)).collect();
    for (key, value) in set {
        env.retain(|(k, _)| k != OsStr::new(key));
        env.push((key.into(), value.into()));
    }
    env
}

/// A process started by [`on_terminal`]: waited for and signalled by pid.
#[derive(Debug)]
pub(crate) struct SpawnedChild {
    pid: libc::pid_t,
    /// Set once the child is reaped, so no signal goes to a reused pid.
    reaped: Arc<AtomicBool>,
}

/// Sends SIGHUP to a [`SpawnedChild`] until it is reaped.
#[derive(Debug)]
struct Hangup {
    pid: libc::pid_t,
    reaped: Arc<AtomicBool>,
}

impl ChildKiller for Hangup {
    fn kill(&mut self) -> io::Result<()> {
        signal(self.pid, &self.reaped, libc::SIGHUP)
    }

    fn clone_killer(&self) -> Box<dyn ChildKiller + Send + Sync> {
        Box::new(Hangup { pid: self.pid, reaped: self.reaped.clone() })
    }
}

impl ChildKiller for SpawnedChild {
    /// SIGHUP, a grace of 200 ms, then SIGKILL (as portable-pty's own children).
    fn kill(&mut self) -> io::Result<()> {
        signal(self.pid, &self.reaped, libc::SIGHUP)?;
        for _ in 0..4 {
            if self.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal(self.pid, &self.reaped, libc::SIGKILL)
    }

    fn clone_killer(&self) -> Box<dyn ChildKiller + Send + Sync> {
        Box::new(Hangup { pid: self.pid, reaped: self.reaped.clone() })
    }
}

impl Child for SpawnedChild {
    fn try_wait(&mut self) -> io::Result<Option<portable_pty::ExitStatus>> {
        Ok(reap(self.pid, &self.reaped, libc::WNOHANG)?.map(Into::into))
    }

    fn wait(&mut self) -> io::Result<portable_pty::ExitStatus> {
        loop {
            if let Some(status) = reap(self.pid, &self.reaped, 0)? {
                return Ok(status.into());
            }
        }
    }

    fn process_id(&self) -> Option<u32> {
        u32::try_from(self.pid).ok()
    }
}

fn signal(pid: libc::pid_t, reaped: &AtomicBool, signal: libc::c_int) -> io::Result<()> {
    if reaped.load(Ordering::Acquire) {
        return Ok(());
    }
    // SAFETY: kill has no memory effects; the pid is our unreaped child.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `waitpid` with `flags`, retried on EINTR; `None` when WNOHANG found it running.
fn reap(pid: libc::pid_t, reaped: &AtomicBool, flags: libc::c_int) -> io::Result<Option<std::process::ExitStatus>> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid out pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r == pid {
            reaped.store(true, Ordering::Release);
            return Ok(Some(std::process::ExitStatus::from_raw(status)));
        }
        if r == 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Starts `program` in a new session whose controlling terminal is `tty` (all
/// three standard streams on it), in `cwd`, with exactly `env`, every signal at
/// its default and none blocked, and no other descriptor of this process.
pub(crate) fn on_terminal(
    program: &OsStr,
    args: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
    tty: &Path,
) -> io::Result<SpawnedChild> {
    let tty = cstring(tty.as_os_str())?;
    let pid = spawn(program, args, env, Some(cwd), libc::POSIX_SPAWN_SETSID, |actions| {
        // SAFETY: `actions` is initialised; the strings outlive the spawn.
        unsafe {
            check(libc::posix_spawn_file_actions_addopen(actions, 0, tty.as_ptr(), libc::O_RDWR, 0))?;
            check(libc::posix_spawn_file_actions_adddup2(actions, 0, 1))?;
            check(libc::posix_spawn_file_actions_adddup2(actions, 0, 2))
        }
    })?;
    Ok(SpawnedChild { pid, reaped: Arc::new(AtomicBool::new(false)) })
}

/// Runs `program` to its end with stdin and stdout on /dev/null, no other
/// descriptor of this process, and exactly `env`; answers its status and what
/// it wrote to stderr.
pub(crate) fn run_capturing_stderr(
    program: &OsStr,
    args: &[OsString],
    env: &[(OsString, OsString)],
) -> io::Result<(std::process::ExitStatus, Vec<u8>)> {
    let null = c"/dev/null";
    let (read_end, write_end) = pipe()?;
    let write_fd = std::os::fd::AsRawFd::as_raw_fd(&write_end);
    let pid = spawn(program, args, env, None, 0, |actions| {
        // SAFETY: `actions` is initialised; the pipe's write end is open until the spawn returns.
        unsafe {
            check(libc::posix_spawn_file_actions_addopen(actions, 0, null.as_ptr(), libc::O_RDONLY, 0))?;
            check(libc::posix_spawn_file_actions_addopen(actions, 1, null.as_ptr(), libc::O_WRONLY, 0))?;
            check(libc::posix_spawn_file_actions_adddup2(actions, write_fd, 2))
        }
    });
    drop(write_end);
    let pid = pid?;
    let mut stderr = Vec::new();
    let read = File::from(read_end).read_to_end(&mut stderr);
    let reaped = AtomicBool::new(false);
    let status = loop {
        if let Some(status) = reap(pid, &reaped, 0)? {
            break status;
        }
    };
    read?;
    Ok((status, stderr))
}

/// A pipe, both ends close-on-exec (the child's stderr is a dup2 of one).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-int out array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just opened both descriptors; nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn check(code: libc::c_int) -> io::Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(code))
    }
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "contains NUL"))
}

/// `program` as a path: itself when it names one, else the first executable
/// of that name on the child's PATH (this process's when `env` sets none).
fn resolve(program: &OsStr, env: &[(OsString, OsString)]) -> io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("{} not found on PATH", Path::new(program).display()))
        })
}

/// posix_spawn with `flags`, the streams `streams` sets up, then `chdir(cwd)`,
/// every other descriptor closed, all signals default and unblocked.
fn spawn(
    program: &OsStr,
    args: &[OsString],
    env: &[(OsString, OsString)],
    cwd: Option<&Path>,
    flags: libc::c_short,
    streams: impl FnOnce(*mut libc::posix_spawn_file_actions_t) -> io::Result<()>,
) -> io::Result<libc::pid_t> {
    let path = cstring(resolve(program, env)?.as_os_str())?;
    let argv: Vec<CString> =
        std::iter::once(program).chain(args.iter().map(OsString::as_os_str)).map(cstring).collect::<Result<_, _>>()?;
    let envp: Vec<CString> = env
        .iter()
        .map(|(k, v)| {
            let mut pair = k.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(v.as_bytes());
            CString::new(pair).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "environment contains NUL"))
        })
        .collect::<Result<_, _>>()?;
    let cwd = cwd.map(|c| cstring(c.as_os_str())).transpose()?;
    let mut argv_ptrs: Vec<*mut libc::c_char> = argv.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv_ptrs.push(std::ptr::null_mut());
    let mut envp_ptrs: Vec<*mut libc::c_char> = envp.iter().map(|a| a.as_ptr().cast_mut()).collect();
    envp_ptrs.push(std::ptr::null_mut());

    let mut actions = std::mem::MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
    let mut attr = std::mem::MaybeUninit::<libc::posix_spawnattr_t>::uninit();
    // SAFETY: each init is paired with its destroy below, on every path; the
    // pointers handed to posix_spawn point into vectors alive until it returns.
    unsafe {
        check(libc::posix_spawn_file_actions_init(actions.as_mut_ptr()))?;
        if let Err(e) = check(libc::posix_spawnattr_init(attr.as_mut_ptr())) {
            libc::posix_spawn_file_actions_destroy(actions.as_mut_ptr());
            return Err(e);
        }
        let result = (|| {
            streams(actions.as_mut_ptr())?;
            if let Some(cwd) = &cwd {
                check(libc::posix_spawn_file_actions_addchdir_np(actions.as_mut_ptr(), cwd.as_ptr()))?;
            }
            check(libc::posix_spawn_file_actions_addclosefrom_np(actions.as_mut_ptr(), 3))?;
            let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigfillset(all.as_mut_ptr());
            check(libc::posix_spawnattr_setsigdefault(attr.as_mut_ptr(), all.as_ptr()))?;
            let mut none = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(none.as_mut_ptr());
            check(libc::posix_spawnattr_setsigmask(attr.as_mut_ptr(), none.as_ptr()))?;
            let all_flags = flags | (libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK) as libc::c_short;
            check(libc::posix_spawnattr_setflags(attr.as_mut_ptr(), all_flags))?;
            let mut pid = 0;
            check(libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                actions.as_ptr(),
                attr.as_ptr(),
                argv_ptrs.as_ptr(),
                envp_ptrs.as_ptr(),
            ))?;
            Ok(pid)
        })();
        libc::posix_spawnattr_destroy(attr.as_mut_ptr());
        libc::posix_spawn_file_actions_destroy(actions.as_mut_ptr());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<OsString> {
        vec!["-c".into(), script.into()]
    }

    #[test]
    fn a_child_gets_exactly_its_environment_and_no_inherited_descriptor() {
        // A descriptor this process holds open without close-on-exec.
        let file = tempfile::tempfile().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        // SAFETY: clearing FD_CLOEXEC on our own open descriptor.
        unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
        let env = child_env(&["HOME"], &[("TS_SPAWN_TEST".into(), "yes".into())]);
        let script = format!(
            "[ -e /proc/self/fd/{fd} ] && echo leaked >&2; echo \"$TS_SPAWN_TEST:${{HOME-unset}}\" >&2; exit 3"
        );
        let (status, err) = run_capturing_stderr(OsStr::new("sh"), &sh(&script), &env).unwrap();
        assert_eq!(status.code(), Some(3));
        assert_eq!(String::from_utf8_lossy(&err), "yes:unset\n");
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let env = child_env(&[], &[("PATH".into(), "/nonexistent".into())]);
        let e = run_capturing_stderr(OsStr::new("sh"), &[], &env).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("sh not found on PATH"), "{e}");
    }

    #[test]
    fn a_child_on_a_terminal_leads_its_session_with_it_as_controlling_terminal() {
        let pty = portable_pty::native_pty_system().openpty(portable_pty::PtySize::default()).unwrap();
        let tty = pty.master.tty_name().unwrap();
        let mut reader = pty.master.try_clone_reader().unwrap();
        let dir = tempfile::tempdir().unwrap();
        // Ignored here, SIGINT must be back at its default in the child.
        // SAFETY: setting a disposition to SIG_IGN and back, no handler involved.
        let old = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
        let script = "read -r pid comm state ppid pgrp sid tty tpgid rest </proc/$$/stat; echo $sid $tpgid $pid; tty; pwd; grep SigIgn /proc/self/status";
        let child = on_terminal(OsStr::new("sh"), &sh(script), &child_env(&[], &[]), dir.path(), &tty);
        // SAFETY: as above.
        unsafe { libc::signal(libc::SIGINT, old) };
        let mut child = child.unwrap();
        drop(pty.slave);
        let status = child.wait().unwrap();
        assert!(status.success(), "{status:?}");
        let mut out = Vec::new();
        let _ = reader.read_to_end(&mut out); // EIO at the end of a PTY's output
        let out = String::from_utf8_lossy(&out).replace('\r', "");
        let mut lines = out.lines();
        let ids: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
        let pid = child.process_id().unwrap().to_string();
        // Its own session, and the terminal's foreground group: it is the controlling terminal.
        assert_eq!(ids, [pid.as_str(), pid.as_str(), pid.as_str()], "{out}");
        assert_eq!(lines.next(), Some(tty.to_str().unwrap()), "{out}");
        assert_eq!(lines.next(), Some(dir.path().canonicalize().unwrap().to_str().unwrap()), "{out}");
        // None of the standard signals is ignored (glibc's spawn leaves its own
        // internal signals 32 and 33 ignored, as for every std::process::Command).
        let ignored = lines.next().and_then(|l| l.strip_prefix("SigIgn:\t")).unwrap_or_default();
        let ignored = u64::from_str_radix(ignored, 16).unwrap_or(u64::MAX);
        assert_eq!(ignored & 0x7fff_ffff, 0, "{out}");
        // Reaped: a late hangup signals nobody.
        assert!(child.clone_killer().kill().is_ok());
    }
}
