//! What every clone of a [`Policy`](super::Policy) shares: the rules in
//! force (swapped whole when the file is read again), the host's commands
//! they were checked against, the answers given for sessions, and why the
//! last reading of the file failed.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use super::always::{self, Answered};
use super::error::PolicyError;
use super::pin::{Covered, Pinned};
use super::rules::{RuleSet, read_rules_text, stamp};
use super::session::Sessions;
use crate::sync::LockUnpoisoned;
use crate::tool::Manifest;

/// A policy's shared state.
pub(crate) struct State {
    rules: RwLock<Arc<RuleSet>>,
    /// The rules file, when the rules came from one.
    pub(crate) path: Option<PathBuf>,
    /// The commands the rules were checked against, which every reading
    /// of the file is checked against too.
    manifest: Mutex<Option<Arc<Manifest>>>,
    pub(crate) sessions: Sessions,
    last_error: Mutex<Option<Arc<PolicyError>>>,
    /// Held while the file is read or written, so that an "always" rule
    /// and a reload do not cross.
    edits: Mutex<()>,
}

impl State {
    pub(crate) fn new(rules: RuleSet, path: Option<PathBuf>) -> Self {
        State {
            rules: RwLock::new(Arc::new(rules)),
            path,
            manifest: Mutex::default(),
            sessions: Sessions::default(),
            last_error: Mutex::default(),
            edits: Mutex::default(),
        }
    }

    /// The rules in force.
    pub(crate) fn rules(&self) -> Arc<RuleSet> {
        self.rules
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn swap(&self, rules: RuleSet) {
        *self
            .rules
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(rules);
        *self.last_error.lock_unpoisoned() = None;
    }

    /// Checks the rules in force against `manifest`, and every later
    /// reading of the file too.
    pub(crate) fn check_against(&self, manifest: &Manifest) -> Result<(), PolicyError> {
        self.rules().check_against(manifest)?;
        *self.manifest.lock_unpoisoned() = Some(Arc::new(manifest.clone()));
        Ok(())
    }

    /// Why the last reading of the file failed, while the rules before it
    /// stay in force; `None` once a reading succeeds.
    pub(crate) fn last_error(&self) -> Option<Arc<PolicyError>> {
        self.last_error.lock_unpoisoned().clone()
    }

    /// Reads the file again: its rules replace those in force when they
    /// load (and pass the manifest's check); otherwise those in force stay,
    /// and the error is kept and logged.
    pub(crate) fn reload(&self) -> Result<(), Arc<PolicyError>> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let _editing = self.edits.lock_unpoisoned();
        let loaded = RuleSet::load(path).and_then(|rules| {
            if let Some(manifest) = self.manifest.lock_unpoisoned().clone() {
                rules.check_against(&manifest)?;
            }
            Ok(rules)
        });
        match loaded {
            Ok(rules) => {
                tracing::info!(target: "gangway::policy", file = %path.display(), "rules reloaded");
                self.swap(rules);
                Ok(())
            }
            Err(error) => {
                tracing::warn!(
                    target: "gangway::policy",
                    file = %path.display(),
                    "the rules file did not load, so the rules before it stay in force: {error}"
                );
                let error = Arc::new(error);
                *self.last_error.lock_unpoisoned() = Some(error.clone());
                Err(error)
            }
        }
    }

    /// Adds an allow rule for what `covered` holds to the rules (and their
    /// file, replaced in one step), which then take force. `Err` says why
    /// it could not be; the rules in force stay then.
    pub(crate) fn add_always(&self, covered: &Covered, answered: &Answered) -> Result<(), String> {
        let _editing = self.edits.lock_unpoisoned();
        let in_force = self.rules();
        let manifest = self.manifest.lock_unpoisoned().clone();
        let params = manifest
            .as_deref()
            .map(|manifest| command_params(manifest, &covered.command));
        let mut covered = covered.clone();
        if covered.asked_by.is_empty() {
            // The default asked about the whole call: what it did not give
            // must stay not given, which only the command's schema can name.
            let Some(params) = &params else {
                return Err(
                    "the default asked, and without the host's commands (check_against) the arguments \
                     the call did not give cannot be held absent"
                        .to_owned(),
                );
            };
            // Secrets are left free, given or not: no rule may test one.
            for (name, _) in params.iter().filter(|(_, secret)| !secret) {
                covered.args.entry(name.clone()).or_insert(Pinned::Absent);
            }
        }
        let is_secret = |name: &str| {
            params.as_ref().is_some_and(|params| {
                params
                    .iter()
                    .any(|(param, secret)| param == name && *secret)
            })
        };
        // The file as it is now, which a person may have edited since it
        // was last read.
        let before = self.path.as_deref().map(stamp);
        // The file as the rules in force were read from it: a person's edit
        // since (perhaps half saved) is the watcher's to read, not this
        // rule's to carry in.
        if self.path.is_some() && before != Some(in_force.stamp) {
            return Err("the rules file changed since it was read".to_owned());
        }
        let base = match &self.path {
            Some(path) => read_rules_text(path).map_err(|error| error.to_string())?,
            None => in_force.text.clone(),
        };
        let text = always::with_rule_added(&base, &covered, answered, &is_secret)?;
        let mut rules = RuleSet::parse(text, in_force.source.clone()).map_err(|error| {
            format!("the rules file, with the rule added, does not load: {error}")
        })?;
        if let Some(manifest) = &manifest {
            rules
                .check_against(manifest)
                .map_err(|error| format!("the rule added does not fit the commands: {error}"))?;
        }
        if let Some(path) = &self.path {
            if before != Some(stamp(path)) {
                return Err(format!(
                    "{} changed while the rule was added",
                    path.display()
                ));
            }
            always::replace_file(path, &rules.text)
                .map_err(|error| format!("{} could not be written: {error}", path.display()))?;
            rules.stamp = stamp(path);
        }
        self.swap(rules);
        Ok(())
    }
}

/// The parameters of `command` in `manifest`: each wire name, and whether
/// it is a secret.
fn command_params(manifest: &Manifest, command: &str) -> Vec<(String, bool)> {
    manifest
        .commands
        .iter()
        .filter(|schema| schema.name == command)
        .flat_map(|schema| schema.params.iter())
        .map(|param| (param.name.to_string(), param.secret))
        .collect()
}
