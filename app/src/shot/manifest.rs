//! A shot manifest (YAML, or JSON for a `.json` file): top-level `defaults`
//! and a list of `shots`, each a page `url` or a saved `canvas` with its
//! `output` and options. The whole file is checked before anything starts;
//! an error names the entry (`shots[2]`, with its output or URL) and the field.
//! Relative paths (output, canvas, compare) are relative to the manifest's folder.

use super::compare::{CompareLimits, CompareSpec};
use super::prepare::{Animations, Caret, ColorScheme, Prepare, Scale, DEFAULT_MASK_COLOR};
use super::request::{ShotRequest, Size, Target, WaitFor};
use cef_bridge::url_policy;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Why a manifest was refused.
#[derive(Debug, Error)]
pub enum ManifestError {
    /// The file could not be read.
    #[error("cannot read manifest {path}: {source}")]
    Read {
        /// The manifest.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// Not YAML/JSON of the manifest's shape.
    #[error("manifest {path}: {message}")]
    Syntax {
        /// The manifest.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A field of an entry (or of `defaults`) is wrong.
    #[error("manifest {entry}: field '{field}': {message}")]
    Field {
        /// `shots[N] (output …)` or `defaults`.
        entry: String,
        /// The field's name (a path such as `hide[1]` inside lists).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// No shots at all.
    #[error("manifest {0} lists no shots")]
    Empty(PathBuf),
}

/// A string or a list of strings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
enum Selectors {
    One(String),
    Many(Vec<String>),
}

impl Selectors {
    fn into_vec(self) -> Vec<String> {
        match self {
            Selectors::One(s) => vec![s],
            Selectors::Many(v) => v,
        }
    }
}

/// One entry as written (and `defaults`, whose fields every entry inherits
/// unless it sets them).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EntrySpec {
    url: Option<String>,
    canvas: Option<PathBuf>,
    output: Option<PathBuf>,
    size: Option<Size>,
    wait: Option<WaitFor>,
    selector: Option<String>,
    full_page: Option<bool>,
    color_scheme: Option<ColorScheme>,
    scale: Option<Scale>,
    animations: Option<Animations>,
    caret: Option<Caret>,
    wait_for: Option<String>,
    js: Option<String>,
    hide: Option<Selectors>,
    mask: Option<Selectors>,
    mask_color: Option<String>,
    /// Seconds.
    timeout: Option<u64>,
    compare: Option<PathBuf>,
    threshold: Option<f64>,
    max_diff_pixels: Option<u64>,
    max_diff_ratio: Option<f64>,
    ignore_antialiasing: Option<bool>,
}

/// Fields a canvas entry has no use for (they act on a page).
const PAGE_ONLY: [&str; 12] = [
    "wait",
    "selector",
    "fullPage",
    "colorScheme",
    "scale",
    "animations",
    "caret",
    "waitFor",
    "js",
    "hide",
    "mask",
    "maskColor",
];

impl EntrySpec {
    /// Names of the page-only fields this spec sets.
    fn page_only_set(&self) -> Vec<&'static str> {
        let set = [
            self.wait.is_some(),
            self.selector.is_some(),
            self.full_page.is_some(),
            self.color_scheme.is_some(),
            self.scale.is_some(),
            self.animations.is_some(),
            self.caret.is_some(),
            self.wait_for.is_some(),
            self.js.is_some(),
            self.hide.is_some(),
            self.mask.is_some(),
            self.mask_color.is_some(),
        ];
        PAGE_ONLY.iter().zip(set).filter(|(_, s)| *s).map(|(n, _)| *n).collect()
    }

    /// This entry with every unset field taken from `d`.
    fn or(self, d: &EntrySpec) -> EntrySpec {
        let d = d.clone();
        EntrySpec {
            url: self.url,
            canvas: self.canvas,
            output: self.output,
            size: self.size.or(d.size),
            wait: self.wait.or(d.wait),
            selector: self.selector.or(d.selector),
            full_page: self.full_page.or(d.full_page),
            color_scheme: self.color_scheme.or(d.color_scheme),
            scale: self.scale.or(d.scale),
            animations: self.animations.or(d.animations),
            caret: self.caret.or(d.caret),
            wait_for: self.wait_for.or(d.wait_for),
            js: self.js.or(d.js),
            hide: self.hide.or(d.hide),
            mask: self.mask.or(d.mask),
            mask_color: self.mask_color.or(d.mask_color),
            timeout: self.timeout.or(d.timeout),
            compare: self.compare,
            threshold: self.threshold.or(d.threshold),
            max_diff_pixels: self.max_diff_pixels.or(d.max_diff_pixels),
            max_diff_ratio: self.max_diff_ratio.or(d.max_diff_ratio),
            ignore_antialiasing: self.ignore_antialiasing.or(d.ignore_antialiasing),
        }
    }
}

/// The file's top level, entries still untyped so that an error can name its entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    defaults: Option<serde_json::Value>,
    shots: Vec<serde_json::Value>,
}

