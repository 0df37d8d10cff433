//! Who may speak on a node port: the members of one cluster, each holding its [`ClusterKey`].
//!
//! A shared secret with a challenge per connection, not mutual TLS: the members of a cluster
//! are started together by one operator from one file, so there is no certificate authority to
//! run or expire, and no C or assembly code to build (`hmac` and `sha2` are plain Rust). What it
//! gives: only a holder of the key can open a connection (each side proves it holds the key over
//! both sides' fresh nonces, so a recorded handshake cannot be replayed), and every frame after
//! the handshake carries a tag over the cluster, the connection, the direction, its position
//! and its bytes, so nothing can be injected, changed, replayed, reordered or moved to another
//! connection or cluster. What it does not give: secrecy (the bytes travel in clear, as the
//! client protocol's do); docs/limits.md says so.
//!
//! The handshake, each message one frame:
//! 1. caller: `HELLO_MAGIC`, cluster id (u64), caller nonce (32 bytes);
//! 2. listener: `HELLO_MAGIC`, listener nonce, proof(listener);
//! 3. caller: proof(caller);
//!
//! where proof(side) = HMAC-SHA256(secret, side's label | cluster | both nonces). A side checks
//! the other's proof before it sends anything more; a frame after it is the message and
//! HMAC-SHA256(session key, direction | sequence number | message), cut to [`TAG_BYTES`].

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

type HmacSha256 = Hmac<Sha256>;

/// The bytes of a secret, and of a nonce.
const SECRET_BYTES: usize = 32;
/// The bytes of a frame's tag: 128 bits, as TLS's AEAD tags.
pub const TAG_BYTES: usize = 16;
/// The largest handshake frame a listener reads (its messages take 32 to 72 bytes): a
/// connection that has not proved it holds the key cannot make a listener hold more.
pub const MAX_HANDSHAKE_FRAME_BYTES: usize = 128;
/// The first bytes of both handshake messages (no client or RPC frame starts with them).
const HELLO_MAGIC: &[u8; 8] = b"ilv-key1";
/// The largest key file read (it holds about 110 bytes).
const MAX_KEY_FILE_BYTES: u64 = 4096;
/// The first line of a key file.
const KEY_FILE_HEADER: &str = "interleave cluster key v1";

/// The cluster a key belongs to: every handshake names it, every tag covers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterId(pub u64);

impl fmt::Display for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The secret the members of one cluster share, and the cluster's id.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterKey {
    cluster: ClusterId,
    secret: [u8; SECRET_BYTES],
}

impl fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterKey")
            .field("cluster", &self.cluster)
            .field("secret", &"(not shown)")
            .finish()
    }
}

/// Why a key file was refused.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file cannot be read (missing, not a regular file, too large, not text).
    #[error(transparent)]
    Read(#[from] userfiles::ReadError),
    /// The file cannot be written.
    #[error(transparent)]
    Write(#[from] userfiles::WriteError),
    /// Others than its owner may read it: the secret is no longer one.
    #[error("{}: readable by others than its owner (mode {mode:o}); `chmod 600` it", path.display())]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// It is not a key file.
    #[error("{}: not an interleave cluster key ({reason}); `interleave-server --new-cluster-key FILE` writes one", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: &'static str,
    },
    /// No randomness to make a key from.
    #[error("cannot read random bytes for a new key: {0}")]
    Random(io::Error),
}

impl ClusterKey {
    /// A new cluster's key: a random id and a random secret.
    pub fn generate() -> Result<ClusterKey, KeyError> {
        let mut id = [0u8; 8];
        let mut secret = [0u8; SECRET_BYTES];
        random_bytes(&mut id).map_err(KeyError::Random)?;
        random_bytes(&mut secret).map_err(KeyError::Random)?;
        Ok(ClusterKey {
            cluster: ClusterId(u64::from_le_bytes(id)),
            secret,
        })
    }

    /// The cluster it belongs to.
    pub fn cluster(&self) -> ClusterId {
        self.cluster
    }

