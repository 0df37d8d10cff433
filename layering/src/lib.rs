//! The layering rules of the workspace, checked from the sources (docs/layering.md says them).
//!
//! A crate's modules form a graph: module `a` imports module `b` when `a`'s code names a path
//! into `b` (`use crate::b::Thing`, `super::b::f()`). A module naturally uses its ancestors
//! and its descendants (a parent declares its children and re-exports their items; a child uses
//! its parent's types), so those edges are left out; the rest must form no cycle, and a folder
//! may be forbidden to import another ([`Rule`]). Inline test modules are left out: tests may
//! reach anywhere.
//!
//! The reading is lexical (comments and strings are dropped, `use` groups expanded, then every
//! path that starts with `crate::`, `super::` or `self::` resolved to the longest module it
//! names), which is enough for code that imports by path, as this workspace does.
//!
//! Between crates, a crate may be forbidden to depend on another ([`CrateRule`]), read from
//! the `[dependencies]` of its manifest.

mod graph;
mod manifest;
mod paths;
mod rule;
mod source;

pub use graph::{cycles, ModuleGraph};
pub use manifest::{dependencies, dependencies_of, CrateRule};
pub use rule::{Breach, Rule};
