//! Frames on a byte stream: a u32 length (little-endian), then that many bytes. A frame over
//! [`MAX_FRAME_BYTES`] is refused before anything is allocated for it.

use super::WireError;
use std::io::{self, Read, Write};

/// The largest frame either side accepts (64 MiB): an AppendEntries batch is far below it.
pub const MAX_FRAME_BYTES: usize = 64 << 20;

/// Writes `payload` as one frame (the caller flushes).
pub fn write_frame(stream: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    assert!(
        payload.len() <= MAX_FRAME_BYTES,
        "a frame of {} bytes is over the limit",
        payload.len()
    );
    stream.write_all(&(payload.len() as u32).to_le_bytes())?;
    stream.write_all(payload)
}

/// Reads one frame; `Ok(None)` when the stream ended cleanly between frames.
pub fn read_frame(stream: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match stream.read_exact(&mut len) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            WireError::TooLarge(len as u64),
        ));
    }
    let mut payload = vec![0; len];
    stream.read_exact(&mut payload)?;
    Ok(Some(payload))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_in_order_and_a_clean_end_is_none() {
        let mut stream = Vec::new();
        write_frame(&mut stream, b"one").unwrap();
        write_frame(&mut stream, b"").unwrap();
        let mut reader = stream.as_slice();
        assert_eq!(
            read_frame(&mut reader).unwrap().as_deref(),
            Some(&b"one"[..])
        );
        assert_eq!(read_frame(&mut reader).unwrap().as_deref(), Some(&b""[..]));
        assert_eq!(read_frame(&mut reader).unwrap(), None);
    }

    #[test]
    fn a_cut_frame_is_an_error_and_a_huge_one_is_refused_unread() {
        let mut stream = Vec::new();
        write_frame(&mut stream, b"a whole frame").unwrap();
        stream.truncate(stream.len() - 1);
        assert!(read_frame(&mut stream.as_slice()).is_err());
        let huge = (MAX_FRAME_BYTES as u32 + 1).to_le_bytes();
        let error = read_frame(&mut &huge[..]).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("over the limit"), "{error}");
    }
}
