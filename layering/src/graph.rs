//! [`ModuleGraph`]: which module of a crate imports which, and its cycles.

use crate::paths::named_paths;
use crate::source::read_crate;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules of one crate (one per file) and the imports between them that are neither up
/// nor down the module tree.
///
/// Seen from outside, a folder is one unit: an import from `crate::a::x` of `crate::b::y` makes
/// the folder `crate::a` import `crate::b` (the children of the deepest module holding both).
/// `edges` link such siblings, and are where cycles are looked for; `imports` keeps each file's
/// own imports, for the rules.
#[derive(Clone, Debug, Default)]
pub struct ModuleGraph {
    /// Every module with a file of its own.
    pub modules: BTreeSet<String>,
    /// Each module's imports of unrelated modules, with one path it names there.
    pub imports: BTreeMap<String, BTreeMap<String, String>>,
    /// Sibling to sibling, with one import that makes the edge (`crate::a::x names
    /// crate::b::y::Z`).
    pub edges: BTreeMap<String, BTreeMap<String, String>>,
}

impl ModuleGraph {
    /// The graph of the crate whose sources are under `src`.
    pub fn of_crate(src: &Path) -> std::io::Result<ModuleGraph> {
        let files = read_crate(src)?;
        let mut graph = ModuleGraph {
            modules: files.iter().map(|file| file.module.clone()).collect(),
            ..ModuleGraph::default()
        };
        for file in &files {
            for path in named_paths(&file.module, &file.code) {
                let Some(target) = graph.module_of_path(&path) else {
                    continue;
                };
                if related(&file.module, &target) {
                    continue;
                }
                let (from, to) = siblings(&file.module, &target);
                graph
                    .edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| format!("{} names {path}", file.module));
                graph
                    .imports
                    .entry(file.module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(path);
            }
        }
        Ok(graph)
    }

    /// The module a path leads into: the longest module that is a prefix of it.
    fn module_of_path(&self, path: &str) -> Option<String> {
        let segments: Vec<&str> = path.split("::").collect();
        (1..=segments.len())
            .rev()
            .map(|len| segments[..len].join("::"))
            .find(|candidate| self.modules.contains(candidate))
    }

    /// The siblings `module` imports, each with an import that makes the edge.
    pub fn edges_from(&self, module: &str) -> impl Iterator<Item = (&String, &String)> {
        self.edges.get(module).into_iter().flatten()
    }

    /// The same graph with no edge into or out of the folder `module` (a folder whose cycles
    /// with the rest are allowed, and said why, by the caller).
    pub fn without(mut self, module: &str) -> ModuleGraph {
        self.edges.remove(module);
        for targets in self.edges.values_mut() {
            targets.remove(module);
        }
        self
    }
}

/// The children of the deepest module holding both `a` and `b` (unrelated) that hold each.
fn siblings(a: &str, b: &str) -> (String, String) {
    let a: Vec<&str> = a.split("::").collect();
    let b: Vec<&str> = b.split("::").collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    (a[..=common].join("::"), b[..=common].join("::"))
}

/// Whether one module is the other or an ancestor of it.
fn related(a: &str, b: &str) -> bool {
    let under =
        |inner: &str, outer: &str| inner == outer || inner.starts_with(&format!("{outer}::"));
    under(a, b) || under(b, a)
}

/// Every cycle of imports in `graph`: the strongly connected components of more than one module
/// of its edges (siblings), each in module order.
pub fn cycles(graph: &ModuleGraph) -> Vec<Vec<String>> {
    let mut components = strongly_connected(graph);
    components.retain(|component| component.len() > 1);
    components.sort();
    components
}

/// Tarjan's algorithm, iterating modules and imports in order so the result is the same on
/// every run.
fn strongly_connected(graph: &ModuleGraph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g ModuleGraph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        components: Vec<Vec<String>>,
    }
    fn visit<'g>(state: &mut State<'g>, module: &'g str) {
        let index = state.index.len();
        state.index.insert(module, index);
        state.low.insert(module, index);
        state.stack.push(module);
        state.on_stack.insert(module);
        let graph = state.graph;
        for (next, _) in graph.edges_from(module) {
            if !state.index.contains_key(next.as_str()) {
                visit(state, next);
                let low = state.low[module].min(state.low[next.as_str()]);
                state.low.insert(module, low);
            } else if state.on_stack.contains(next.as_str()) {
                let low = state.low[module].min(state.index[next.as_str()]);
                state.low.insert(module, low);
            }
        }
        if state.low[module] == state.index[module] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(top);
                component.push(top.to_string());
                if top == module {
                    break;
                }
            }
            component.sort();
            state.components.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for module in &graph.modules {
        if !state.index.contains_key(module.as_str()) {
            visit(&mut state, module);
        }
    }
    state.components
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> ModuleGraph {
        let mut graph = ModuleGraph::default();
        for &(from, to) in edges {
            graph.modules.insert(from.to_string());
            graph.modules.insert(to.to_string());
            graph
                .edges
                .entry(from.to_string())
                .or_default()
                .insert(to.to_string(), format!("{to}::X"));
        }
        graph
    }

    #[test]
    fn a_cycle_is_found_and_a_chain_is_not() {
        let chain = graph(&[("crate::a", "crate::b"), ("crate::b", "crate::c")]);
        assert!(cycles(&chain).is_empty());
        let cyclic = graph(&[
            ("crate::a", "crate::b"),
            ("crate::b", "crate::c"),
            ("crate::c", "crate::a"),
            ("crate::c", "crate::d"),
        ]);
        assert_eq!(cycles(&cyclic), [["crate::a", "crate::b", "crate::c"]]);
    }

    #[test]
    fn an_import_between_folders_links_the_folders() {
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            siblings("crate::sync::controlled", "crate::simulation"),
            pair("crate::sync", "crate::simulation")
        );
        assert_eq!(
            siblings("crate::checker::memo", "crate::checker::search"),
            pair("crate::checker::memo", "crate::checker::search")
        );
    }

    #[test]
    fn a_module_and_its_ancestors_are_not_imports() {
        assert!(related("crate::checker::memo", "crate::checker"));
        assert!(related("crate", "crate::checker"));
        assert!(!related("crate::checker::memo", "crate::checker::search"));
        assert!(!related("crate::check", "crate::checker"));
    }
}
