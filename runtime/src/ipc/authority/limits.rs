//! The lengths the audit trail is built around, in one place that imports
//! nothing: what a record keeps of a call's name and of each argument
//! string, and the longest token a server takes (what text cut before the
//! token scrub must keep past those, so a pasted token is whole when it is
//! searched for).

/// The most bytes of a command's name an audit record keeps.
pub(crate) const COMMAND: usize = 256;

/// The most bytes of one string among the arguments a record keeps.
pub(crate) const ARGUMENT_TEXT: usize = 200;

/// The longest token a server takes (the hello carrying it must stay
/// small).
pub(crate) const MAX_TOKEN_LEN: usize = 1024;
