//! Who may call what, and the record of what was called: a
//! [`Scope`](crate::ipc::Scope) per sandbox, the
//! [`CallGuard`](crate::ipc::CallGuard) that decides each call, and the
//! [`AuditSink`](crate::ipc::AuditSink) that hears every outcome. The scope
//! is always built (the router checks names against it); the guard and the
//! audit log come with the `ipc` feature.

#[cfg(feature = "ipc")]
pub(crate) mod audit;
#[cfg(feature = "ipc")]
pub(crate) mod audit_caps;
#[cfg(feature = "ipc")]
pub(crate) mod guard;
#[cfg(feature = "ipc")]
pub(crate) mod lease;
#[cfg(feature = "ipc")]
pub(crate) mod limits;
#[cfg(feature = "ipc")]
pub(crate) mod ruling;
pub(crate) mod scope;
#[cfg(feature = "ipc")]
pub(crate) mod scrub;
