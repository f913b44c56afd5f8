//! `cargo xtask docs`: checks the project's Markdown documentation.
//!
//! The docs are plain Markdown read on GitHub, so "building" them means checking
//! them: every relative link in `README.md`, `ARCHITECTURE.md` and `docs/**/*.md`
//! must name an existing file, and a `#fragment` must name a heading of the target
//! (GitHub's anchor rule); every test file cited in backquotes (`tests/python/test_x.py`,
//! `test_x.py`, `tests/tests/*.rs`) must exist under `tests/`. Any failure is listed
//! and the command fails; otherwise it prints a summary.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Checks the docs under `root`; `Err` lists every broken link and missing test file.
pub fn docs(root: &Path) -> Result<(), String> {
    let pages = collect_pages(root)?;
    let test_files = collect_files(&root.join("tests"))
        .into_iter()
        .filter_map(|path| {
            path.strip_prefix(root)
                .ok()
                .map(|rel| rel.to_string_lossy().replace('\\', "/"))
        })
        .collect::<Vec<_>>();
    let mut anchors: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    let mut problems = Vec::new();
    let (mut links_checked, mut tests_checked) = (0usize, 0usize);

    for page in &pages {
        let text = fs::read_to_string(page)
            .map_err(|err| format!("cannot read {}: {err}", page.display()))?;
        let shown = page
            .strip_prefix(root)
            .unwrap_or(page)
            .display()
            .to_string();
        let dir = page.parent().unwrap_or(root);

        for (line, target) in extract_links(&text) {
            if is_external(&target) {
                continue;
            }
            links_checked += 1;
            let (path_part, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let file = if path_part.is_empty() {
                page.clone()
            } else {
                normalize(&dir.join(path_part))
            };
            if !file.starts_with(root) || !file.exists() {
                problems.push(format!("{shown}:{line}: link to a missing file: {target}"));
                continue;
            }
            let Some(fragment) = fragment else { continue };
            if file.is_dir() || file.extension().is_none_or(|ext| ext != "md") {
                problems.push(format!(
                    "{shown}:{line}: anchor on a file that is not Markdown: {target}"
                ));
                continue;
            }
            if !anchors.contains_key(&file) {
                let target_text = fs::read_to_string(&file)
                    .map_err(|err| format!("cannot read {}: {err}", file.display()))?;
                anchors.insert(file.clone(), heading_anchors(&target_text));
            }
            if !anchors[&file].contains(fragment) {
                problems.push(format!(
                    "{shown}:{line}: no heading for the anchor #{fragment}: {target}"
                ));
            }
        }

        for (line, cited) in cited_test_files(&text) {
            tests_checked += 1;
            if !test_files
                .iter()
                .any(|file| test_path_matches(&cited, file))
            {
                problems.push(format!(
                    "{shown}:{line}: cited test file not found under tests/: {cited}"
                ));
            }
        }
    }

    if problems.is_empty() {
        println!(
            "==> docs: {} pages, {links_checked} links and {tests_checked} test-file citations checked, all resolve",
            pages.len()
        );
        Ok(())
    } else {
        Err(format!(
            "the docs have {} broken link(s) or citation(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}

/// `README.md`, `ARCHITECTURE.md` and every `.md` file under `docs/`, sorted.
fn collect_pages(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut pages = Vec::new();
    for name in ["README.md", "ARCHITECTURE.md"] {
        let path = root.join(name);
        if !path.is_file() {
            return Err(format!("{} is missing", path.display()));
        }
        pages.push(path);
    }
    let mut in_docs = collect_files(&root.join("docs"));
    in_docs.retain(|path| path.extension().is_some_and(|ext| ext == "md"));
    pages.extend(in_docs);
    Ok(pages)
}

/// Every file under `dir`, recursively, sorted (none when `dir` does not exist).
/// `__pycache__` and hidden directories are skipped.
fn collect_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if !name.starts_with('.') && name != "__pycache__" {
                    stack.push(path);
                }
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `path` with `.` and `..` components resolved lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether a link target leaves the repository (a URL scheme or a mail address).
fn is_external(target: &str) -> bool {
    target.starts_with("mailto:")
        || target.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
}

/// The lines of `text` with their 1-based numbers, those of fenced code blocks (and
/// the fences) given as empty lines, so that they end a paragraph and hold nothing.
fn prose_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().map(move |(index, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return (index + 1, "");
        }
        (index + 1, if fenced { "" } else { line })
    })
}

/// One prose line split by its code spans: the line with code spans blanked out, and
/// the code spans that open and close on it.
struct SplitLine {
    number: usize,
    prose: String,
    code: Vec<String>,
}

/// The prose lines of `text` split by their code spans. A code span may run over
/// several lines of a paragraph; a backquote left unpaired in its paragraph is literal.
fn split_lines(text: &str) -> Vec<SplitLine> {
    let mut lines = Vec::new();
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    for (number, line) in prose_lines(text).chain(std::iter::once((0, ""))) {
        if !line.trim().is_empty() {
            paragraph.push((number, line));
            continue;
        }
        let ticks: usize = paragraph.iter().map(|(_, l)| l.matches('`').count()).sum();
        // With an odd count, the last backquote opens nothing.
        let paired = ticks - ticks % 2;
        let (mut seen, mut in_code) = (0usize, false);
        for &(number, line) in &paragraph {
            let mut prose = String::with_capacity(line.len());
            let mut code = Vec::new();
            // The span being read, when it opened on this line.
            let mut current: Option<String> = None;
            for c in line.chars() {
                if c == '`' && seen < paired {
                    seen += 1;
                    if in_code {
                        code.extend(current.take());
                    } else {
                        current = Some(String::new());
                    }
                    in_code = !in_code;
                    prose.push(' ');
                } else if in_code {
                    if let Some(span) = current.as_mut() {
                        span.push(c);
                    }
                    prose.push(' ');
                } else {
                    prose.push(c);
                }
            }
            lines.push(SplitLine {
                number,
                prose,
                code,
            });
        }
        paragraph.clear();
    }
    lines
}

/// The inline link targets `[text](target)` and `![alt](target)` of `text` with their
/// line numbers, outside code blocks and code spans; a title (`(target "title")`)
/// is dropped. Reference definitions `[label]: target` count too.
pub(crate) fn extract_links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    for SplitLine { number, prose, .. } in split_lines(text) {
        let trimmed = prose.trim_start();
        if let Some(rest) = trimmed.strip_prefix('[') {
            if let Some((_, target)) = rest.split_once("]:") {
                if let Some(target) = target.split_whitespace().next() {
                    links.push((number, target.to_string()));
                }
                continue;
            }
        }
        let mut rest = prose.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let inner = after[..end].trim();
            let target = inner.split_whitespace().next().unwrap_or("");
            let target = target.trim_start_matches('<').trim_end_matches('>');
            if !target.is_empty() {
                links.push((number, target.to_string()));
            }
            rest = &after[end + 1..];
        }
    }
    links
}

/// GitHub's anchor for a heading: lowercase, every character other than letters,
/// digits, spaces, `-` and `_` dropped, spaces turned into `-`.
pub(crate) fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of every ATX heading (`#` to `######`) of `text`, outside code blocks;
/// a repeated slug gets `-1`, `-2`, ... as on GitHub. Inline markup is dropped first:
/// backquotes, emphasis, and links keep only their text.
pub(crate) fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 {
            continue;
        }
        let Some(title) = line[hashes..].strip_prefix(' ') else {
            continue;
        };
        let base = slug(&heading_text(title.trim_end_matches('#')));
        let count = seen.entry(base.clone()).or_insert(0);
        let anchor = if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        };
        *count += 1;
        anchors.insert(anchor);
    }
    anchors
}