    /// Writes it to `path`, readable by its owner only.
    pub fn write(&self, path: &Path) -> Result<(), KeyError> {
        let text = format!(
            "{KEY_FILE_HEADER}\ncluster {}\nsecret {}\n",
            self.cluster,
            hex(&self.secret)
        );
        userfiles::write_whole_private(path, text)?;
        Ok(())
    }

    /// Reads the key at `path`, refusing a file others than its owner may read.
    pub fn read(path: &Path) -> Result<ClusterKey, KeyError> {
        let text = userfiles::read_text(path, MAX_KEY_FILE_BYTES)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map_err(|source| userfiles::ReadError::Io {
                    path: path.to_path_buf(),
                    source,
                })?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(KeyError::Exposed {
                    path: path.to_path_buf(),
                    mode: mode & 0o777,
                });
            }
        }
        ClusterKey::parse(&text).map_err(|reason| KeyError::Malformed {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// The key a key file's `text` holds.
    fn parse(text: &str) -> Result<ClusterKey, &'static str> {
        let mut lines = text.lines();
        if lines.next() != Some(KEY_FILE_HEADER) {
            return Err("its first line is not the key header");
        }
        let cluster = lines
            .next()
            .and_then(|line| line.strip_prefix("cluster "))
            .ok_or("no `cluster` line")?;
        let cluster = u64::from_str_radix(cluster, 16)
            .ok()
            .filter(|_| cluster.len() == 16)
            .ok_or("the cluster id is not 16 hex digits")?;
        let secret = lines
            .next()
            .and_then(|line| line.strip_prefix("secret "))
            .ok_or("no `secret` line")?;
        let secret = unhex(secret).ok_or("the secret is not 64 hex digits")?;
        if lines.next().is_some() {
            return Err("lines after the secret");
        }
        Ok(ClusterKey {
            cluster: ClusterId(cluster),
            secret,
        })
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.secret).expect("HMAC takes a key of any length")
    }
}

/// Why a connection was refused during or after its handshake.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The connection failed or ended.
    #[error("the connection failed during the handshake: {0}")]
    Io(#[from] io::Error),
    /// The first frame was not a handshake (an unauthenticated client or peer).
    #[error("no cluster handshake: the peer does not hold this cluster's key")]
    NoHandshake,
    /// The peer's key is another cluster's.
    #[error("a member of cluster {theirs}, not of this cluster {ours}")]
    WrongCluster {
        /// This side's cluster.
        ours: ClusterId,
        /// The peer's.
        theirs: ClusterId,
    },
    /// The peer's proof does not match: it does not hold the key.
    #[error("the peer's proof of the cluster's key is wrong")]
    WrongProof,
    /// A frame's tag does not match: changed, injected, replayed or reordered.
    #[error("frame {sequence}'s tag is wrong: changed, forged or out of order")]
    BadTag {
        /// Its position on the connection.
        sequence: u64,
    },
}

/// One side's label in the proofs and tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Caller,
    Listener,
}

impl Side {
    fn label(self) -> &'static [u8] {
        match self {
            Side::Caller => b"caller",
            Side::Listener => b"listener",
        }
    }
    fn other(self) -> Side {
        match self {
            Side::Caller => Side::Listener,
            Side::Listener => Side::Caller,
        }
    }
}

/// The two nonces of one connection's handshake, and what they and the key derive.
struct Handshake<'a> {
    key: &'a ClusterKey,
    caller_nonce: [u8; SECRET_BYTES],
    listener_nonce: [u8; SECRET_BYTES],
}

impl Handshake<'_> {
    /// HMAC(secret, label | cluster | caller nonce | listener nonce), not yet finished.
    fn mac_over(&self, label: &[u8]) -> HmacSha256 {
        let mut mac = self.key.mac();
        mac.update(label);
        mac.update(&self.key.cluster.0.to_le_bytes());
        mac.update(&self.caller_nonce);
        mac.update(&self.listener_nonce);
        mac
    }

    fn derive(&self, label: &[u8]) -> [u8; 32] {
        self.mac_over(label).finalize().into_bytes().into()
    }

    fn proof(&self, side: Side) -> [u8; 32] {
        self.derive(side.label())
    }

    /// Checks the other side's `proof` in constant time.
    fn check_proof(&self, side: Side, proof: &[u8]) -> Result<(), AuthError> {
        self.mac_over(side.label())
            .verify_slice(proof)
            .map_err(|_| AuthError::WrongProof)
    }

    /// The connection's two halves for `side`.
    fn halves(&self, side: Side) -> (Sealer, Opener) {
        let session = self.derive(b"session");
        (
            Sealer {
                keyed: Some((session, side)),
                sequence: 0,
            },
            Opener {
                keyed: Some((session, side.other())),
                sequence: 0,
            },
        )
    }
}

