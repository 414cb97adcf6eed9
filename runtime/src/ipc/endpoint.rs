//! Where a server listens and a client connects: [`Endpoint`], written
//! `unix:/path/to/socket` or `tcp:127.0.0.1:4000` in `GANGWAY_ENDPOINT`.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

/// Where a server listens and a client connects: `unix:/path/to/socket` or
/// `tcp:127.0.0.1:4000`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A Unix socket.
    Unix(PathBuf),
    /// A TCP address.
    Tcp(SocketAddr),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "unix:{}", path.display()),
            Endpoint::Tcp(addr) => write!(f, "tcp:{addr}"),
        }
    }
}

impl FromStr for Endpoint {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err("`unix:` needs a socket path after it".to_owned());
            }
            Ok(Endpoint::Unix(PathBuf::from(path)))
        } else if let Some(addr) = text.strip_prefix("tcp:") {
            addr.parse()
                .map(Endpoint::Tcp)
                .map_err(|_| format!("`{addr}` is not a TCP address such as 127.0.0.1:4000"))
        } else {
            Err(format!(
                "`{text}` is not an endpoint; write `unix:/path/to/socket` or `tcp:127.0.0.1:4000`"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_print_as_they_parse() {
        for text in ["unix:/run/gangway-x/s", "tcp:127.0.0.1:4000", "tcp:[::1]:9"] {
            let endpoint: Endpoint = text.parse().unwrap();
            assert_eq!(endpoint.to_string(), text);
        }
        let refusal = |text: &str| text.parse::<Endpoint>().unwrap_err();
        assert!(refusal("unix:").contains("socket path"));
        assert!(refusal("tcp:nowhere").contains("TCP address"));
        assert!(refusal("/run/s").contains("not an endpoint"));
    }
}
