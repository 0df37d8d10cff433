//! [`Rule`]: a folder that must not import another.

use crate::graph::ModuleGraph;

/// Modules under `from` must not import modules under `forbidden` (both module paths of one
/// crate, `crate::core`), for the reason `why`.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The importing folder.
    pub from: &'static str,
    /// The folder it must not import.
    pub forbidden: &'static str,
    /// Why not, for the message.
    pub why: &'static str,
}

/// An import a rule forbids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// The module that imports.
    pub importer: String,
    /// The path it names.
    pub path: String,
    /// Why that is not allowed.
    pub why: &'static str,
}

impl Rule {
    /// Every import in `graph` this rule forbids.
    pub fn breaches(&self, graph: &ModuleGraph) -> Vec<Breach> {
        let under = |module: &str, folder: &str| {
            module == folder || module.starts_with(&format!("{folder}::"))
        };
        graph
            .imports
            .iter()
            .filter(|(importer, _)| under(importer, self.from))
            .flat_map(|(importer, targets)| {
                targets
                    .iter()
                    .filter(|(target, _)| under(target, self.forbidden))
                    .map(|(_, path)| Breach {
                        importer: importer.clone(),
                        path: path.clone(),
                        why: self.why,
                    })
            })
            .collect()
    }
}
