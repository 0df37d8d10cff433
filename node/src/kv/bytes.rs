//! The byte encoding the key-value service's commands and snapshots share: little-endian
//! integers, and text as a u32 length and UTF-8 bytes. Reading checks every length against the
//! bytes that are left and says what was wrong.

/// Appends `text` as its length (u32) and bytes.
pub(super) fn put_text(bytes: &mut Vec<u8>, text: &str) {
    let len = u32::try_from(text.len()).expect("a key or value over 4 GiB");
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(text.as_bytes());
}

/// Reads encoded fields from the front of a byte string.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl Reader<'_> {
    fn take(&mut self, len: usize) -> Result<&[u8], &'static str> {
        if self.0.len() < len {
            return Err("truncated");
        }
        let (head, tail) = self.0.split_at(len);
        self.0 = tail;
        Ok(head)
    }

    /// One byte.
    pub(super) fn byte(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1)?[0])
    }

    /// A u64.
    pub(super) fn u64(&mut self) -> Result<u64, &'static str> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// A text written by [`put_text`].
    pub(super) fn text(&mut self) -> Result<String, &'static str> {
        let len = self.take(4)?;
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "not UTF-8")
    }

    /// A count of items of at least `min_item_bytes` each, refused if the bytes left cannot
    /// hold that many (a forged count must not make a reader allocate or loop for nothing).
    pub(super) fn count(&mut self, min_item_bytes: usize) -> Result<usize, &'static str> {
        let count = self.u64()?;
        match usize::try_from(count) {
            Ok(count) if count.saturating_mul(min_item_bytes) <= self.0.len() => Ok(count),
            _ => Err("a count larger than the bytes left can hold"),
        }
    }

    /// Whether every byte was read.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
