//! The operations of a [`crate::Register`] and what they return: the vocabulary the register's
//! model and its decisions ([`crate::register_zones`], [`crate::register_stale`]) share.

/// An operation on a [`crate::Register`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterInput {
    /// Read the value.
    Read,
    /// Replace the value.
    Write(i64),
    /// If the value is `expected`, replace it with `new`.
    Cas {
        /// The value the register must hold.
        expected: i64,
        /// The value it then holds.
        new: i64,
    },
}

/// What a [`crate::Register`] operation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterOutput {
    /// A read saw this value (`None`: never written).
    Value(Option<i64>),
    /// A write completed.
    Written,
    /// Whether a compare-and-set swapped. A failed one (`false`) took no effect, but says the
    /// register did not hold the expected value at its linearization point.
    Swapped(bool),
}