/// A checked manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The shots, in file order.
    pub shots: Vec<ShotRequest>,
}

/// Reads and checks the manifest at `path`; `limits` are the command line's
/// comparison limits, which an entry (or `defaults`) overrides.
pub fn load(path: &Path, limits: CompareLimits) -> Result<Manifest, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read { path: path.into(), source })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    parse(&text, json, &base, limits).map_err(|e| match e {
        ManifestError::Syntax { message, .. } => ManifestError::Syntax { path: path.into(), message },
        ManifestError::Empty(_) => ManifestError::Empty(path.into()),
        e => e,
    })
}

/// Parses manifest `text` (JSON when `json`, else YAML), resolving relative paths against `base`.
pub fn parse(text: &str, json: bool, base: &Path, limits: CompareLimits) -> Result<Manifest, ManifestError> {
    let syntax = |message: String| ManifestError::Syntax { path: PathBuf::new(), message };
    let raw: RawManifest = if json {
        serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?
    } else {
        serde_yaml_ng::from_str(text).map_err(|e| syntax(e.to_string()))?
    };
    if raw.shots.is_empty() {
        return Err(ManifestError::Empty(PathBuf::new()));
    }
    let defaults = match &raw.defaults {
        None | Some(serde_json::Value::Null) => EntrySpec::default(),
        Some(v) => typed(v, "defaults")?,
    };
    for (field, set) in [("url", defaults.url.is_some()), ("canvas", defaults.canvas.is_some())]
        .into_iter()
        .chain([("output", defaults.output.is_some()), ("compare", defaults.compare.is_some())])
    {
        if set {
            return Err(field_error("defaults", field, "belongs in an entry, not in defaults"));
        }
    }
    let mut shots = Vec::with_capacity(raw.shots.len());
    let mut outputs: HashMap<PathBuf, usize> = HashMap::new();
    for (i, value) in raw.shots.iter().enumerate() {
        let name = entry_name(i, value);
        let spec: EntrySpec = typed(value, &name)?;
        let own_page_fields = spec.page_only_set();
        let spec = spec.or(&defaults);
        let req = check_entry(spec, &own_page_fields, base, limits).map_err(|(f, m)| field_error(&name, f, &m))?;
        if let Some(first) = outputs.insert(req.output.clone(), i) {
            return Err(field_error(&name, "output", &format!("shots[{first}] writes the same file")));
        }
        shots.push(req);
    }
    Ok(Manifest { shots })
}

/// `shots[i]`, with the entry's output (else its URL or canvas) when it has one.
fn entry_name(i: usize, value: &serde_json::Value) -> String {
    let label = ["output", "url", "canvas"]
        .iter()
        .find_map(|k| value.get(*k).and_then(serde_json::Value::as_str).map(|v| format!("{k} {v}")));
    match label {
        Some(l) => format!("shots[{i}] ({l})"),
        None => format!("shots[{i}]"),
    }
}

fn field_error(entry: &str, field: &str, message: &str) -> ManifestError {
    ManifestError::Field { entry: entry.to_string(), field: field.to_string(), message: message.to_string() }
}

/// `value` as an [`EntrySpec`], an error naming the field that is wrong.
fn typed(value: &serde_json::Value, entry: &str) -> Result<EntrySpec, ManifestError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        // An unknown field is reported at the level that holds it: its name is in the message.
        let field = if path == "." { message.split('`').nth(1).unwrap_or("?").to_string() } else { path };
        ManifestError::Field { entry: entry.to_string(), field, message }
    })
}

