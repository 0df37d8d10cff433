//! The module paths a file's code names: `use` statements with their groups expanded, and every
//! other path that starts with `crate::`, `super::` or `self::`, made absolute (`crate::...`).

/// Every path `code` (of the module `module`) names, absolute, in order of appearance.
pub fn named_paths(module: &str, code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let (statements, rest) = use_statements(code);
    for statement in statements {
        for path in expand(&statement) {
            if let Some(absolute) = absolute(module, &path) {
                paths.push(absolute);
            }
        }
    }
    for path in inline_paths(&rest) {
        if let Some(absolute) = absolute(module, &path) {
            paths.push(absolute);
        }
    }
    paths
}

/// The bodies of the `use` statements of `code` (`crate::{a, b::C as D}`, one space at most
/// between words and none around punctuation), and the code without them.
fn use_statements(code: &str) -> (Vec<String>, String) {
    let mut statements = Vec::new();
    let mut others = String::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        others.push_str(&rest[..at]);
        let after = &rest[at + 3..];
        let end = after.find(';').unwrap_or(after.len());
        let mut body = after[..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for mark in ["::", "{", "}", ","] {
            body = body
                .replace(&format!(" {mark}"), mark)
                .replace(&format!("{mark} "), mark);
        }
        statements.push(body);
        rest = &after[end..];
    }
    others.push_str(rest);
    (statements, others)
}

/// The byte offset of `word` in `text` standing alone (not part of an identifier).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident) && after.is_some_and(char::is_whitespace) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// A `use` body with its groups expanded: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`;
/// `as` renames and `self` in a group are dropped (`a::{self, b}` is `a`, `a::b`).
fn expand(statement: &str) -> Vec<String> {
    let Some(open) = statement.find('{') else {
        let path = statement.split(" as ").next().unwrap_or(statement);
        return vec![path.trim().trim_end_matches("::*").to_string()];
    };
    let prefix = &statement[..open];
    let Some(close) = matching_brace(statement, open) else {
        return Vec::new();
    };
    split_top_level(&statement[open + 1..close])
        .into_iter()
        .flat_map(|part| {
            if part == "self" {
                vec![prefix.trim_end_matches("::").to_string()]
            } else {
                expand(&format!("{prefix}{part}"))
            }
        })
        .collect()
}

fn matching_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text.char_indices().skip_while(|&(i, _)| i < open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_top_level(group: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().filter(|part| !part.is_empty()).collect()
}

/// Every path outside `use` statements that starts with `crate::`, `super::` or `self::`.
fn inline_paths(code: &str) -> Vec<String> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let starts_word = i == 0 || !is_ident(chars[i - 1].1);
        if starts_word && is_ident(c) {
            let mut j = i;
            while j < chars.len() && (is_ident(chars[j].1) || chars[j].1 == ':') {
                j += 1;
            }
            let end = chars.get(j).map_or(code.len(), |&(end, _)| end);
            let path = &code[at..end];
            if ["crate::", "super::", "self::"]
                .iter()
                .any(|start| path.starts_with(start))
            {
                paths.push(path.trim_end_matches(':').to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    paths
}

/// `path`, named in `module`, as an absolute path (`None` for a path into another crate).
fn absolute(module: &str, path: &str) -> Option<String> {
    let mut base: Vec<&str> = module.split("::").collect();
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    match segments.peek().copied() {
        Some("crate") => {
            segments.next();
            base = vec!["crate"];
        }
        Some("self") => {
            segments.next();
        }
        Some("super") => {
            while segments.peek() == Some(&"super") {
                segments.next();
                base.pop();
            }
            if base.is_empty() {
                return None;
            }
        }
        _ => return None,
    }
    Some(
        base.into_iter()
            .map(str::to_string)
            .chain(segments.map(str::to_string))
            .collect::<Vec<_>>()
            .join("::"),
    )
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn use_groups_renames_and_relative_paths_become_absolute_paths() {
        let code = "use super::{bitset::Bitset, memo::{Memo, MAX as M}};\n\
                    pub use self::search::{self, run};\nuse std::fmt;\n\
                    fn f() { crate::broken::x::y(); let a = super::super::top::Z; }";
        let paths = named_paths("crate::checker::search", code);
        assert_eq!(
            paths,
            [
                "crate::checker::bitset::Bitset",
                "crate::checker::memo::Memo",
                "crate::checker::memo::MAX",
                "crate::checker::search::search",
                "crate::checker::search::search::run",
                "crate::broken::x::y",
                "crate::top::Z",
            ]
        );
    }
}
