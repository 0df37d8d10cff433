//! Deliberately broken behaviours, switched on at run time, that the test suite must detect.
//!
//! Each models a real bug; its code path lives in a file of `broken/` named after it. A detector
//! (invariant, liveness check, linearizability check) that passes with a mutation on is a gap in
//! the suite.
//!
//! A production user cannot switch one on: a non-empty [`MutationSet`] can only be built with the
//! `mutations` cargo feature, which the test crates (`sim`, `interleave`, `loom-tests`,
//! `shuttle-tests`) enable. Without it, [`MutationSet::has`] is a constant `false` and the
//! compiler removes every broken path.

use std::collections::BTreeSet;

pub use runspec::{Mutation, UnknownMutation};

/// The mutations switched on for a node (empty: the correct node).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MutationSet(BTreeSet<Mutation>);

/// Whether this build can switch broken variants on: only with the `mutations` feature, which
/// no shipped binary enables (the tests, `interleave mutants` and `interleave chaos --mutation`
/// run a build with it). Without it every set is inert, and every entry point that takes a
/// variant (a `--mutation`, the unsafe-local read mode, a broken write) refuses it.
pub const MUTATIONS_AVAILABLE: bool = cfg!(any(test, feature = "mutations"));

impl MutationSet {
    /// A set with just `mutation` (inert without the `mutations` feature).
    pub fn only(mutation: Mutation) -> MutationSet {
        MutationSet(BTreeSet::from([mutation]))
    }
    /// This set with `mutation` switched on as well (inert without the `mutations` feature).
    pub fn with(mut self, mutation: Mutation) -> MutationSet {
        self.0.insert(mutation);
        self
    }
    /// Whether `mutation` is on (always false without the `mutations` feature).
    pub fn has(&self, mutation: Mutation) -> bool {
        MUTATIONS_AVAILABLE && self.0.contains(&mutation)
    }
    /// Whether no mutation is on.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<Mutation> for MutationSet {
    /// The set of `mutations` (inert without the `mutations` feature).
    fn from_iter<I: IntoIterator<Item = Mutation>>(mutations: I) -> MutationSet {
        MutationSet(mutations.into_iter().collect())
    }
}
