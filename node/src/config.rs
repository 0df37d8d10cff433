//! Timing and limits of a node.

use crate::mutation::MutationSet;
use std::time::Duration;

/// How a node times its elections and heartbeats, and the limits it works within.
#[derive(Clone, Debug)]
pub struct Config {
    /// Shortest election timeout; each timeout is drawn uniformly from min..=max.
    pub election_timeout_min: Duration,
    /// Longest election timeout.
    pub election_timeout_max: Duration,
    /// How often a leader sends AppendEntries to an idle follower.
    pub heartbeat_interval: Duration,
    /// How long a vote request or AppendEntries with entries waits for its reply.
    pub rpc_timeout: Duration,
    /// Check-quorum: a leader that has not heard from a majority for this long steps down. At
    /// least the longest election timeout (a follower would not notice a silent leader sooner),
    /// and by default exactly that, as etcd does: a leader that sends but cannot receive holds
    /// its followers no longer than one election timeout. A network that holds replies back
    /// for seconds needs a longer window, or it deposes healthy leaders.
    pub leader_quorum_timeout: Duration,
    /// The most entries one AppendEntries carries.
    pub max_entries_per_append: usize,
    /// The most command bytes one AppendEntries carries (at most [`MAX_BYTES_PER_APPEND`]): a
    /// lagging follower's catch-up comes in batches that fit a message, however long the
    /// commands. One entry always goes, so a command longer than this travels alone.
    pub max_bytes_per_append: usize,
    /// The most committed entries the applier takes per lock acquisition.
    pub max_entries_per_apply_batch: usize,
    /// The most any node's clock may run fast or slow, in parts per million of true time
    /// (100,000: every clock runs between 0.9x and 1.1x). Lease reads rely on it: a leader's lease
    /// lasts `election_timeout_min * (1 - drift) / (1 + drift)` of its own clock, so it ends
    /// before any follower that acknowledged it can vote for a successor, however the two clocks
    /// drift within the bound. Clocks that drift further, or jump, break lease reads (and only
    /// them).
    pub max_clock_drift_ppm: u64,
    /// Seed of the node's random source (election timeouts).
    pub seed: u64,
    /// Deliberately broken behaviours to switch on (empty for the correct node).
    pub mutations: MutationSet,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            election_timeout_min: Duration::from_millis(300),
            election_timeout_max: Duration::from_millis(600),
            heartbeat_interval: Duration::from_millis(100),
            rpc_timeout: Duration::from_millis(100),
            leader_quorum_timeout: Duration::from_millis(600),
            max_entries_per_append: 256,
            max_bytes_per_append: 4 << 20,
            max_entries_per_apply_batch: 64,
            max_clock_drift_ppm: 100_000,
            seed: 0,
            mutations: MutationSet::default(),
        }
    }
}

/// The largest [`Config::max_bytes_per_append`]: with one command of at most
/// [`crate::persist::MAX_COMMAND_BYTES`] on top, an AppendEntries stays far below any transport's
/// frame limit (64 MiB over TCP).
pub const MAX_BYTES_PER_APPEND: usize = 16 << 20;

/// A configuration that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The election timeout range is empty or zero.
    #[error("election timeout range {min:?}..={max:?} is empty or zero")]
    ElectionTimeoutRange {
        /// The configured minimum.
        min: Duration,
        /// The configured maximum.
        max: Duration,
    },
    /// Heartbeats at least as slow as the election timeout would cause needless elections.
    #[error("heartbeat interval {heartbeat:?} must be shorter than the election timeout {min:?}")]
    HeartbeatTooSlow {
        /// The configured heartbeat interval.
        heartbeat: Duration,
        /// The configured minimum election timeout.
        min: Duration,
    },
    /// A leader would step down before a follower could even notice it was gone.
    #[error(
        "leader quorum timeout {quorum:?} must be at least the longest election timeout {max:?}"
    )]
    QuorumTimeoutTooShort {
        /// The configured quorum timeout.
        quorum: Duration,
        /// The configured maximum election timeout.
        max: Duration,
    },
    /// A clock drift bound of 100% or more leaves no lease at all.
    #[error("max clock drift {0} ppm must be below 1,000,000 (100%)")]
    DriftTooLarge(u64),
    /// A limit of zero would stop replication or apply.
    #[error("{0} must be at least 1")]
    ZeroLimit(&'static str),
    /// A batch larger than a message can carry.
    #[error("max_bytes_per_append {0} is over the limit of {MAX_BYTES_PER_APPEND}")]
    AppendTooLarge(usize),
}

