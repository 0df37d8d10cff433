//! Sequential specifications and a linearizability checker.
//!
//! A history is **linearizable** when every operation appears to take effect at one instant
//! between its call and its return, and the outputs match a sequential execution of the
//! [`Model`] in that order. Operations whose outcome is unknown (the client timed out) may take
//! effect at any point after their call, or never.
//!
//! ```
//! use models::{check, CheckOptions, Operation, Register, RegisterInput, RegisterOutput, Verdict};
//!
//! // Client 0 writes 1 (time 0-10); client 1 then reads at time 20-30 and sees nothing: illegal,
//! // the write completed before the read began.
//! let history = vec![
//!     Operation::returned(0, RegisterInput::Write(1), RegisterOutput::Written, 0, 10),
//!     Operation::returned(1, RegisterInput::Read, RegisterOutput::Value(None), 20, 30),
//! ];
//! let report = check(&Register, &history, &CheckOptions::default());
//! assert_eq!(report.verdict, Verdict::NotLinearizable);
//! ```
#![deny(missing_docs)]

pub mod checker;
pub mod cli;
mod cli_files;
mod cli_txn;
pub mod corpus;
pub mod formats;
mod heap;
pub mod history;
pub mod html;
pub mod kv;
pub mod kv_value;
pub mod list_append;
pub mod model;
pub mod online;
pub mod register;
pub mod register_ops;
pub mod register_stale;
pub mod register_zones;
#[cfg(all(test, not(any(loom, shuttle))))]
mod test_histories;

pub use checker::{
    check, check_partitions, Budget, CheckOptions, Counterexample, PartitionVerdict, Report,
    Verdict,
};
pub use history::{History, Operation, Outcome, Partition, Time};
pub use kv::{into_partitions_by_key, partition_by_key, KeyValue, KvInput, KvOutput, KvStore};
pub use kv_value::KvValue;
pub use list_append::{check_list_append, MicroOp, Txn, TxnId, TxnOutcome, TxnReport};
pub use model::{Decision, Model, Pruning};
pub use online::{OnlineChecker, OnlineFigures, OnlineViolation, OpId};
pub use register::{Register, RegisterInput, RegisterOutput};
