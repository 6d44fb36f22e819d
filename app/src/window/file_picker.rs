//! A page's file chooser answered by the person, in the canvas: a panel over
//! the browser node's page that starts in the project folder, lists its folders and the files the page accepts,
//! and narrows the list as the person types. Keys: Up/Down move, Enter opens
//! a folder or chooses the file, Space marks files when several may be
//! chosen, Backspace on an empty field goes up a folder, Escape cancels.
//! The mouse: a click selects, a double click opens or chooses, the wheel
//! scrolls, and the buttons do what they say. A save chooser takes a file
//! name in the field. Layout, keys and hit-testing only: the window draws the
//! views and hands the answer to the page.

use super::overlay::inside;
use canvas_render::{Color, NodeContent, NodeKind, NodeView, Rect};
use cef_bridge::{ChooserMode, FileChooser};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Widest and tallest panel, in logical pixels.
const MAX_W: f32 = 620.0;
const MAX_H: f32 = 460.0;
/// Height of a list row, the field and a button.
const ROW_H: f32 = 24.0;
const FIELD_H: f32 = 28.0;
const BUTTON_H: f32 = 30.0;
/// Width of a button, and of "Up a folder" (icon and label).
const BUTTON_W: f32 = 110.0;
const UP_W: f32 = 136.0;
/// Gap around the panel's insides.
const GAP: f32 = 10.0;
/// The panel's title bar.
const TITLE_H: f32 = 30.0;
/// Most entries listed from one folder (a larger one says how many are left out).
const MAX_ENTRIES: usize = 2000;

/// What the person did to the chooser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// These paths were chosen.
    Chosen(Vec<PathBuf>),
    /// Cancelled: the page's input keeps what it had.
    Cancelled,
}

/// A key as the picker sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKey {
    /// Move the selection up.
    Up,
    /// Move the selection down.
    Down,
    /// Open the selected folder, or choose.
    Enter,
    /// Cancel.
    Escape,
    /// Delete the field's last character, or go up a folder when it is empty.
    Backspace,
    /// Mark or unmark the selected file (several may be chosen).
    Space,
    /// A character typed into the field.
    Char(char),
}

/// One listed entry of the current folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name in the folder.
    pub name: String,
    /// It is a folder.
    pub is_dir: bool,
    /// Its size in bytes (files).
    pub size: u64,
}

/// Where the parts of the picker are on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The panel.
    pub panel: Rect,
    /// The line saying which folder is shown.
    pub path: Rect,
    /// The filter (or, saving, file name) field.
    pub field: Rect,
    /// The shown rows, with the index in [`FilePicker::visible`] of each.
    pub rows: Vec<(usize, Rect)>,
    /// "Up a folder".
    pub up: Rect,
    /// Cancel.
    pub cancel: Rect,
    /// Open / Choose / Save.
    pub ok: Rect,
}

/// An open file chooser and what the person has done in it so far.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePicker {
    /// What the page asked for.
    pub chooser: FileChooser,
    /// The folder shown.
    pub dir: PathBuf,
    /// What is typed in the field.
    pub field: String,
    /// The selected row (an index into [`FilePicker::visible`]).
    pub cursor: usize,
    /// Files marked to be chosen together.
    pub marked: BTreeSet<PathBuf>,
    /// Why the folder could not be listed, or what was wrong with a choice.
    pub error: Option<String>,
    entries: Vec<Entry>,
    left_out: usize,
    top: usize,
    /// The row of the last click and when, for double clicks.
    last_click: Option<(usize, std::time::Instant)>,
}

impl FilePicker {
    /// A picker for `chooser` starting in `root` (the project folder). CEF
    /// suggests the last folder used or the home folder, which is not where a
    /// project's files are; a save keeps the suggested file name.
    pub fn new(chooser: FileChooser, root: &Path) -> Self {
        let field = match chooser.mode {
            ChooserMode::Save => file_name(Path::new(&chooser.default_path)),
            _ => String::new(),
        };
        let dir = root.to_path_buf();
        let mut picker = Self {
            chooser,
            dir,
            field,
            cursor: 0,
            marked: BTreeSet::new(),
            error: None,
            entries: vec![],
            left_out: 0,
            top: 0,
            last_click: None,
        };
        picker.load();
        picker
    }

