//! What every fault of a plan is to the nemesis: a [`Fault`] is drawn before the run and
//! injected during it; what it did is an [`Injected`], which the run holds, ticks and heals; a
//! [`FaultKind`] says what a kind of fault needs and how a plan draws one. Each family of faults
//! implements them in its own file under `faults/`; `kind.rs` registers every kind.

use super::error::{Finding, NemesisError};
use super::inject::Nemesis;
use super::target::Target;
use crate::links::Network;
use node::NodeId;
use std::any::Any;
use std::fmt;
use std::time::{Duration, Instant};
use threadsim::DetRng;

/// One fault of a plan, with everything drawn from the seed that it needs.
pub trait Fault: fmt::Display + fmt::Debug + Send + Sync {
    /// The kind it is one of.
    fn kind(&self) -> FaultKind;

    /// Injects it into the nemesis's cluster: what was done (naming the nodes it hit), and
    /// what healing it takes. An error means it could not be injected (the run goes on).
    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError>;

    /// A copy of it (a plan is cloned).
    fn clone_box(&self) -> Box<dyn Fault>;

    /// It, to be looked at as its own type (tests that read a plan).
    fn as_any(&self) -> &dyn Any;
}

impl Clone for Box<dyn Fault> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl PartialEq for dyn Fault {
    /// Two faults are the same when they are of one type with the same values: their debug
    /// forms (every field) agree.
    fn eq(&self, other: &Self) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

/// A fault just injected: what was done, and what is left to heal.
pub struct Injection {
    /// What was done, naming the nodes it hit.
    pub what: String,
    /// What healing it takes.
    pub injected: Box<dyn Injected>,
}

impl Injection {
    /// `what` was done, and `injected` heals it.
    pub fn new(what: String, injected: impl Injected + 'static) -> Injection {
        assert!(!what.is_empty(), "an injection says what it did");
        Injection {
            what,
            injected: Box::new(injected),
        }
    }
}

/// A fault in place: the run holds it, may tick it, and heals it when its hold ends.
pub trait Injected: Send {
    /// Heals it: what came of it, or what the servers did wrong. A node that must stop has
    /// until `limit` to.
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, limit: Instant) -> Result<String, Finding>;

    /// The nodes it keeps down on purpose (their exit is not a finding).
    fn down(&self) -> Vec<NodeId> {
        Vec::new()
    }

    /// Whether it lasts through the fault after it (clock skew: a condition the next fault
    /// meets, not a fault of its own moment).
    fn lasts_through_next_fault(&self) -> bool {
        false
    }

    /// Whether it is healed as soon as its node has stopped, with no hold to wait out (a disk
    /// that fails: the node must exit, and is restarted then).
    fn healed_once_stopped(&self) -> bool {
        false
    }

    /// Acts while it holds, called every few milliseconds (a clock strobe flips its rates).
    /// An error is a finding.
    fn tick(&mut self, _nemesis: &mut Nemesis<'_>) -> Result<(), Finding> {
        Ok(())
    }
}

/// What a kind is: everything about it that does not depend on one drawn fault.
pub struct KindSpec {
    /// Its name on the command line (`--faults`).
    pub name: &'static str,
    /// What it does, in a line (for `--help`).
    pub describe: &'static str,
    /// Whether a correct cluster must survive it with every read mode.
    pub safe: bool,
    /// Whether `all` names it.
    pub in_all: bool,
    /// Which networks can make it.
    pub network: NetworkNeed,
    /// Whether it holds packets back (on network namespaces, through a queue the nemesis reads).
    pub holds_packets: bool,
    /// Whether it needs the servers' data directories on lossy disks (FUSE and root).
    pub needs_lossy_disks: bool,
    /// Whether the servers themselves must make it (clock rates, a failing disk, membership
    /// changes at an administrator's request) or it speaks this project's wire.
    pub needs_cooperation: bool,
    /// How long it may stop the writes when it hits the leader.
    pub outage: Outage,
    /// Draws one fault of the kind at `target` in a cluster of `nodes` nodes, and how long it
    /// holds.
    pub draw: Draw,
}

/// How a plan draws one fault of a kind: from the plan's random stream, at a target, in a
/// cluster of so many nodes; the fault and how long it holds.
pub type Draw = fn(&mut DetRng, Target, u32) -> (Box<dyn Fault>, Duration);

