//! The state file's frame: a magic number, a format version, the body's length, the body (the
//! node's encoded state) and a CRC32C of everything before it. The node's own encoding carries
//! its own checksum; the frame's is a standard one that tools outside Interleave can check, and
//! it covers the header too.

/// First bytes of every state file.
const MAGIC: &[u8; 4] = b"ILVF";
/// The frame's format version.
const VERSION: u8 = 1;
/// Magic, version and the body's length (u64, little-endian).
const HEADER_LEN: usize = 4 + 1 + 8;
/// The CRC32C after the body (u32, little-endian).
const CRC_LEN: usize = 4;

/// The largest body a state file may hold (16 GiB): a corrupt length cannot ask for more.
pub const MAX_STATE_BYTES: u64 = 16 << 30;

/// The file's bytes for `body`.
pub fn encode_state_file(body: &[u8]) -> Vec<u8> {
    assert!(
        body.len() as u64 <= MAX_STATE_BYTES,
        "a state of {} bytes is over the limit",
        body.len()
    );
    let mut file = Vec::with_capacity(HEADER_LEN + body.len() + CRC_LEN);
    file.extend_from_slice(MAGIC);
    file.push(VERSION);
    file.extend_from_slice(&(body.len() as u64).to_le_bytes());
    file.extend_from_slice(body);
    let crc = crc32c::crc32c(&file);
    file.extend_from_slice(&crc.to_le_bytes());
    file
}

/// What is wrong with a state file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateFileError {
    /// Shorter than a frame with an empty body.
    #[error("truncated: {len} bytes, shorter than any state file ({})", HEADER_LEN + CRC_LEN)]
    ShorterThanAFrame {
        /// Its length.
        len: usize,
    },
    /// Another kind of file.
    #[error("not an Interleave state file (bad magic number)")]
    BadMagic,
    /// A format this build does not read.
    #[error("written in format version {0}, this build reads version {VERSION}")]
    UnknownVersion(u8),
    /// A body length over [`MAX_STATE_BYTES`].
    #[error("the header gives a body of {len} bytes, over the {MAX_STATE_BYTES}-byte limit")]
    TooLong {
        /// The length the header gives.
        len: u64,
    },
    /// Shorter than its header promises.
    #[error("truncated: {actual} bytes, the header promises {expected}")]
    Truncated {
        /// Its length.
        actual: u64,
        /// The length its header gives.
        expected: u64,
    },
    /// Bytes after the end its header gives.
    #[error("{0} bytes after the end the header gives")]
    TrailingBytes(u64),
    /// The checksum does not match.
    #[error("checksum mismatch: stored {stored:08x}, computed {computed:08x}")]
    ChecksumMismatch {
        /// The checksum in the file.
        stored: u32,
        /// The checksum of its bytes.
        computed: u32,
    },
}

/// The body of a state file, or what is wrong with it: too short, not a state file, an unknown
/// version, truncated, with bytes after its end, or failing its checksum.
pub fn decode_state_file(file: &[u8]) -> Result<&[u8], StateFileError> {
    if file.len() < HEADER_LEN + CRC_LEN {
        return Err(StateFileError::ShorterThanAFrame { len: file.len() });
    }
    if &file[..4] != MAGIC {
        return Err(StateFileError::BadMagic);
    }
    if file[4] != VERSION {
        return Err(StateFileError::UnknownVersion(file[4]));
    }
    let body_len = u64::from_le_bytes(file[5..HEADER_LEN].try_into().expect("8 bytes"));
    if body_len > MAX_STATE_BYTES {
        return Err(StateFileError::TooLong { len: body_len });
    }
    let expected = HEADER_LEN as u64 + body_len + CRC_LEN as u64;
    let actual = file.len() as u64;
    if actual < expected {
        return Err(StateFileError::Truncated { actual, expected });
    }
    if actual > expected {
        return Err(StateFileError::TrailingBytes(actual - expected));
    }
    let (framed, stored) = file.split_at(file.len() - CRC_LEN);
    let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
    let computed = crc32c::crc32c(framed);
    if stored != computed {
        return Err(StateFileError::ChecksumMismatch { stored, computed });
    }
    let body = &framed[HEADER_LEN..];
    assert_eq!(
        body.len() as u64,
        body_len,
        "the body is the length the header gives"
    );
    Ok(body)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_body_comes_back_unchanged() {
        for body in [&b""[..], b"x", &[7u8; 1000]] {
            assert_eq!(decode_state_file(&encode_state_file(body)), Ok(body));
        }
    }

    #[test]
    fn the_frame_of_a_known_body_is_pinned() {
        // CRC32C's check value: crc32c("123456789") = e3069283 (RFC 3720, B.4).
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        let file = encode_state_file(b"abc");
        assert_eq!(&file[..13], b"ILVF\x01\x03\0\0\0\0\0\0\0");
        assert_eq!(&file[13..16], b"abc");
        assert_eq!(
            u32::from_le_bytes(file[16..].try_into().unwrap()),
            crc32c::crc32c(&file[..16])
        );
    }

    #[test]
    fn every_truncation_is_refused() {
        let file = encode_state_file(b"some state of a node");
        realtools::fuzz_seed("state_file", "opaque-body", &file);
        for len in 0..file.len() {
            let error = decode_state_file(&file[..len]).expect_err("a truncated file");
            assert!(
                error.to_string().contains("truncated"),
                "{len} bytes: {error}"
            );
        }
    }

    #[test]
    fn every_flipped_bit_is_refused() {
        let file = encode_state_file(b"some state of a node");
        for bit in 0..file.len() * 8 {
            let mut damaged = file.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            assert!(
                decode_state_file(&damaged).is_err(),
                "bit {bit} flipped was accepted"
            );
        }
    }

    #[test]
    fn bytes_after_the_end_and_foreign_files_are_refused() {
        let mut file = encode_state_file(b"state");
        file.push(0);
        assert_eq!(
            decode_state_file(&file),
            Err(StateFileError::TrailingBytes(1))
        );
        let error = decode_state_file(b"{\"not\": \"a state file\"}").unwrap_err();
        assert!(error.to_string().contains("bad magic"), "{error}");
        let mut future = encode_state_file(b"state");
        future[4] = 9;
        assert_eq!(
            decode_state_file(&future),
            Err(StateFileError::UnknownVersion(9))
        );
        let mut huge = encode_state_file(b"");
        huge[5..13].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_state_file(&huge)
            .unwrap_err()
            .to_string()
            .contains("limit"));
    }
}
