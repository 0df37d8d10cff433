//! The crates a crate depends on, read from its `Cargo.toml`: the names in its `[dependencies]`
//! table (not its dev-dependencies: a test may drive the crate from above), so a crate can be
//! forbidden to depend on another ([`CrateRule`]).

use std::path::Path;

/// A crate that must not depend on another, and why.
#[derive(Clone, Copy, Debug)]
pub struct CrateRule {
    /// The crate (its folder).
    pub krate: &'static str,
    /// The crate it must not depend on.
    pub forbidden: &'static str,
    /// Why.
    pub why: &'static str,
}

/// The names of the dependencies in the `[dependencies]` table of the manifest `text`.
pub fn dependencies(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if !inside || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or_default()
            .trim();
        if !name.is_empty() {
            names.push(name.to_string());
        }
    }
    names
}

/// The dependencies of the crate whose manifest is at `path`.
pub fn dependencies_of(path: &Path) -> std::io::Result<Vec<String>> {
    Ok(dependencies(&std::fs::read_to_string(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_dependencies_table_counts() {
        let text = "[package]\nname = \"server\"\n\n[dependencies]\nnode.workspace = true\n\
                    # a comment = no\nhmac = \"0.12\"\nclap = { version = \"4\" }\n\n\
                    [dev-dependencies]\nlab = { path = \"../lab\" }\n";
        assert_eq!(dependencies(text), ["node", "hmac", "clap"]);
    }
}