impl KindSpec {
    /// What most kinds are, for a kind's declaration to say only how it differs
    /// (`..KindSpec::PLAIN`): safe, in `all`, made on any network, needing no lossy disk and no
    /// cooperation, and the leader lost while it holds. Its name and draw are every kind's own.
    pub const PLAIN: KindSpec = KindSpec {
        name: "",
        describe: "",
        safe: true,
        in_all: true,
        network: NetworkNeed::Any,
        holds_packets: false,
        needs_lossy_disks: false,
        needs_cooperation: false,
        outage: Outage::LeaderLost,
        draw: |_, _, _| unreachable!("every kind declares its own draw"),
    };
}

/// Which networks can make a kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkNeed {
    /// Any, direct links included (the kind does not touch links).
    Any,
    /// Links the nemesis can cut or slow: proxies or network namespaces.
    Links,
    /// Packets the nemesis can drop, duplicate or hold one by one: network namespaces.
    Packets,
}

/// How long a fault that hits the leader may stop the writes, in the node's own terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outage {
    /// The leader lost: the node's bound for a leader that is gone.
    LeaderLost,
    /// The leader deaf or hearing late: the node's bound for a leader that hears its followers
    /// late or not at all.
    LeaderDeaf,
    /// Nothing: the leader must not notice (only the clients' own retries).
    Nothing,
    /// No bound: the node's timing assumptions do not hold.
    Unbounded,
}

/// A kind of fault, as `--faults` names it: one of [`FaultKind::ALL`].
#[derive(Clone, Copy)]
pub struct FaultKind(pub(super) &'static KindSpec);

impl FaultKind {
    /// The kind `spec` declares (registered in `FaultKind::ALL`, which a test checks).
    pub const fn of(spec: &'static KindSpec) -> FaultKind {
        FaultKind(spec)
    }

    /// Everything about the kind.
    pub fn spec(self) -> &'static KindSpec {
        self.0
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// What it does, in a line (for `--help`).
    pub fn describe(self) -> &'static str {
        self.0.describe
    }

    /// Whether a correct cluster must survive it with every read mode.
    pub fn is_safe(self) -> bool {
        self.0.safe
    }

    /// Whether `all` names it.
    pub fn in_all(self) -> bool {
        self.0.in_all
    }

    /// Whether it needs the servers' data directories on lossy disks (FUSE and root).
    pub fn needs_lossy_disks(self) -> bool {
        self.0.needs_lossy_disks
    }

    /// Whether links through `network` can make it: lost, duplicated, jittered and reordered
    /// packets need network namespaces (a proxy carries byte streams, in order), and cuts and
    /// delays either.
    pub fn works_on(self, network: Network) -> bool {
        match self.0.network {
            NetworkNeed::Any => true,
            NetworkNeed::Links => network != Network::Direct,
            NetworkNeed::Packets => network == Network::Namespaces,
        }
    }

    /// Whether it holds packets back: on network namespaces, through a queue that the nemesis
    /// reads (`iptables` and the kernel's nfnetlink_queue).
    pub fn holds_packets(self) -> bool {
        self.0.holds_packets
    }

    /// Whether the servers themselves must make it, or it speaks this project's wire.
    pub fn needs_cooperation(self) -> bool {
        self.0.needs_cooperation
    }

    /// How long it may stop the writes when it hits the leader.
    pub fn outage(self) -> Outage {
        self.0.outage
    }

    /// Draws one fault of the kind at `target` in a cluster of `nodes` nodes, and its hold.
    pub fn draw(self, rng: &mut DetRng, target: Target, nodes: u32) -> (Box<dyn Fault>, Duration) {
        let (fault, hold) = (self.0.draw)(rng, target, nodes);
        assert!(
            !hold.is_zero(),
            "{}: a fault holds for a while",
            self.name()
        );
        (fault, hold)
    }
}

impl PartialEq for FaultKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for FaultKind {}

impl std::hash::Hash for FaultKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl fmt::Debug for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultKind({})", self.name())
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Implements [`Fault`]'s `clone_box` and `as_any` for a fault type that is `Clone`.
macro_rules! fault_boilerplate {
    () => {
        fn clone_box(&self) -> Box<dyn $crate::nemesis::fault::Fault> {
            Box::new(self.clone())
        }

        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    };
}
pub(crate) use fault_boilerplate;
