//! The one error context of a model, as serde_derive's `Ctxt`: every
//! reader and every check reports into it, so a user sees all the mistakes
//! of one item at once, each spanned on the token at fault.

use std::fmt::Display;

use syn::spanned::Spanned;

/// Where the errors of one item go while it is read and checked.
#[derive(Default)]
pub(super) struct Ctxt {
    errors: darling::error::Accumulator,
}

impl Ctxt {
    /// An empty context.
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// Reports `message` on the tokens of `at`.
    pub fn error(&mut self, at: &impl Spanned, message: impl Display) {
        self.errors
            .push(darling::Error::custom(message).with_span(at));
    }

    /// Reports an error already made.
    pub fn push(&mut self, error: impl Into<darling::Error>) {
        self.errors.push(error.into());
    }

    /// The value, or `None` with its error reported.
    pub fn handle<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        self.errors.handle(result)
    }

    /// Every error reported, if any, else `value`.
    pub fn finish_with<T>(self, value: T) -> darling::Result<T> {
        self.errors.finish_with(value)
    }

    /// Forgets what was reported (when another error says all there is to
    /// say).
    pub fn discard(self) {
        let _ = self.errors.finish();
    }
}

/// Why an item was refused: every error found, and what a placeholder impl
/// beside the errors needs so the user's other code does not fail too.
#[derive(Debug)]
pub struct Rejected<M> {
    /// All errors, each spanned.
    pub error: darling::Error,
    /// The path of the `gangway` crate: `crate = ...` when it could be read,
    /// even if nothing else could, else `::gangway`.
    pub krate: Box<syn::Path>,
    /// The model as far as it could be read, when the item's shape allowed
    /// reading it at all.
    pub partial: Option<Box<M>>,
}

/// `crate = path`, or `::gangway`.
pub(super) fn crate_or_default(krate: Option<&syn::Path>) -> syn::Path {
    krate
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(::gangway))
}

impl Ctxt {
    /// The model, or every error reported beside it.
    pub fn finish_model<M>(self, model: M, krate: &syn::Path) -> Result<M, Rejected<M>> {
        match self.finish_with(()) {
            Ok(()) => Ok(model),
            Err(error) => Err(Rejected {
                error,
                krate: Box::new(krate.clone()),
                partial: Some(Box::new(model)),
            }),
        }
    }
}
