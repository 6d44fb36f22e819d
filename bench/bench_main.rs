//! What the engine-driving benchmark binaries share (`canvas-bench`,
//! `scale-bench`): the entry point that serves Chromium's helper processes and
//! sets up logging, the exit with the error printed, and median/p99.

use std::process::ExitCode;

/// Runs `bench` as the binary's main, unless this process is one of Chromium's
/// helpers (then it runs that and exits with its code); an error is printed
/// after the binary's `name` and fails the run.
pub fn run(name: &str, bench: impl FnOnce(&[String]) -> anyhow::Result<()>) -> ExitCode {
    if let Some(code) = cef_bridge::run_subprocess_if_child() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .try_init();
    let args: Vec<String> = std::env::args().collect();
    match bench(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Median and 99th percentile of `v` (not empty).
pub fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.99))
}