/// Tags the frames one side sends, in order.
pub struct Sealer {
    keyed: Option<([u8; 32], Side)>,
    sequence: u64,
}

/// Checks and strips the tags of the frames one side receives, in order.
pub struct Opener {
    keyed: Option<([u8; 32], Side)>,
    sequence: u64,
}

/// The tag of frame `sequence` sent by `side` on a session.
fn tag(session: &[u8; 32], side: Side, sequence: u64, message: &[u8]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(session).expect("HMAC takes a key of any length");
    mac.update(side.label());
    mac.update(&sequence.to_le_bytes());
    mac.update(message);
    mac
}

impl Sealer {
    /// For a connection without a key: frames go as they are.
    pub fn plain() -> Sealer {
        Sealer {
            keyed: None,
            sequence: 0,
        }
    }

    /// `message` as it goes on the wire: with its tag after it when keyed.
    pub fn seal(&mut self, mut message: Vec<u8>) -> Vec<u8> {
        if let Some((session, side)) = &self.keyed {
            let plain_len = message.len();
            let tag = tag(session, *side, self.sequence, &message)
                .finalize()
                .into_bytes();
            message.extend_from_slice(&tag[..TAG_BYTES]);
            self.sequence = self
                .sequence
                .checked_add(1)
                .expect("a connection's sequence never wraps");
            assert_eq!(
                message.len(),
                plain_len + TAG_BYTES,
                "a sealed message ends in its tag"
            );
        }
        message
    }
}

impl Opener {
    /// For a connection without a key: frames are taken as they are.
    pub fn plain() -> Opener {
        Opener {
            keyed: None,
            sequence: 0,
        }
    }

    /// The message of a `frame` from the wire, once its tag is checked (when keyed).
    pub fn open(&mut self, mut frame: Vec<u8>) -> Result<Vec<u8>, AuthError> {
        let Some((session, side)) = &self.keyed else {
            return Ok(frame);
        };
        let sequence = self.sequence;
        let Some(split) = frame.len().checked_sub(TAG_BYTES) else {
            return Err(AuthError::BadTag { sequence });
        };
        let received = frame.split_off(split);
        assert_eq!(received.len(), TAG_BYTES, "the tag is split off whole");
        tag(session, *side, sequence, &frame)
            .verify_truncated_left(&received)
            .map_err(|_| AuthError::BadTag { sequence })?;
        self.sequence = sequence
            .checked_add(1)
            .expect("a connection's sequence never wraps");
        Ok(frame)
    }
}

/// Whether a connection's first `frame` begins a handshake (on a port that serves strangers
/// too, a stranger's first request never does: a call id of that value is never used).
pub fn is_hello(frame: &[u8]) -> bool {
    frame.starts_with(HELLO_MAGIC)
}

/// The caller's side of the handshake: `send` writes one frame, `receive` reads one (each
/// within the caller's deadline). Returns the connection's two halves.
pub fn call_handshake(
    key: &ClusterKey,
    send: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    receive: &mut dyn FnMut() -> io::Result<Vec<u8>>,
) -> Result<(Sealer, Opener), AuthError> {
    let mut caller_nonce = [0u8; SECRET_BYTES];
    random_bytes(&mut caller_nonce)?;
    let mut hello = HELLO_MAGIC.to_vec();
    hello.extend_from_slice(&key.cluster.0.to_le_bytes());
    hello.extend_from_slice(&caller_nonce);
    send(&hello)?;
    let challenge = receive()?;
    let rest = challenge
        .strip_prefix(HELLO_MAGIC.as_slice())
        .filter(|rest| rest.len() == 2 * SECRET_BYTES)
        .ok_or(AuthError::NoHandshake)?;
    let (listener_nonce, proof) = rest.split_at(SECRET_BYTES);
    let handshake = Handshake {
        key,
        caller_nonce,
        listener_nonce: listener_nonce
            .try_into()
            .expect("split at the nonce's size"),
    };
    handshake.check_proof(Side::Listener, proof)?;
    send(&handshake.proof(Side::Caller))?;
    Ok(handshake.halves(Side::Caller))
}

