//! The vocabulary of a run, shared by every layer above the node.
//!
//! - **What a run is**: [`RunSpec`] (the workload, the cluster, the fault mix, the broken
//!   variants, the scheduler and the seed), whose text form is written and read only here: the
//!   flags of a replay line ([`RunSpec::flags`], [`RunSpec::parse_flags`]) and the notes that head
//!   a schedule file ([`RunSpec::notes`], [`RunSpec::from_notes`]).
//! - **Swarm testing**: [`RunSpec::swarmed`], the configuration a seed draws for itself.
//! - **The names a run uses**: [`Mutation`] (the node's broken variants), [`ReadMode`],
//!   [`ClockSkew`], [`SchedulerKind`], the kinds of fault in [`FaultMix`].
//! - **What a run did**: [`RunFigures`], once.
//!
//! Nothing here has a lock, a thread or a channel, so it is not twinned: the ordinary build of
//! the simulation and its shuttle build (`twins/`) take the same types, and the engine glue in
//! `interleave` converts none of them.

mod clock_skew;
mod fault_windows;
mod faults;
mod figures;
mod mutation;
mod read_mode;
mod scheduler;
mod service_levels;
mod spec;
mod storage;
mod swarm;
mod text;

pub use clock_skew::{ClockSkew, UnknownClockSkew};
pub use fault_windows::{FaultWindows, WindowStats};
pub use faults::FaultMix;
pub use figures::RunFigures;
pub use mutation::{Mutation, UnknownMutation};
pub use read_mode::ReadMode;
pub use scheduler::SchedulerKind;
pub use service_levels::{ServiceLevels, SERVICE_LEVELS};
pub use spec::{bounds, RunSpec, Workload};
pub use storage::SimStorage;
pub use swarm::{SWARM_NODES, SWARM_READ_MODES, SWARM_SNAPSHOT_THRESHOLDS};
pub use text::{SpecError, FLAGS_NOTE, SEED_NOTE, VIOLATION_NOTE};