impl Config {
    /// Sets the election timeout range to `min..=max`, and the leader quorum timeout to `max`
    /// if it was shorter (a leader steps down no sooner than a follower could notice it gone).
    pub fn set_election_timeouts(&mut self, min: Duration, max: Duration) {
        self.election_timeout_min = min;
        self.election_timeout_max = max;
        self.leader_quorum_timeout = self.leader_quorum_timeout.max(max);
    }

    /// The longest a healthy majority goes without committing after it stops hearing its
    /// leader (the leader crashed, paused, cut off with a minority, or mute). A follower's
    /// election timer fires by `max`; the others' leases (`min` since they last heard the leader)
    /// have run out by then, so its pre-vote and vote win unless the votes split, which costs one
    /// more `max`. The pre-vote, the vote and the new leader's first append each take a message
    /// out and back: `2 * max + 4 * rpc_timeout`.
    pub fn commit_bound_leader_lost(&self) -> Duration {
        2 * self.election_timeout_max + 4 * self.rpc_timeout
    }

    /// The longest a healthy majority goes without committing after its leader stops hearing it
    /// while still sending (deaf): its heartbeats keep the followers from campaigning until
    /// check-quorum deposes it, which it checks every `min` and does once no majority answered
    /// for `leader_quorum_timeout`; then as [`Config::commit_bound_leader_lost`].
    pub fn commit_bound_leader_deaf(&self) -> Duration {
        self.leader_quorum_timeout + self.election_timeout_min + self.commit_bound_leader_lost()
    }

    /// What each split vote beyond the one the bounds above allow for adds to them: the next
    /// candidate's election timer fires within `max` of the split, and its pre-vote and vote each
    /// take a message out and back: `max + 2 * rpc_timeout`. Split votes are a matter of chance
    /// (two timers firing within a round trip of each other); a cluster whose majority must be
    /// unanimous (four of six, three of four) splits more often than one with a vote to spare.
    pub fn commit_bound_per_further_split(&self) -> Duration {
        self.election_timeout_max + 2 * self.rpc_timeout
    }

    /// Checks that the configuration can work.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let (min, max) = (self.election_timeout_min, self.election_timeout_max);
        if min.is_zero() || min > max {
            return Err(ConfigError::ElectionTimeoutRange { min, max });
        }
        if self.heartbeat_interval.is_zero() || self.heartbeat_interval >= min {
            return Err(ConfigError::HeartbeatTooSlow {
                heartbeat: self.heartbeat_interval,
                min,
            });
        }
        if self.leader_quorum_timeout < max {
            return Err(ConfigError::QuorumTimeoutTooShort {
                quorum: self.leader_quorum_timeout,
                max,
            });
        }
        if self.max_clock_drift_ppm >= 1_000_000 {
            return Err(ConfigError::DriftTooLarge(self.max_clock_drift_ppm));
        }
        if self.rpc_timeout.is_zero() {
            return Err(ConfigError::ZeroLimit("rpc_timeout"));
        }
        if self.max_entries_per_append == 0 {
            return Err(ConfigError::ZeroLimit("max_entries_per_append"));
        }
        if self.max_bytes_per_append == 0 {
            return Err(ConfigError::ZeroLimit("max_bytes_per_append"));
        }
        if self.max_bytes_per_append > MAX_BYTES_PER_APPEND {
            return Err(ConfigError::AppendTooLarge(self.max_bytes_per_append));
        }
        if self.max_entries_per_apply_batch == 0 {
            return Err(ConfigError::ZeroLimit("max_entries_per_apply_batch"));
        }
        Ok(())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn impossible_configs_are_refused() {
        assert_eq!(Config::default().validate(), Ok(()));
        let inverted = Config {
            election_timeout_min: Duration::from_millis(500),
            election_timeout_max: Duration::from_millis(100),
            ..Config::default()
        };
        assert!(matches!(
            inverted.validate(),
            Err(ConfigError::ElectionTimeoutRange { .. })
        ));
        let slow = Config {
            heartbeat_interval: Duration::from_secs(1),
            ..Config::default()
        };
        assert!(matches!(
            slow.validate(),
            Err(ConfigError::HeartbeatTooSlow { .. })
        ));
        for (bytes, refused) in [
            (0, true),
            (MAX_BYTES_PER_APPEND, false),
            (MAX_BYTES_PER_APPEND + 1, true),
        ] {
            let config = Config {
                max_bytes_per_append: bytes,
                ..Config::default()
            };
            assert_eq!(
                config.validate().is_err(),
                refused,
                "{bytes} bytes per append"
            );
        }
    }
}