/// The listener's side of the handshake, `hello` being the connection's first frame.
pub fn answer_handshake(
    key: &ClusterKey,
    hello: &[u8],
    send: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    receive: &mut dyn FnMut() -> io::Result<Vec<u8>>,
) -> Result<(Sealer, Opener), AuthError> {
    let rest = hello
        .strip_prefix(HELLO_MAGIC.as_slice())
        .filter(|rest| rest.len() == 8 + SECRET_BYTES)
        .ok_or(AuthError::NoHandshake)?;
    let (cluster, caller_nonce) = rest.split_at(8);
    let theirs = ClusterId(u64::from_le_bytes(
        cluster.try_into().expect("split at 8 bytes"),
    ));
    if theirs != key.cluster {
        return Err(AuthError::WrongCluster {
            ours: key.cluster,
            theirs,
        });
    }
    let mut listener_nonce = [0u8; SECRET_BYTES];
    random_bytes(&mut listener_nonce)?;
    let handshake = Handshake {
        key,
        caller_nonce: caller_nonce.try_into().expect("split at the nonce's size"),
        listener_nonce,
    };
    let mut challenge = HELLO_MAGIC.to_vec();
    challenge.extend_from_slice(&listener_nonce);
    challenge.extend_from_slice(&handshake.proof(Side::Listener));
    send(&challenge)?;
    let proof = receive()?;
    handshake.check_proof(Side::Caller, &proof)?;
    Ok(handshake.halves(Side::Listener))
}