/// A heading's visible text: `[text](target)` becomes `text`, `` ` `` and `*` go.
fn heading_text(title: &str) -> String {
    let mut out = String::new();
    let mut rest = title;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out.replace(['`', '*'], "")
}

/// Test files cited in code spans, with their line numbers: a span that is a path
/// under `tests/` (`tests/python/test_x.py`, `tests/tests/*.rs`) or a bare file name
/// `test_*.py` / `test_*.rs`. `*` is a wildcard.
pub(crate) fn cited_test_files(text: &str) -> Vec<(usize, String)> {
    let mut cited = Vec::new();
    for SplitLine { number, code, .. } in split_lines(text) {
        for span in code {
            if span.contains(char::is_whitespace) {
                continue;
            }
            let is_source = span.ends_with(".py") || span.ends_with(".rs");
            let bare = !span.contains('/') && span.starts_with("test_");
            if is_source && (span.starts_with("tests/") || bare) {
                cited.push((number, span));
            }
        }
    }
    cited
}

/// Whether `file` (a path relative to the root, `/`-separated) is what `cited` names:
/// the whole path for a citation with a `/`, else the file name; `*` matches any run
/// of characters other than `/`.
pub(crate) fn test_path_matches(cited: &str, file: &str) -> bool {
    let candidate = if cited.contains('/') {
        file
    } else {
        file.rsplit('/').next().unwrap_or(file)
    };
    wildcard_match(cited.as_bytes(), candidate.as_bytes())
}