/// The request of a merged entry, or the field that is wrong and why.
fn check_entry(
    spec: EntrySpec,
    own_page_fields: &[&'static str],
    base: &Path,
    cli: CompareLimits,
) -> Result<ShotRequest, (&'static str, String)> {
    let resolve = |p: PathBuf| if p.is_absolute() { p } else { base.join(p) };
    let target = match (spec.url, spec.canvas) {
        (Some(_), Some(_)) => return Err(("canvas", "an entry has a url or a canvas, not both".into())),
        (None, None) => return Err(("url", "missing: an entry needs a url or a canvas".into())),
        (Some(url), None) => {
            url_policy::normalize_address(&url).map_err(|e| ("url", e.to_string()))?;
            Target::Url(url)
        }
        (None, Some(folder)) => {
            if let Some(f) = own_page_fields.first() {
                return Err((f, "acts on a page; a canvas entry cannot use it".into()));
            }
            Target::Canvas(resolve(folder))
        }
    };
    let output = resolve(spec.output.ok_or(("output", "missing: every entry names its PNG".to_string()))?);
    if spec.selector.is_some() && spec.full_page == Some(true) {
        return Err(("fullPage", "an entry captures a selector or the full page, not both".into()));
    }
    let timeout = match spec.timeout {
        Some(0) => return Err(("timeout", "must be at least 1 second".into())),
        Some(s) => Duration::from_secs(s),
        None => Duration::from_secs(30),
    };
    let unit = |v: Option<f64>, name: &'static str| match v {
        Some(x) if !(0.0..=1.0).contains(&x) => Err((name, format!("must be within 0..=1, not {x}"))),
        v => Ok(v),
    };
    let limits = CompareLimits {
        threshold: unit(spec.threshold, "threshold")?.or(cli.threshold),
        max_diff_pixels: spec.max_diff_pixels.or(cli.max_diff_pixels),
        max_diff_ratio: unit(spec.max_diff_ratio, "maxDiffRatio")?.or(cli.max_diff_ratio),
        ignore_antialiasing: spec.ignore_antialiasing.or(cli.ignore_antialiasing),
    };
    let is_canvas = matches!(target, Target::Canvas(_));
    let mut req = ShotRequest::new(target, output);
    req.size = spec.size.unwrap_or(req.size);
    req.timeout = timeout;
    if !is_canvas {
        req.wait = spec.wait.unwrap_or(WaitFor::Load);
        req.full_page = spec.full_page.unwrap_or(false);
        req.selector = spec.selector;
        req.prepare = Prepare {
            animations: spec.animations.unwrap_or_default(),
            caret: spec.caret.unwrap_or_default(),
            color_scheme: spec.color_scheme,
            scale: spec.scale.unwrap_or_default(),
            wait_for: spec.wait_for,
            js: spec.js,
            hide: spec.hide.map(Selectors::into_vec).unwrap_or_default(),
            mask: spec.mask.map(Selectors::into_vec).unwrap_or_default(),
            mask_color: spec.mask_color.unwrap_or_else(|| DEFAULT_MASK_COLOR.to_string()),
        };
    }
    req.compare = spec.compare.map(|b| CompareSpec { baseline: resolve(b), limits });
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Result<Manifest, ManifestError> {
        parse(text, false, Path::new("/m"), CompareLimits::default())
    }

    fn field_err(text: &str) -> (String, String, String) {
        match yaml(text) {
            Err(ManifestError::Field { entry, field, message }) => (entry, field, message),
            other => panic!("want a field error, got {other:?}"),
        }
    }

    #[test]
    fn entries_inherit_defaults_and_resolve_paths() {
        let m = yaml(
            "defaults:\n  size: 640x480\n  animations: disabled\n  hide: .clock\n  selector: main\nshots:\n  - url: http://127.0.0.1:1/a\n    output: a.png\n    size: 320x200\n    compare: base/a.png\n  - url: http://127.0.0.1:1/b\n    output: /abs/b.png\n    colorScheme: dark\n    scale: 2\n    mask: ['#x', '.y']\n    wait: 250\n  - canvas: proj\n    output: c.png\n",
        )
        .unwrap();
        let [a, b, c] = &m.shots[..] else { panic!("three shots") };
        assert_eq!(a.size, Size { width: 320, height: 200 });
        assert_eq!(a.output, PathBuf::from("/m/a.png"));
        assert_eq!(a.prepare.animations, Animations::Disabled);
        assert_eq!(a.prepare.hide, vec![".clock".to_string()]);
        assert_eq!(a.selector.as_deref(), Some("main"));
        assert_eq!(a.compare.as_ref().map(|c| c.baseline.clone()), Some(PathBuf::from("/m/base/a.png")));
        assert_eq!(b.output, PathBuf::from("/abs/b.png"));
        assert_eq!(b.size, Size { width: 640, height: 480 });
        assert_eq!(b.prepare.color_scheme, Some(ColorScheme::Dark));
        assert_eq!(b.prepare.scale, Scale::Two);
        assert_eq!(b.prepare.mask, vec!["#x".to_string(), ".y".into()]);
        assert_eq!(b.wait, WaitFor::Delay(250));
        assert!(b.compare.is_none());
        // A canvas entry keeps the size default and ignores the page-only ones.
        assert_eq!(c.target, Target::Canvas(PathBuf::from("/m/proj")));
        assert_eq!(c.size, Size { width: 640, height: 480 });
        assert_eq!(c.selector, None);
        assert_eq!(c.prepare, Prepare::default());
    }

    #[test]
    fn json_manifests_read_the_same() {
        let m = parse(
            r#"{"shots": [{"url": "http://127.0.0.1:1/", "output": "x.png", "fullPage": true, "caret": "hide"}]}"#,
            true,
            Path::new("/m"),
            CompareLimits::default(),
        )
        .unwrap();
        assert!(m.shots[0].full_page);
        assert_eq!(m.shots[0].prepare.caret, Caret::Hide);
    }

    #[test]
    fn errors_name_the_entry_and_the_field() {
        let two = "shots:\n  - url: http://127.0.0.1:1/\n    output: ok.png\n";
        let (entry, field, msg) =
            field_err(&format!("{two}  - url: http://127.0.0.1:1/\n    output: b.png\n    fullpage: true\n"));
        assert_eq!((entry.as_str(), field.as_str()), ("shots[1] (output b.png)", "fullpage"));
        assert!(msg.contains("fullPage"), "the message lists the known fields: {msg}");

        let (entry, field, msg) =
            field_err(&format!("{two}  - url: http://127.0.0.1:1/\n    output: b.png\n    size: 20000x10\n"));
        assert_eq!((entry.as_str(), field.as_str()), ("shots[1] (output b.png)", "size"));
        assert!(msg.contains("out of range"), "{msg}");
        let (_, field, msg) = field_err("shots:\n  - url: http://127.0.0.1:1/\n    output: b.png\n    size: 0x10\n");
        assert_eq!(field, "size");
        assert!(msg.contains("quote it"), "{msg}");

        let (entry, field, _) = field_err("shots:\n  - output: c.png\n    url: http://127.0.0.1:1/\n    scale: 3\n");
        assert_eq!((entry.as_str(), field.as_str()), ("shots[0] (output c.png)", "scale"));

        let (_, field, msg) = field_err("shots:\n  - url: 'javascript:alert(1)'\n    output: x.png\n");
        assert_eq!(field, "url");
        assert!(msg.contains("refused"), "{msg}");

        let (entry, field, _) = field_err("shots:\n  - url: http://127.0.0.1:1/\n");
        assert_eq!((entry.as_str(), field.as_str()), ("shots[0] (url http://127.0.0.1:1/)", "output"));

        let (_, field, _) = field_err("shots:\n  - output: x.png\n");
        assert_eq!(field, "url");

        let (_, field, _) = field_err("shots:\n  - canvas: p\n    output: x.png\n    selector: '#a'\n");
        assert_eq!(field, "selector");

        let (_, field, _) = field_err("shots:\n  - url: http://127.0.0.1:1/\n    output: x.png\n    hide: ['.a', 3]\n");
        assert!(field.starts_with("hide"), "{field}");

        let (_, field, msg) = field_err(&format!("{two}  - url: http://127.0.0.1:1/b\n    output: ok.png\n"));
        assert_eq!(field, "output");
        assert!(msg.contains("shots[0]"), "{msg}");

        let (_, field, _) = field_err("shots:\n  - url: http://127.0.0.1:1/\n    output: x.png\n    maxDiffRatio: 2\n");
        assert_eq!(field, "maxDiffRatio");

        let (entry, field, _) =
            field_err("defaults:\n  wait: soon\nshots:\n  - url: http://127.0.0.1:1/\n    output: x.png\n");
        assert_eq!((entry.as_str(), field.as_str()), ("defaults", "wait"));

        let (entry, field, _) = field_err("defaults:\n  output: x.png\nshots:\n  - url: http://127.0.0.1:1/\n");
        assert_eq!((entry.as_str(), field.as_str()), ("defaults", "output"));
    }

    #[test]
    fn bad_files_are_refused_whole() {
        assert!(matches!(yaml("shots: []\n"), Err(ManifestError::Empty(_))));
        assert!(matches!(yaml("shots: [\n"), Err(ManifestError::Syntax { .. })));
        assert!(matches!(yaml("entries: []\n"), Err(ManifestError::Syntax { .. })));
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.yaml");
        let e = load(&missing, CompareLimits::default()).unwrap_err();
        assert!(e.to_string().contains("none.yaml"), "{e}");
    }

    #[test]
    fn command_line_limits_apply_unless_an_entry_sets_its_own() {
        let cli = CompareLimits { threshold: Some(0.2), max_diff_pixels: Some(10), ..Default::default() };
        let m = parse(
            "shots:\n  - url: http://127.0.0.1:1/\n    output: x.png\n    compare: b.png\n    maxDiffPixels: 3\n",
            false,
            Path::new("/m"),
            cli,
        )
        .unwrap();
        let limits = m.shots[0].compare.clone().unwrap().limits;
        assert_eq!(limits, CompareLimits { threshold: Some(0.2), max_diff_pixels: Some(3), ..Default::default() });
    }
}
