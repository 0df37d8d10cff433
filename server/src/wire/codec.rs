//! Little-endian primitives shared by the messages: fixed-width integers, flags and
//! length-prefixed byte strings.

use super::WireError;

/// Appends fields to a message.
#[derive(Debug, Default)]
pub struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    /// An empty message.
    pub fn new() -> Writer {
        Writer::default()
    }
    /// Appends one byte.
    pub fn u8(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }
    /// Appends a flag as one byte, 0 or 1.
    pub fn flag(&mut self, value: bool) -> &mut Self {
        self.u8(u8::from(value))
    }
    /// Appends a u32.
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }
    /// Appends a u64.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }
    /// Appends a byte string with its length (u32).
    pub fn bytes(&mut self, value: &[u8]) -> &mut Self {
        let len = u32::try_from(value.len()).expect("a field under 4 GiB");
        self.u32(len);
        self.bytes.extend_from_slice(value);
        self
    }
    /// The message.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

/// Reads fields off a message, refusing anything short or malformed.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }
    fn take(&mut self, len: usize, field: &'static str) -> Result<&'a [u8], WireError> {
        if self.bytes.len() < len {
            return Err(WireError::Short(field));
        }
        let (taken, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(taken)
    }
    /// One byte.
    pub fn u8(&mut self, field: &'static str) -> Result<u8, WireError> {
        Ok(self.take(1, field)?[0])
    }
    /// A flag: 0 or 1, anything else refused.
    pub fn flag(&mut self, field: &'static str) -> Result<bool, WireError> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(WireError::Bad {
                field,
                value: value.into(),
            }),
        }
    }
    /// A u32.
    pub fn u32(&mut self, field: &'static str) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(
            self.take(4, field)?.try_into().expect("4 bytes"),
        ))
    }
    /// A u64.
    pub fn u64(&mut self, field: &'static str) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(
            self.take(8, field)?.try_into().expect("8 bytes"),
        ))
    }
    /// A length-prefixed byte string (never longer than what is left of the message).
    pub fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], WireError> {
        let len = self.u32(field)? as usize;
        self.take(len, field)
    }
    /// A length-prefixed UTF-8 string.
    pub fn string(&mut self, field: &'static str) -> Result<String, WireError> {
        let bytes = self.bytes(field)?;
        String::from_utf8(bytes.to_vec()).map_err(|error| WireError::Bad {
            field,
            value: error.utf8_error().valid_up_to() as u64,
        })
    }
    /// A count of items each at least `min_item_len` bytes long, refused when the rest of the
    /// message cannot hold that many (so a forged count cannot make the reader allocate).
    pub fn count(&mut self, field: &'static str, min_item_len: usize) -> Result<usize, WireError> {
        let count = self.u64(field)?;
        if count > (self.bytes.len() / min_item_len.max(1)) as u64 {
            return Err(WireError::Bad {
                field,
                value: count,
            });
        }
        Ok(count as usize)
    }
    /// Ends the message: nothing may be left.
    pub fn end(self) -> Result<(), WireError> {
        match self.bytes.len() {
            0 => Ok(()),
            left => Err(WireError::Trailing(left)),
        }
    }
}
