//! How the app's own process uses glibc malloc: two arenas, large buffers
//! always mapped on their own, and free memory handed back to the kernel
//! every half minute.
//!
//! Why (issue 16, soak/README.md has the figures): under sustained soak load
//! the live heap of the Rust side stays flat (heaptrack: about 9 MiB from the
//! second minute on) while the app's RSS crept about 0.5-0.8 MiB/min. Most of
//! the creep was glibc holding freed memory: up to 8 arenas per core, one per
//! busy thread, each keeping what its thread freed, and a mmap threshold that
//! rises to the size of the largest buffer freed so far, after which
//! multi-MiB buffers (flood read-backs, screenshots) are carved from the
//! arenas and stay there. libcef allocates through the same glibc malloc
//! (`__libc_malloc`), so these settings cover it too. Chromium helpers are not
//! touched: they exec this binary but leave `main` through CEF before this
//! runs.

use std::time::Duration;

/// Arenas for all threads of the app; glibc's default is 8 per core.
pub const ARENA_MAX: i32 = 2;

/// Allocations of this size or more get their own mapping, unmapped on free
/// (glibc's own starting value, fixed: a set value stops it from rising).
pub const MMAP_THRESHOLD: i32 = 128 * 1024;

/// How often free memory inside the arenas is handed back.
pub const TRIM_EVERY: Duration = Duration::from_secs(30);

/// A malloc setting that glibc refused.
#[derive(Debug, thiserror::Error)]
#[error("glibc malloc refused {setting} = {value}")]
pub struct TuneError {
    /// The `mallopt` parameter.
    pub setting: &'static str,
    /// The value asked for.
    pub value: i32,
}

/// Applies [`ARENA_MAX`] and [`MMAP_THRESHOLD`]; call it early in `main`,
/// before threads start, so that no thread has taken an arena of its own yet.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn tune() -> Result<(), TuneError> {
    for (setting, param, value) in
        [("M_ARENA_MAX", libc::M_ARENA_MAX, ARENA_MAX), ("M_MMAP_THRESHOLD", libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD)]
    {
        // SAFETY: mallopt only changes glibc's allocator parameters; it is safe
        // to call at any time from any thread.
        if unsafe { libc::mallopt(param, value) } != 1 {
            return Err(TuneError { setting, value });
        }
    }
    Ok(())
}

/// Not glibc: nothing to tune.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tune() -> Result<(), TuneError> {
    Ok(())
}

/// Hands the free pages inside every arena back to the kernel; true when some were.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim() -> bool {
    // SAFETY: malloc_trim takes the arenas' locks itself; 0 keeps no extra pad.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Not glibc: nothing to trim.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() -> bool {
    false
}

/// Starts the thread that calls [`trim`] every [`TRIM_EVERY`] for the life of
/// the process (a few milliseconds each time; an idle app has little to give
/// back and the call finds that quickly). Start it after the stop signals are
/// blocked (runtime::stop_signals): it inherits the calling thread's mask.
pub fn spawn_trimmer() -> std::io::Result<()> {
    std::thread::Builder::new().name("malloc-trim".into()).spawn(|| loop {
        std::thread::sleep(TRIM_EVERY);
        trim();
    })?;
    Ok(())
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn glibc_takes_the_settings() {
        tune().expect("mallopt accepts both settings");
    }

    #[test]
    fn trim_hands_back_memory_freed_inside_an_arena() {
        // Many small blocks (under the mmap threshold) freed while one block
        // allocated after them is kept: the free space sits below the top of
        // the arena, where only malloc_trim can give it back.
        let blocks: Vec<Vec<u8>> = (0..4096).map(|i| vec![i as u8; 4000]).collect();
        let keep = vec![1u8; 4000];
        drop(blocks);
        assert!(trim(), "malloc_trim found ~16 MiB of freed pages to give back");
        assert_eq!(keep[0], 1);
    }
}
