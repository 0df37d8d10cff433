//! [`Change`]: one write or resize of a file that is not yet synced, which a sync or a power
//! cut applies to the file's durable contents.

/// One change to a file not yet synced, in the order it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Bytes written at an offset.
    Write {
        /// Where.
        offset: u64,
        /// What.
        bytes: Vec<u8>,
    },
    /// The length set (a truncation or an extension with zeros).
    Resize(u64),
}

impl Change {
    /// Applies the change to `contents`.
    pub fn apply(&self, contents: &mut Vec<u8>) {
        match self {
            Change::Write { offset, bytes } => {
                let start = usize::try_from(*offset).expect("offsets are below FILE_MAX");
                let end = start + bytes.len();
                if contents.len() < end {
                    contents.resize(end, 0);
                }
                contents[start..end].copy_from_slice(bytes);
            }
            Change::Resize(len) => {
                contents.resize(usize::try_from(*len).expect("below FILE_MAX"), 0);
            }
        }
    }
}