    /// The title: what is asked.
    pub fn title(&self) -> String {
        if !self.chooser.title.is_empty() {
            return self.chooser.title.clone();
        }
        match self.chooser.mode {
            ChooserMode::Open => "Choose a file",
            ChooserMode::OpenMultiple => "Choose files",
            ChooserMode::OpenFolder => "Choose a folder",
            ChooserMode::Save => "Save as",
        }
        .to_string()
    }

    fn load(&mut self) {
        self.entries.clear();
        self.left_out = 0;
        self.cursor = 0;
        self.top = 0;
        self.error = None;
        let read = match std::fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) => {
                self.error = Some(format!("cannot list {}: {e}", self.dir.display()));
                return;
            }
        };
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Following links: a link to a folder is a folder to the person.
            let Ok(meta) = std::fs::metadata(entry.path()) else { continue };
            let is_dir = meta.is_dir();
            if !is_dir
                && (self.chooser.mode == ChooserMode::OpenFolder || !accepts(&self.chooser.accept, &entry.path()))
            {
                continue;
            }
            if self.entries.len() >= MAX_ENTRIES {
                self.left_out += 1;
                continue;
            }
            self.entries.push(Entry { name, is_dir, size: if is_dir { 0 } else { meta.len() } });
        }
        self.entries
            .sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase())));
    }

    /// The entries shown: hidden ones only when the filter starts with a dot,
    /// and (but when saving) only those whose name holds the filter.
    pub fn visible(&self) -> Vec<&Entry> {
        let needle = if self.chooser.mode == ChooserMode::Save { "" } else { self.field.as_str() };
        let lower = needle.to_lowercase();
        self.entries
            .iter()
            .filter(|e| !e.name.starts_with('.') || needle.starts_with('.'))
            .filter(|e| lower.is_empty() || e.name.to_lowercase().contains(&lower))
            .collect()
    }

    fn selected(&self) -> Option<Entry> {
        self.visible().get(self.cursor).map(|e| (*e).clone())
    }

    fn enter_dir(&mut self, dir: PathBuf) {
        self.dir = dir;
        if self.chooser.mode != ChooserMode::Save {
            self.field.clear();
        }
        self.load();
    }

    /// Goes up a folder (no further than `/`).
    pub fn up(&mut self) {
        if let Some(parent) = self.dir.parent().map(Path::to_path_buf) {
            let from = file_name(&self.dir);
            self.enter_dir(parent);
            if let Some(i) = self.visible().iter().position(|e| e.name == from) {
                self.cursor = i;
            }
        }
    }

    /// What OK means now: `Some` once something can be handed to the page.
    fn accept(&mut self) -> Option<Outcome> {
        match self.chooser.mode {
            ChooserMode::OpenFolder => {
                let dir = match self.selected() {
                    Some(e) if e.is_dir => self.dir.join(e.name),
                    _ => self.dir.clone(),
                };
                Some(Outcome::Chosen(vec![dir]))
            }
            ChooserMode::Save => {
                let name = self.field.trim();
                if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                    self.error = Some("type a file name".into());
                    return None;
                }
                Some(Outcome::Chosen(vec![self.dir.join(name)]))
            }
            ChooserMode::Open | ChooserMode::OpenMultiple => {
                if !self.marked.is_empty() {
                    return Some(Outcome::Chosen(self.marked.iter().cloned().collect()));
                }
                match self.selected() {
                    Some(e) if e.is_dir => {
                        self.enter_dir(self.dir.join(e.name));
                        None
                    }
                    Some(e) => Some(Outcome::Chosen(vec![self.dir.join(e.name)])),
                    None => {
                        self.error = Some("nothing to choose here".into());
                        None
                    }
                }
            }
        }
    }

    /// Enter on the selection: a folder opens (choosing a folder, Enter chooses it), a file is chosen.
    fn activate(&mut self) -> Option<Outcome> {
        match self.selected() {
            Some(e) if e.is_dir && self.chooser.mode != ChooserMode::OpenFolder => {
                self.enter_dir(self.dir.join(e.name));
                None
            }
            Some(e) if !e.is_dir && self.chooser.mode == ChooserMode::Save => {
                self.field = e.name;
                self.accept()
            }
            _ => self.accept(),
        }
    }

    fn keep_cursor_shown(&mut self, rows: usize) {
        if self.cursor < self.top {
            self.top = self.cursor;
        } else if rows > 0 && self.cursor >= self.top + rows {
            self.top = self.cursor + 1 - rows;
        }
    }

    /// Handles one key; `Some` once the chooser is answered.
    pub fn key(&mut self, key: PickerKey) -> Option<Outcome> {
        let count = self.visible().len();
        match key {
            PickerKey::Up => self.cursor = self.cursor.saturating_sub(1),
            PickerKey::Down => self.cursor = (self.cursor + 1).min(count.saturating_sub(1)),
            PickerKey::Enter => return self.activate(),
            PickerKey::Escape => return Some(Outcome::Cancelled),
            PickerKey::Backspace if self.field.is_empty() => self.up(),
            PickerKey::Backspace => {
                self.field.pop();
                self.cursor = 0;
            }
            PickerKey::Space if self.chooser.mode == ChooserMode::OpenMultiple && self.field.is_empty() => {
                if let Some(e) = self.selected().filter(|e| !e.is_dir) {
                    let path = self.dir.join(e.name);
                    if !self.marked.remove(&path) {
                        self.marked.insert(path);
                    }
                }
            }
            PickerKey::Space => self.type_char(' '),
            PickerKey::Char(c) if !c.is_control() => self.type_char(c),
            PickerKey::Char(_) => {}
        }
        None
    }

    fn type_char(&mut self, c: char) {
        self.field.push(c);
        self.error = None;
        if self.chooser.mode != ChooserMode::Save {
            self.cursor = 0;
            self.top = 0;
        }
    }

    /// Scrolls the list by `rows` (positive: down).
    pub fn scroll(&mut self, rows: i32) {
        let count = self.visible().len();
        let top = (self.top as i64 + i64::from(rows)).clamp(0, count.saturating_sub(1) as i64);
        self.top = top as usize;
        self.cursor = self.cursor.max(self.top);
    }

    /// The panel centred in the node's `body` (screen, logical pixels).
    pub fn layout(&self, body: Rect) -> Layout {
        let w = MAX_W.min(body.w - 2.0 * GAP).max(240.0);
        let h = MAX_H.min(body.h - 2.0 * GAP).max(200.0);
        let x = body.x + ((body.w - w) / 2.0).max(0.0);
        let y = body.y + ((body.h - h) / 2.0).max(0.0);
        let inner_w = w - 2.0 * GAP;
        let path = Rect::new(x + GAP, y + TITLE_H + 6.0, inner_w, ROW_H);
        let field = Rect::new(x + GAP, path.y + ROW_H + 4.0, inner_w, FIELD_H);
        let by = y + h - GAP - BUTTON_H;
        let list_top = field.y + FIELD_H + 6.0;
        let shown = (((by - 6.0 - list_top) / ROW_H).floor().max(1.0)) as usize;
        let rows = (self.top..self.visible().len())
            .take(shown)
            .enumerate()
            .map(|(k, i)| (i, Rect::new(x + GAP, list_top + k as f32 * ROW_H, inner_w, ROW_H - 2.0)))
            .collect();
        let ok = Rect::new(x + w - GAP - BUTTON_W, by, BUTTON_W, BUTTON_H);
        let cancel = Rect::new(ok.x - GAP - BUTTON_W, by, BUTTON_W, BUTTON_H);
        let up = Rect::new(x + GAP, by, UP_W, BUTTON_H);
        Layout { panel: Rect::new(x, y, w, h), path, field, rows, up, cancel, ok }
    }

    /// How many rows the list shows over `body`.
    fn shown_rows(&self, body: Rect) -> usize {
        let l = self.layout(body);
        let list_top = l.field.y + FIELD_H + 6.0;
        (((l.ok.y - 6.0 - list_top) / ROW_H).floor().max(1.0)) as usize
    }

    /// Handles a key with the list's height known (keeps the selection in view).
    pub fn key_over(&mut self, body: Rect, key: PickerKey) -> Option<Outcome> {
        let out = self.key(key);
        let rows = self.shown_rows(body);
        self.keep_cursor_shown(rows);
        out
    }

    /// A press at (x, y) on the panel; `Some` once the chooser is answered.
    pub fn click(&mut self, body: Rect, x: f32, y: f32) -> Option<Outcome> {
        let l = self.layout(body);
        if inside(&l.ok, x, y) {
            return self.accept();
        }
        if inside(&l.cancel, x, y) {
            return Some(Outcome::Cancelled);
        }
        if inside(&l.up, x, y) {
            self.up();
            return None;
        }
        let row = l.rows.iter().find(|(_, r)| inside(r, x, y)).map(|(i, _)| *i)?;
        let now = std::time::Instant::now();
        let double = self.last_click.is_some_and(|(r, t)| r == row && now.duration_since(t).as_millis() < 500);
        self.cursor = row;
        self.last_click = Some((row, now));
        if double {
            self.last_click = None;
            return self.activate();
        }
        if self.chooser.mode == ChooserMode::Save {
            if let Some(e) = self.selected().filter(|e| !e.is_dir) {
                self.field = e.name;
            }
        }
        None
    }

    /// The overlay views: panel, path, field, rows and buttons (`base` keys them).
    pub fn views(&self, body: Rect, base: u64) -> Vec<NodeView> {
        let l = self.layout(body);
        let accent = Color::hex(0x5b9cff);
        let view = |id: u64, rect: Rect, kind: NodeKind, title: String, color: Color, z: i32| NodeView {
            z,
            ..super::overlay::panel(id, rect, kind, title, color, NodeContent::Empty)
        };
        let mut panel = view(base, l.panel, NodeKind::Artifact, self.title(), accent, 4);
        panel.focused = true;
        let mut out = vec![panel];
        let path = match &self.error {
            Some(e) => e.clone(),
            None if self.left_out > 0 => format!("{} · {} more not listed", shown_path(&self.dir), self.left_out),
            None => shown_path(&self.dir),
        };
        let path_color = if self.error.is_some() { Color::hex(0xf7768e) } else { Color::hex(0x565f89) };
        out.push(view(base + 1, l.path, NodeKind::Group, path, path_color, 5));
        let hint = match self.chooser.mode {
            ChooserMode::Save => "file name: ",
            _ if self.field.is_empty() => "type to filter · ",
            _ => "filter: ",
        };
        let mut field = view(base + 2, l.field, NodeKind::Group, format!("{hint}{}\u{258f}", self.field), accent, 5);
        field.focused = true;
        out.push(field);
        let visible = self.visible();
        for (k, (i, rect)) in l.rows.iter().enumerate() {
            let Some(e) = visible.get(*i) else { continue };
            let mark = if self.marked.contains(&self.dir.join(&e.name)) { "\u{2713} " } else { "" };
            let (kind, title, color) = if e.is_dir {
                (NodeKind::Group, format!("{}/", e.name), Color::hex(0x7aa2f7))
            } else {
                let size = crate::runtime::downloads::human_bytes(e.size);
                (NodeKind::Artifact, format!("{mark}{}  ·  {size}", e.name), Color::hex(0x9aa5ce))
            };
            let mut row = view(base + 10 + k as u64, *rect, kind, title, color, 5);
            (row.focused, row.selected) = (*i == self.cursor, *i == self.cursor);
            out.push(row);
        }
        let ok_label = match self.chooser.mode {
            ChooserMode::OpenFolder => "Select",
            ChooserMode::Save => "Save",
            ChooserMode::OpenMultiple if !self.marked.is_empty() => "Choose marked",
            _ => "Open",
        };
        let mut ok = view(base + 3, l.ok, NodeKind::Group, ok_label.into(), accent, 6);
        (ok.focused, ok.selected) = (true, true);
        out.push(ok);
        out.push(view(base + 4, l.cancel, NodeKind::Group, "Cancel".into(), Color::hex(0x565f89), 6));
        out.push(view(base + 5, l.up, NodeKind::Group, "Up a folder".into(), Color::hex(0x565f89), 6));
        out
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A folder as people read it: the home folder as `~`.
fn shown_path(dir: &Path) -> String {
    if let Some(home) = crate::model::persist::home_dir() {
        if let Ok(rest) = dir.strip_prefix(&home) {
            return if rest.as_os_str().is_empty() { "~".into() } else { format!("~/{}", rest.display()) };
        }
    }
    dir.display().to_string()
}

/// Whether a file is one the page accepts: by extension (".txt"), MIME type
/// ("application/pdf") or MIME family ("image/*"); nothing listed accepts all.
pub fn accepts(accept: &[String], path: &Path) -> bool {
    if accept.iter().all(|a| a.trim().is_empty()) {
        return true;
    }
    let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase());
    let guesses: Vec<mime_guess::Mime> = mime_guess::from_path(path).iter().collect();
    accept.iter().map(|a| a.trim().to_lowercase()).any(|a| {
        if let Some(want) = a.strip_prefix('.') {
            ext.as_deref() == Some(want)
        } else if let Some(family) = a.strip_suffix("/*") {
            guesses.iter().any(|m| m.type_().as_str() == family)
        } else {
            guesses.iter().any(|m| m.essence_str() == a)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chooser(mode: ChooserMode, accept: &[&str]) -> FileChooser {
        FileChooser {
            mode,
            title: String::new(),
            default_path: String::new(),
            accept: accept.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in ["notes.txt", "photo.PNG", "report.pdf", ".hidden"] {
            std::fs::write(d.path().join(f), b"0123456789").unwrap();
        }
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub").join("deep.txt"), b"x").unwrap();
        d
    }

    fn names(p: &FilePicker) -> Vec<&str> {
        p.visible().iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn accept_lists_mean_extensions_types_and_families() {
        let p = Path::new("/x/photo.PNG");
        assert!(accepts(&[], p));
        assert!(accepts(&[".png".into()], p));
        assert!(accepts(&["image/*".into()], p));
        assert!(accepts(&["image/png".into(), ".pdf".into()], p));
        assert!(!accepts(&["image/jpeg".into()], p));
        assert!(!accepts(&["text/*".into()], p));
        assert!(accepts(&["application/pdf".into()], Path::new("a.pdf")));
    }

    #[test]
    fn the_list_shows_folders_first_what_the_page_accepts_and_narrows_as_typed() {
        let d = folder();
        let mut p = FilePicker::new(chooser(ChooserMode::Open, &[]), d.path());
        assert_eq!(names(&p), vec!["sub", "notes.txt", "photo.PNG", "report.pdf"], "hidden files stay out");
        for c in "po".chars() {
            assert_eq!(p.key(PickerKey::Char(c)), None);
        }
        assert_eq!(names(&p), vec!["report.pdf"]);
        p.key(PickerKey::Backspace);
        p.key(PickerKey::Backspace);
        p.key(PickerKey::Char('.'));
        assert_eq!(
            names(&p),
            vec![".hidden", "notes.txt", "photo.PNG", "report.pdf"],
            "a leading dot shows hidden ones"
        );
        let images = FilePicker::new(chooser(ChooserMode::Open, &["image/*"]), d.path());
        assert_eq!(names(&images), vec!["sub", "photo.PNG"]);
        let folders = FilePicker::new(chooser(ChooserMode::OpenFolder, &[]), d.path());
        assert_eq!(names(&folders), vec!["sub"]);
    }

    #[test]
    fn keys_walk_folders_and_choose() {
        let d = folder();
        let mut p = FilePicker::new(chooser(ChooserMode::Open, &[]), d.path());
        assert_eq!(p.key(PickerKey::Enter), None, "Enter on a folder opens it");
        assert_eq!(p.dir, d.path().join("sub"));
        assert_eq!(p.key(PickerKey::Enter), Some(Outcome::Chosen(vec![d.path().join("sub").join("deep.txt")])));
        assert_eq!(p.key(PickerKey::Backspace), None, "Backspace on an empty field goes up");
        assert_eq!(p.dir, d.path());
        assert_eq!(names(&p)[p.cursor], "sub", "back up, the folder left is selected");
        p.key(PickerKey::Down);
        p.key(PickerKey::Down);
        assert_eq!(p.key(PickerKey::Enter), Some(Outcome::Chosen(vec![d.path().join("photo.PNG")])));
        assert_eq!(p.key(PickerKey::Escape), Some(Outcome::Cancelled));
    }

    #[test]
    fn several_files_are_marked_with_space_and_chosen_together() {
        let d = folder();
        let mut p = FilePicker::new(chooser(ChooserMode::OpenMultiple, &[]), d.path());
        p.key(PickerKey::Down);
        p.key(PickerKey::Space);
        p.key(PickerKey::Down);
        p.key(PickerKey::Down);
        p.key(PickerKey::Space);
        p.key(PickerKey::Up);
        p.key(PickerKey::Space);
        p.key(PickerKey::Space);
        assert_eq!(
            p.key(PickerKey::Enter),
            Some(Outcome::Chosen(vec![d.path().join("notes.txt"), d.path().join("report.pdf")]))
        );
    }

    #[test]
    fn saving_takes_a_name_and_a_folder_is_chosen_whole() {
        let d = folder();
        let mut save = FilePicker::new(
            FileChooser { default_path: "out.csv".into(), ..chooser(ChooserMode::Save, &[]) },
            d.path(),
        );
        assert_eq!(save.field, "out.csv");
        assert_eq!(save.key(PickerKey::Char('x')), None);
        let l = save.layout(Rect::new(0.0, 0.0, 900.0, 700.0));
        let (x, y) = (l.ok.x + 2.0, l.ok.y + 2.0);
        assert_eq!(
            save.click(Rect::new(0.0, 0.0, 900.0, 700.0), x, y),
            Some(Outcome::Chosen(vec![d.path().join("out.csvx")]))
        );
        save.field.clear();
        assert_eq!(save.click(Rect::new(0.0, 0.0, 900.0, 700.0), x, y), None);
        assert_eq!(save.error.as_deref(), Some("type a file name"));
        let mut folder_mode = FilePicker::new(chooser(ChooserMode::OpenFolder, &[]), d.path());
        assert_eq!(folder_mode.key(PickerKey::Enter), Some(Outcome::Chosen(vec![d.path().join("sub")])));
    }

    #[test]
    fn clicks_select_double_clicks_open_and_the_list_stays_in_the_panel() {
        let d = folder();
        let body = Rect::new(50.0, 40.0, 800.0, 560.0);
        let mut p = FilePicker::new(chooser(ChooserMode::Open, &[]), d.path());
        let l = p.layout(body);
        assert!(l.rows.iter().all(|(_, r)| r.y + r.h <= l.ok.y), "rows stay above the buttons");
        let (_, notes) = l.rows[1];
        assert_eq!(p.click(body, notes.x + 5.0, notes.y + 5.0), None);
        assert_eq!(p.cursor, 1);
        assert_eq!(
            p.click(body, notes.x + 5.0, notes.y + 5.0),
            Some(Outcome::Chosen(vec![d.path().join("notes.txt")]))
        );
        assert_eq!(p.click(body, l.cancel.x + 3.0, l.cancel.y + 3.0), Some(Outcome::Cancelled));
        let missing = FilePicker::new(chooser(ChooserMode::Open, &[]), &d.path().join("nope"));
        assert!(missing.error.as_deref().is_some_and(|e| e.starts_with("cannot list")));
        assert_eq!(p.views(body, 1).len(), 3 + l.rows.len() + 3, "panel, path, field, rows, three buttons");
    }
}
