//! The entry points of the models: each reads an item's attributes, resolves
//! its model and checks it, in that order and into one error context
//! (thiserror-impl's `ast` → `attr` → `valid`; the macros crate expands).

use proc_macro2::TokenStream;

use super::attr::CommandOpts;
use super::clap_attr::ToolOpts;
use super::command::CommandModel;
use super::ctxt::{Ctxt, Rejected, crate_or_default};
use super::tool::ToolModel;
use super::valid;

impl CommandModel {
    /// Reads and checks a `#[derive(IpcCommand)]` input; every problem found is
    /// in the returned error, beside as much of the model as could be read.
    pub fn from_derive_input(input: &syn::DeriveInput) -> Result<Self, Rejected<Self>> {
        let mut cx = Ctxt::new();
        let opts = CommandOpts::read(input, &mut cx);
        if let Err(error) = valid::command::check_shape(input) {
            // The shape is the one mistake worth showing; the crate path is
            // still wanted for the placeholder impl.
            cx.discard();
            return Err(Rejected {
                error,
                krate: Box::new(crate_or_default(opts.krate.as_ref())),
                partial: None,
            });
        }
        let model = CommandModel::resolve(&opts);
        valid::command::check(&opts, &model, &mut cx);
        let krate = model.krate.clone();
        cx.finish_model(model, &krate)
    }
}

impl ToolModel {
    /// Reads and checks a `#[tool(args)]` struct; every problem found is in
    /// the returned error, beside the model as far as it could be read.
    pub fn from_item(args: TokenStream, item: &syn::ItemStruct) -> Result<Self, Rejected<Self>> {
        let mut cx = Ctxt::new();
        let opts = ToolOpts::read(args, item, &mut cx);
        let model = ToolModel::resolve(&opts);
        valid::tool::check(&opts, &model, &mut cx);
        let krate = model.krate.clone();
        cx.finish_model(model, &krate)
    }
}
