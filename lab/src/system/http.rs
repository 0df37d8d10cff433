//! Just enough HTTP/1.1 to post JSON to etcd's gateway over one kept-alive connection: a
//! request with its length, a response with a length or in chunks, every read bounded by the
//! caller's deadline and the response by [`MAX_RESPONSE_BYTES`].

use server::real_time::now;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The largest response read (the workload's values are short).
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// Why a post failed.
#[derive(Debug)]
pub(super) enum HttpError {
    /// No connection could be made: nothing was sent.
    NotSent,
    /// The request may have been sent and acted on: its outcome is unknown.
    Unknown,
}

/// One server's address and, once made, a connection to it.
pub(super) struct HttpConnection {
    address: SocketAddr,
    stream: Option<BufReader<TcpStream>>,
}

impl HttpConnection {
    /// A connection to `address`, made at the first post.
    pub(super) fn new(address: SocketAddr) -> HttpConnection {
        HttpConnection {
            address,
            stream: None,
        }
    }

    /// Posts `body` (JSON) to `path`; the status and the response's body. Any failure drops
    /// the connection, so the next post starts on a new one.
    pub(super) fn post(
        &mut self,
        path: &str,
        body: &str,
        deadline: Instant,
    ) -> Result<(u16, String), HttpError> {
        let result = self.try_post(path, body, deadline);
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    fn try_post(
        &mut self,
        path: &str,
        body: &str,
        deadline: Instant,
    ) -> Result<(u16, String), HttpError> {
        let left = || {
            let left = deadline.saturating_duration_since(now());
            (!left.is_zero()).then_some(left)
        };
        if self.stream.is_none() {
            let timeout = left().ok_or(HttpError::NotSent)?;
            let stream = TcpStream::connect_timeout(&self.address, timeout)
                .map_err(|_| HttpError::NotSent)?;
            stream.set_nodelay(true).map_err(|_| HttpError::NotSent)?;
            self.stream = Some(BufReader::new(stream));
        }
        let reader = self.stream.as_mut().expect("connected");
        let unknown = |_: io::Error| HttpError::Unknown;
        let set_timeout = |reader: &mut BufReader<TcpStream>| -> Result<(), HttpError> {
            let left: Duration = left().ok_or(HttpError::Unknown)?;
            reader
                .get_ref()
                .set_read_timeout(Some(left))
                .map_err(unknown)?;
            reader
                .get_ref()
                .set_write_timeout(Some(left))
                .map_err(unknown)
        };
        set_timeout(reader)?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            self.address,
            body.len()
        );
        reader
            .get_mut()
            .write_all(request.as_bytes())
            .map_err(unknown)?;
        set_timeout(reader)?;
        read_response(reader).map_err(unknown)
    }
}

/// Reads one response: its status and body.
fn read_response(reader: &mut impl BufRead) -> io::Result<(u16, String)> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let status_line = read_line(reader)?;
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| bad("no status in the response"))?;
    let mut length = None;
    let mut chunked = false;
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| bad("a bad header"))?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "content-length" {
            length = Some(value.parse::<usize>().map_err(|_| bad("a bad length"))?);
        } else if name == "transfer-encoding" && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let size_line = read_line(reader)?;
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| bad("a bad chunk size"))?;
            if size == 0 {
                read_line(reader)?;
                break;
            }
            read_body(reader, size, &mut body)?;
            read_line(reader)?;
        }
    } else {
        let length = length.ok_or_else(|| bad("a response with neither length nor chunks"))?;
        read_body(reader, length, &mut body)?;
    }
    String::from_utf8(body)
        .map(|body| (status, body))
        .map_err(|_| bad("a body that is not UTF-8"))
}

fn read_body(reader: &mut impl BufRead, size: usize, body: &mut Vec<u8>) -> io::Result<()> {
    if body.len() + size > MAX_RESPONSE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a response over 1 MiB",
        ));
    }
    let start = body.len();
    body.resize(start + size, 0);
    reader.read_exact(&mut body[start..])
}

/// One line without its CRLF; a closed connection is an error.
fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    let mut limited = reader.take(8 * 1024);
    if limited.read_line(&mut line)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    if !line.ends_with('\n') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a line over 8 KiB",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn parse(text: &str) -> io::Result<(u16, String)> {
        read_response(&mut text.as_bytes())
    }

    #[test]
    fn reads_a_body_by_its_length_or_in_chunks() {
        let plain = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
        assert_eq!(parse(plain).unwrap(), (200, "{\"a\":1}".to_string()));
        let chunked = "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap(), (503, "abcde".to_string()));
    }

    #[test]
    fn refuses_what_is_not_a_whole_response() {
        assert!(parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort").is_err());
        assert!(parse("HTTP/1.1 200 OK\r\n\r\n").is_err());
        assert!(parse("garbage\r\n\r\n").is_err());
        assert!(parse("HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n").is_err());
        assert!(parse("").is_err());
    }
}
