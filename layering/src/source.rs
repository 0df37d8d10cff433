//! A crate's source files as modules: each file's module path and its code with comments,
//! string and character literals and inline test modules taken out.

use std::path::{Path, PathBuf};

/// One file of a crate, as the module it defines.
#[derive(Clone, Debug)]
pub struct ModuleFile {
    /// Its module path: `crate`, `crate::checker`, `crate::checker::memo`.
    pub module: String,
    /// The file, for messages.
    pub path: PathBuf,
    /// Its code without comments, literals and test modules.
    pub code: String,
}

/// Every module file under `src` (the crate root `lib.rs` or `main.rs`, and the files of its
/// modules; `src/bin` holds other crates and is skipped), in path order.
pub fn read_crate(src: &Path) -> std::io::Result<Vec<ModuleFile>> {
    let mut files = Vec::new();
    collect(src, src, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn collect(src: &Path, dir: &Path, files: &mut Vec<ModuleFile>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if dir == src && path.file_name().is_some_and(|name| name == "bin") {
                continue;
            }
            collect(src, &path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") && !is_test_file(src, &path) {
            let text = std::fs::read_to_string(&path)?;
            files.push(ModuleFile {
                module: module_of(src, &path),
                code: strip(&text),
                path,
            });
        }
    }
    Ok(())
}

/// Whether `path` holds tests of its parent module (`tests.rs`, or a file under a `tests`
/// folder): tests may reach anywhere.
fn is_test_file(src: &Path, path: &Path) -> bool {
    let relative = path.strip_prefix(src).unwrap_or(path);
    relative
        .iter()
        .any(|part| part == "tests" || part == "tests.rs")
}

/// The module a file under `src` defines: `lib.rs`, `main.rs` the crate; `a/mod.rs` and `a.rs`
/// the module `a`; `a/b.rs` the module `a::b`.
pub fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        let is_root = parts.is_empty() && (stem == "lib" || stem == "main");
        if stem != "mod" && !is_root {
            parts.push(stem.to_string());
        }
    }
    std::iter::once("crate".to_string())
        .chain(parts)
        .collect::<Vec<_>>()
        .join("::")
}

/// `text` without comments, string and character literals (replaced by a blank), and from the
/// first inline test module (`#[cfg(...test...)]` before `mod name {`) to the end of the file,
/// where this workspace keeps them.
pub fn strip(text: &str) -> String {
    let code = without_comments_and_literals(text);
    let lines: Vec<&str> = code.lines().collect();
    let cut = (0..lines.len()).find(|&i| {
        let line = lines[i].trim();
        line.starts_with("#[cfg(")
            && line.contains("test")
            && lines[i + 1..].iter().take(3).any(|next| {
                let next = next.trim();
                next.starts_with("mod ") && next.ends_with('{')
            })
    });
    match cut {
        Some(cut) => lines[..cut].join("\n"),
        None => code,
    }
}

fn without_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        match chars[i] {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
            }
            'r' if matches!(next, Some('"') | Some('#')) && raw_string_at(&chars, i) => {
                i = skip_raw_string(&chars, i);
                out.push_str("\"\"");
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' if char_literal_len(&chars, i).is_some() => {
                i += char_literal_len(&chars, i).expect("checked");
                out.push_str("' '");
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Whether `r` at `i` starts a raw string (`r"`, `r#"`), not an identifier ending in `r`.
fn raw_string_at(chars: &[char], i: usize) -> bool {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

fn skip_raw_string(chars: &[char], i: usize) -> usize {
    let mut j = i + 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    j += 1; // the opening quote
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return j + 1 + hashes;
        }
        j += 1;
    }
    j
}

/// The length of a character literal at `i` (`'a'`, `'\n'`, `'\u{1F600}'`), or `None` for a
/// lifetime (`'a`).
fn char_literal_len(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i + 1) == Some(&'\\') {
        let close = (i + 2..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')?;
        return Some(close - i + 1);
    }
    (chars.get(i + 2) == Some(&'\'')).then_some(3)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_as_the_modules_they_define() {
        let src = Path::new("/x/src");
        let module = |file: &str| module_of(src, &src.join(file));
        assert_eq!(module("lib.rs"), "crate");
        assert_eq!(module("main.rs"), "crate");
        assert_eq!(module("checker/mod.rs"), "crate::checker");
        assert_eq!(module("checker/memo.rs"), "crate::checker::memo");
        assert_eq!(module("cli.rs"), "crate::cli");
    }

    #[test]
    fn comments_literals_and_test_modules_are_not_code() {
        let text = "use crate::a; // crate::b\n/* crate::c */ let s = \"crate::d\";\n\
                    let r = r#\"crate::e\"#; let c = '\"'; fn f<'a>(x: &'a str) {}\n\
                    #[cfg(test)]\nmod helpers;\nuse crate::g;\n\
                    #[cfg(all(test, not(loom)))]\nmod tests {\n    use crate::f;\n}\n";
        let code = strip(text);
        assert!(code.contains("crate::a"));
        assert!(
            code.contains("crate::g"),
            "a test module's declaration does not cut"
        );
        for gone in ["crate::b", "crate::c", "crate::d", "crate::e", "crate::f"] {
            assert!(!code.contains(gone), "{gone} left in {code:?}");
        }
        assert!(code.contains("fn f<'a>"), "a lifetime is code: {code:?}");
    }
}
