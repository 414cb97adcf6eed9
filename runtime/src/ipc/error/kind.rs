//! The kinds of failure a call can end in: [`ErrorKind`], one name per kind
//! as it travels on the wire, shared by the router's errors, the server,
//! the clients and the `gangway` CLI.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// What kind of failure a call ended in. On the wire (a
/// `protocol::WireError`'s `kind`) each is a
/// stable snake_case name, [`as_str`](ErrorKind::as_str); a name this
/// version does not know, from a newer host, decodes as
/// [`Other`](ErrorKind::Other) with the name kept.
///
/// Kinds compare by name, and compare with a name as text:
///
/// ```
/// use gangway::ipc::ErrorKind;
///
/// assert_eq!(ErrorKind::InvalidParams.as_str(), "invalid_params");
/// assert_eq!(ErrorKind::from("busy"), ErrorKind::Busy);
/// assert_eq!(ErrorKind::from("quota"), ErrorKind::Other("quota".into()));
/// assert!(ErrorKind::Timeout == "timeout");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No command is registered under the name called (`unknown_method`).
    UnknownMethod,
    /// Shell words that do not fit the command's schema (`usage`).
    Usage,
    /// The request's arguments could not be applied (`invalid_params`).
    InvalidParams,
    /// The handler ran and reported failure (`handler`).
    Handler,
    /// The handler panicked (`panicked`).
    Panicked,
    /// The response could not be encoded (`encode`).
    Encode,
    /// The server's: no hello in time, a first frame over the hello limit,
    /// or a missing or wrong token (`auth`).
    Auth,
    /// The server's or a client's: a frame that is not the protocol (not a
    /// hello, another version, a request id 0, a failure without an error)
    /// (`protocol`).
    Protocol,
    /// The server's: a request over its frame limit (`frame_too_large`).
    FrameTooLarge,
    /// The server's: a response over its frame limit
    /// (`response_too_large`).
    ResponseTooLarge,
    /// The server's: too many connections open (`busy`).
    Busy,
    /// The server's: the call ran past its time limit (`timeout`).
    Timeout,
    /// The server's: the caller cancelled the call (Ctrl-C) and the
    /// handler did not finish within the cancel grace (`cancelled`).
    Cancelled,
    /// The server's: the sandbox may not call the command (outside its
    /// scope, refused by the guard, access expired or revoked) (`denied`).
    Denied,
    /// A kind this version does not know, by its name as sent.
    /// [`From`] and decoding never make one for a name above.
    Other(String),
}

/// Every kind with a name of its own: what a name is looked up in.
const NAMED: [ErrorKind; 14] = [
    ErrorKind::UnknownMethod,
    ErrorKind::Usage,
    ErrorKind::InvalidParams,
    ErrorKind::Handler,
    ErrorKind::Panicked,
    ErrorKind::Encode,
    ErrorKind::Auth,
    ErrorKind::Protocol,
    ErrorKind::FrameTooLarge,
    ErrorKind::ResponseTooLarge,
    ErrorKind::Busy,
    ErrorKind::Timeout,
    ErrorKind::Cancelled,
    ErrorKind::Denied,
];

impl ErrorKind {
    /// The name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorKind::UnknownMethod => "unknown_method",
            ErrorKind::Usage => "usage",
            ErrorKind::InvalidParams => "invalid_params",
            ErrorKind::Handler => "handler",
            ErrorKind::Panicked => "panicked",
            ErrorKind::Encode => "encode",
            ErrorKind::Auth => "auth",
            ErrorKind::Protocol => "protocol",
            ErrorKind::FrameTooLarge => "frame_too_large",
            ErrorKind::ResponseTooLarge => "response_too_large",
            ErrorKind::Busy => "busy",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Denied => "denied",
            ErrorKind::Other(name) => name,
        }
    }

    /// The kind of this name, if it has a variant of its own.
    fn named(name: &str) -> Option<ErrorKind> {
        NAMED.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl From<&str> for ErrorKind {
    fn from(name: &str) -> Self {
        ErrorKind::named(name).unwrap_or_else(|| ErrorKind::Other(name.to_owned()))
    }
}

impl From<String> for ErrorKind {
    fn from(name: String) -> Self {
        ErrorKind::named(&name).unwrap_or(ErrorKind::Other(name))
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for ErrorKind {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ErrorKind {}

impl std::hash::Hash for ErrorKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for ErrorKind {
    fn eq(&self, name: &str) -> bool {
        self.as_str() == name
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

// By hand rather than derived: `#[serde(other)]` would lose an unknown
// kind's name. Either way the wire carries the name as a string.
impl Serialize for ErrorKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Takes what a `String` takes, UTF-8 bytes included.
        struct Name;

        impl Visitor<'_> for Name {
            type Value = ErrorKind;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an error kind's name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<ErrorKind, E> {
                Ok(ErrorKind::from(name))
            }

            fn visit_string<E: de::Error>(self, name: String) -> Result<ErrorKind, E> {
                Ok(ErrorKind::from(name))
            }

            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<ErrorKind, E> {
                match std::str::from_utf8(bytes) {
                    Ok(name) => Ok(ErrorKind::from(name)),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(bytes), &self)),
                }
            }

            fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<ErrorKind, E> {
                match String::from_utf8(bytes) {
                    Ok(name) => Ok(ErrorKind::from(name)),
                    Err(error) => Err(E::invalid_value(
                        de::Unexpected::Bytes(error.as_bytes()),
                        &self,
                    )),
                }
            }
        }

        deserializer.deserialize_string(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_kind_travels_as_its_name_and_back() {
        for kind in NAMED {
            let body = rmp_serde::to_vec(&kind).unwrap();
            assert_eq!(body, rmp_serde::to_vec(kind.as_str()).unwrap());
            let back: ErrorKind = rmp_serde::from_slice(&body).unwrap();
            assert!(!matches!(back, ErrorKind::Other(_)), "{kind}");
            assert_eq!(back, kind);
        }
        let names: std::collections::HashSet<_> = NAMED.iter().map(ErrorKind::as_str).collect();
        assert_eq!(names.len(), NAMED.len(), "two kinds share a name");
    }

    #[test]
    fn an_unknown_kind_keeps_its_name() {
        let body = rmp_serde::to_vec("quota_exceeded").unwrap();
        let kind: ErrorKind = rmp_serde::from_slice(&body).unwrap();
        assert_eq!(kind, ErrorKind::Other("quota_exceeded".to_owned()));
        assert_eq!(rmp_serde::to_vec(&kind).unwrap(), body);
        assert_eq!(ErrorKind::Other("busy".to_owned()), ErrorKind::Busy);
    }
}