/// `*`-only glob matching (no `/` inside a `*`).
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len())
            .take_while(|&skip| skip == 0 || text[skip - 1] != b'/')
            .any(|skip| wildcard_match(rest, &text[skip..])),
        Some((&c, rest)) => text
            .split_first()
            .is_some_and(|(&t, text_rest)| t == c && wildcard_match(rest, text_rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_follows_github() {
        assert_eq!(slug("What does not work yet"), "what-does-not-work-yet");
        assert_eq!(slug("The front page's figures"), "the-front-pages-figures");
        assert_eq!(slug("PTX (sm_80)"), "ptx-sm_80");
        assert_eq!(slug("`parallel=True`, `prange`"), "paralleltrue-prange");
        assert_eq!(slug("NumPy breadth (issue 47)"), "numpy-breadth-issue-47");
        assert_eq!(slug("a  b"), "a--b");
    }

    #[test]
    fn repeated_headings_are_numbered() {
        let text = "# Title\n## Not yet\n```\n# not a heading\n```\n## Not yet\n### `cache=True`\n";
        let anchors = heading_anchors(text);
        let expected: BTreeSet<String> = ["title", "not-yet", "not-yet-1", "cachetrue"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(anchors, expected);
    }

    #[test]
    fn heading_links_keep_their_text() {
        let anchors = heading_anchors("## See [the docs](docs/README.md) now\n");
        assert!(anchors.contains("see-the-docs-now"), "{anchors:?}");
    }

    #[test]
    fn links_are_extracted_outside_code() {
        let text = "See [a](docs/a.md#x) and [b](<b.md> \"title\").\n\
                    `[not](a link)` here\n```\n[no](fence.md)\n```\n[ref]: c.md\n\
                    ![img](pic.png) [web](https://example.com)\n";
        let links = extract_links(text);
        let expected = vec![
            (1, "docs/a.md#x".to_string()),
            (1, "b.md".to_string()),
            (6, "c.md".to_string()),
            (7, "pic.png".to_string()),
            (7, "https://example.com".to_string()),
        ];
        assert_eq!(links, expected);
        let spanning = "a `code\nLiteral[Dict](...) end` [x](y.md)\n\n`open\n[z](z.md)\n";
        let targets: Vec<String> = extract_links(spanning)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(targets, ["y.md", "z.md"]);
        assert!(is_external("https://example.com"));
        assert!(is_external("mailto:someone@example.com"));
        assert!(!is_external("docs/a.md#x"));
        assert!(!is_external("#local"));
    }

    #[test]
    fn test_citations_are_found_and_matched() {
        let text = "Tests: `tests/python/test_lists.py`, `test_arrays_*.py` and \
                    `tests/tests/*.rs`; not `numba_rs/_npfuncs.py` nor `f(test_x.py)`.\n";
        let cited: Vec<String> = cited_test_files(text).into_iter().map(|(_, c)| c).collect();
        assert_eq!(
            cited,
            [
                "tests/python/test_lists.py",
                "test_arrays_*.py",
                "tests/tests/*.rs"
            ]
        );
        assert!(test_path_matches(
            "test_arrays_*.py",
            "tests/python/test_arrays_ops.py"
        ));
        assert!(test_path_matches(
            "tests/tests/*.rs",
            "tests/tests/dumps.rs"
        ));
        assert!(!test_path_matches(
            "tests/tests/*.rs",
            "tests/tests/snapshots/x.rs"
        ));
        assert!(!test_path_matches(
            "test_lists.py",
            "tests/python/test_lists_x.py"
        ));
        assert!(test_path_matches(
            "tests/python/test_lists.py",
            "tests/python/test_lists.py"
        ));
    }

    #[test]
    fn normalize_resolves_parent_components() {
        assert_eq!(
            normalize(Path::new("/r/docs/support/../measurements.md")),
            PathBuf::from("/r/docs/measurements.md")
        );
    }
}