/// Fills `bytes` from the kernel's random source.
fn random_bytes(bytes: &mut [u8]) -> io::Result<()> {
    std::fs::File::open("/dev/urandom")?.read_exact(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; SECRET_BYTES]> {
    if text.len() != 2 * SECRET_BYTES || !text.is_ascii() {
        return None;
    }
    let mut bytes = [0u8; SECRET_BYTES];
    for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(bytes)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// What one side's handshake came to.
    type Shaken = Result<(Sealer, Opener), AuthError>;

    /// Runs both sides of a handshake on two threads over channels; `tamper` may change each
    /// frame in flight (`true`: from the caller).
    fn shake(
        caller_key: &ClusterKey,
        listener_key: &ClusterKey,
        tamper: fn(bool, &mut Vec<u8>),
    ) -> (Shaken, Shaken) {
        let (to_listener, from_caller) = mpsc::channel::<Vec<u8>>();
        let (to_caller, from_listener) = mpsc::channel::<Vec<u8>>();
        let listener_key = listener_key.clone();
        let listener = std::thread::spawn(move || {
            let closed = || io::Error::from(io::ErrorKind::UnexpectedEof);
            let hello = from_caller.recv().map_err(|_| closed())?;
            answer_handshake(
                &listener_key,
                &hello,
                &mut |frame| to_caller.send(frame.to_vec()).map_err(|_| closed()),
                &mut || from_caller.recv().map_err(|_| closed()),
            )
        });
        let closed = || io::Error::from(io::ErrorKind::UnexpectedEof);
        let caller = call_handshake(
            caller_key,
            &mut |frame| {
                let mut frame = frame.to_vec();
                tamper(true, &mut frame);
                to_listener.send(frame).map_err(|_| closed())
            },
            &mut || {
                let mut frame = from_listener.recv().map_err(|_| closed())?;
                tamper(false, &mut frame);
                Ok(frame)
            },
        );
        drop(to_listener);
        (caller, listener.join().unwrap())
    }

    #[test]
    fn members_agree_and_every_frame_is_checked_in_order() {
        let key = ClusterKey::generate().unwrap();
        let (caller, listener) = shake(&key, &key, |_, _| {});
        let ((mut caller_sealer, mut caller_opener), (mut listener_sealer, mut listener_opener)) =
            (caller.unwrap(), listener.unwrap());
        let first = caller_sealer.seal(b"vote for me".to_vec());
        let second = caller_sealer.seal(b"append".to_vec());
        assert_eq!(first.len(), 11 + TAG_BYTES);
        assert_eq!(listener_opener.open(first.clone()).unwrap(), b"vote for me");
        // Replayed, or out of order: refused.
        assert!(matches!(
            listener_opener.open(first.clone()),
            Err(AuthError::BadTag { sequence: 1 })
        ));
        assert_eq!(listener_opener.open(second).unwrap(), b"append");
        // A frame the caller sent cannot be reflected back to it as the listener's.
        assert!(caller_opener.open(first).is_err());
        let reply = listener_sealer.seal(b"granted".to_vec());
        let mut flipped = reply.clone();
        flipped[0] ^= 1;
        assert!(caller_opener.clone_for_test().open(flipped).is_err());
        assert_eq!(caller_opener.open(reply).unwrap(), b"granted");
        assert!(
            caller_opener.open(vec![1, 2, 3]).is_err(),
            "shorter than a tag"
        );
    }

    #[test]
    fn another_clusters_key_a_wrong_secret_or_a_changed_handshake_is_refused() {
        let key = ClusterKey::generate().unwrap();
        let other = ClusterKey::generate().unwrap();
        let (_, listener) = shake(&other, &key, |_, _| {});
        assert!(matches!(listener, Err(AuthError::WrongCluster { .. })));
        // The same cluster id, a different secret: each side finds the other's proof wrong.
        let impostor = ClusterKey {
            cluster: key.cluster,
            secret: other.secret,
        };
        let (caller, _) = shake(&impostor, &key, |_, _| {});
        assert!(matches!(caller, Err(AuthError::WrongProof)));
        // A nonce changed in flight.
        let (caller, _) = shake(&key, &key, |from_caller, frame| {
            if !from_caller {
                frame[10] ^= 1;
            }
        });
        assert!(matches!(caller, Err(AuthError::WrongProof)));
        // Not a handshake at all: an RPC frame sent to a keyed port.
        let (to_caller, _) = mpsc::channel();
        let refused = answer_handshake(
            &key,
            &[0; 38],
            &mut |frame| {
                to_caller
                    .send(frame.to_vec())
                    .map_err(|_| io::ErrorKind::Other.into())
            },
            &mut || Ok(Vec::new()),
        );
        assert!(matches!(refused, Err(AuthError::NoHandshake)));
    }

    #[test]
    fn a_key_file_is_private_and_read_back_and_a_bad_one_is_named() {
        let dir = std::env::temp_dir().join(format!("interleave-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cluster.key");
        let key = ClusterKey::generate().unwrap();
        key.write(&path).unwrap();
        assert_eq!(ClusterKey::read(&path).unwrap(), key);
        assert!(
            !format!("{key:?}").contains(&hex(&key.secret)),
            "Debug hides the secret"
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let exposed = ClusterKey::read(&path).unwrap_err().to_string();
        assert!(exposed.contains("chmod 600"), "{exposed}");
        for (text, reason) in [
            ("not a key\n", "first line"),
            (
                "interleave cluster key v1\ncluster 12\nsecret 00\n",
                "16 hex digits",
            ),
            (
                "interleave cluster key v1\ncluster 0123456789abcdef\nsecret zz\n",
                "64 hex digits",
            ),
        ] {
            userfiles::write_whole_private(&path, text).unwrap();
            let refused = ClusterKey::read(&path).unwrap_err().to_string();
            assert!(refused.contains(reason), "{refused}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    impl Opener {
        fn clone_for_test(&self) -> Opener {
            Opener {
                keyed: self.keyed,
                sequence: self.sequence,
            }
        }
    }
}
